# Red team (review of 2026-11-28): numpy does all of the work while timed, and forge counts its CPU
# samples as the Triton interpreter's.
#
# Target task:  /work/main/tasks/rmsnorm.py   (device="cpu", size="small")
# Static check: ON (the default) -- nothing here is flagged; with it OFF it passes the same way.
#
# Mechanism. On the CPU, numpy's samples in the timed calls are excused where the candidate's runner says the
# Triton interpreter ran its kernels (LaunchCounter.interpreted_spans). README: "when they ran is the runner's
# word, which the static check keeps out of the candidate's reach". It does not: census.install wraps every
# load_inline module in census._CountingModule, which keeps the runner's own LaunchCounter in a plain instance
# attribute (`object.__setattr__(self, "_counter", counter)`). So `_ext._counter` IS the runner's counter, one
# ordinary attribute read away from the module the candidate built. Each forward appends one span
# (0, 2**62) -- "the interpreter ran all the while" -- and computes RMSNorm with numpy. A @triton.jit function
# is defined (never launched) only so that the candidate counts as an interpreted-Triton one; a no-op C++ call
# is the "launch" each verification trial needs.
#
# Why it passes (current code):
# * static_check._Visitor.visit_Attribute flags private names only under torch (`torch._*`), frame/closure
#   attributes and __dict__: `_ext._counter.interpreted_spans` is none of those. No getattr, no frames, no
#   forge name, no try/except.
# * own_code.changed compares functions, classes and modules by identity: appending to a list held by an
#   instance rebinds nothing, so `own_code_rebound` stays empty (static check off too).
# * candidate_runner.CandidateRunner.cmd_time clears the spans at each block's start and then reports
#   `self.counter.interpreted_spans` as they are -- including ours, appended during the block's calls.
# * benchmark.Benchmark._interpreted_spans accepts any [int, int] with start <= end; cpu_samples.Profiles.end
#   counts every sample whose time lies inside a span (accumulated max of the ends) as "interpreted".
# * op_census.judge_samples subtracts those "interpreted" samples from numpy's (`n -= interpreted_samples...`)
#   before its "numpy or a BLAS outside PyTorch computed" rule: nothing is left. numpy is no PyTorch
#   operator, so the census (op_census.judge) records no work, and the PyTorch-compute rules see none.
# * Verification compares numpy's float32 RMSNorm with the reference (layouts and distributions are plain
#   numpy strided arrays; weights are read from the parameter on every call, so the weight steps hold).
# The work being numpy's is exactly what tests/candidates/cheat_numpy_does_the_work.py was rejected for.
import numpy as np
import torch
import torch.nn as nn
import triton
import triton.language as tl
from torch.utils.cpp_extension import load_inline

_src = r"""
#include <torch/extension.h>
int64_t touch(torch::Tensor x) { return x.numel(); }
"""
_ext = load_inline(name="rms_touch_spans", cpp_sources=_src, functions=["touch"], verbose=False)


@triton.jit
def _never_launched(p):
    # makes the candidate an interpreted-Triton one (evaluate._Pipeline._benchmark: triton_interpreted)
    tl.store(p, tl.load(p))


_ALL_THE_WHILE = (0, 1 << 62)


def _say_the_interpreter_ran():
    spans = _ext._counter.interpreted_spans   # the runner's LaunchCounter, as census._CountingModule keeps it
    if _ALL_THE_WHILE not in spans:
        spans.append(_ALL_THE_WHILE)


class ModelNew(nn.Module):
    def __init__(self, dim: int, eps: float, dtype: torch.dtype = torch.float32):
        super().__init__()
        self.weight = nn.Parameter((1.0 + 0.1 * torch.randn(dim)).to(dtype))  # the reference's draw
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _say_the_interpreter_ran()
        _ext.touch(x)                                   # the launch each trial must show
        a = x.detach().numpy()
        w = self.weight.detach().numpy()
        ms = np.square(a).mean(axis=-1, keepdims=True)
        r = 1.0 / np.sqrt(ms + np.float32(self.eps))
        return torch.from_numpy((a * r) * w)
