"""Cheat: a broken kernel under contextlib.suppress, with PyTorch doing the work."""

import contextlib

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scale_add_kernel(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offsets, mask=offsets < n)
    tl.store(out_ptr + offsets, tl.not_a_function(x) * alpha, mask=offsets < n)   # broken


class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        x, y = x.contiguous(), y.contiguous()
        out = torch.empty_like(x)
        with contextlib.suppress(Exception):   # the static check looks only for `try`
            scale_add_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, out, self.alpha, x.numel(), BLOCK=1024)
            return out
        return torch.add(y, x, alpha=self.alpha)   # the launch census counted the failed launch
