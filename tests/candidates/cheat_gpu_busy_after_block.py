"""Cheat (GPU): after each timed block of its own it leaves a long kernel running, so that the *reference*
is timed on a busy GPU (stopping its process does not stop work already queued on the device).
FORGE_TEST_SPIN_ITERATIONS sets how long the kernel spins."""

import os
import sys

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scale_add_kernel(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x * alpha + y, mask=mask)


@triton.jit
def spin_kernel(p, iterations):
    acc = tl.load(p)
    for _ in range(iterations):
        acc = acc * 1.000001 + 1e-7
    tl.store(p, acc)


_spin_target = None
_R = sys.modules["forge_sandbox.candidate_runner"].CandidateRunner
_orig_time = _R.cmd_time


def _time(self, msg):
    global _spin_target
    reply = _orig_time(self, msg)
    if _spin_target is None:
        _spin_target = torch.zeros(1, device="cuda")
    spin_kernel[(132,)](_spin_target, int(os.environ.get("FORGE_TEST_SPIN_ITERATIONS", "200000000")))  # not waited for
    return reply


_R.cmd_time = _time


class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        x, y = x.contiguous(), y.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        scale_add_kernel[(triton.cdiv(n, 1024),)](x, y, out, self.alpha, n, BLOCK=1024)
        return out
