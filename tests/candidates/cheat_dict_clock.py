"""Cheat: slows every clock the evaluator might read, through modules' namespace dictionaries, so that
the replaced object is the one both names hold and an identity check sees nothing (red team, 2026-11)."""

import sys
import time

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


_real = time.perf_counter
_start = _real()


def slow_clock():
    return _start + (_real() - _start) * 0.05  # time passes at 5% of its real rate


for _module in list(sys.modules.values()):
    _namespace = vars(_module) if hasattr(_module, "__dict__") else {}
    for _name in ("perf_counter", "_perf_counter"):
        if _namespace.get(_name) is _real:
            _namespace[_name] = slow_clock


class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        x, y = x.contiguous(), y.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        for _ in range(8):  # real work, reported at 5% of its time
            scale_add_kernel[(triton.cdiv(n, 1024),)](x, y, out, self.alpha, n, BLOCK=1024)
        return out
