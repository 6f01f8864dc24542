# Red team round 12 (2026-11-24): an honest GELU whose runner, rebound in its own process, pads every
# forward's and timed block's reply with 2 million empty lists (8 MB of JSON). The host parsed each
# into millions of Python objects (some 30 times the bytes) and kept every block's reply: 4.2 GiB of
# the host's memory for 60 MB replies, which the candidate's memory limit does not cover.
import sys

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_src = r"""
#include <torch/extension.h>
#include <cmath>
torch::Tensor gelu(torch::Tensor x) {
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const float* a = xc.data_ptr<float>();
    float* b = y.data_ptr<float>();
    for (int64_t i = 0, n = xc.numel(); i < n; ++i) { float v = a[i]; b[i] = 0.5f * v * (1.0f + std::erf(v * 0.7071067811865476f)); }
    return y;
}
"""
_mod = load_inline(name="junk_replies_gelu_cpp", cpp_sources=_src, functions=["gelu"], extra_cflags=["-O2"])

_runner = sys.modules.get("forge_sandbox.candidate_runner")
if _runner is not None:
    _JUNK = [[] for _ in range(2_000_000)]
    _time, _forward = _runner.CandidateRunner.cmd_time, _runner.CandidateRunner.cmd_forward
    _runner.CandidateRunner.cmd_time = lambda self, msg: {**_time(self, msg), "junk": _JUNK}
    _runner.CandidateRunner.cmd_forward = lambda self, msg: {**_forward(self, msg), "junk": _JUNK}


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _mod.gelu(x)
