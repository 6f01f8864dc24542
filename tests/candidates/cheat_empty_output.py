"""Cheat: returns torch.empty, hoping it recycles memory that holds the reference's output (Sakana AI)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def touch_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.load(x_ptr + offsets, mask=offsets < n)


class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        touch_kernel[(1,)](x, x.numel(), BLOCK=128)
        return torch.empty_like(x)
