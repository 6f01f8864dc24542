"""Cheat: looks for the expected output in its process (gc walk) or in freed memory (torch.empty)."""

import gc

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


def launch(x, y, alpha):
    x, y = x.contiguous(), y.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    scale_add_kernel[(triton.cdiv(n, 1024),)](x, y, out, alpha, n, BLOCK=1024)
    return out

class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        launch(x[:8], y[:8], self.alpha)
        for obj in gc.get_objects():
            if type(obj) is torch.Tensor and obj.shape == x.shape and obj is not x and obj is not y:
                return obj.clone()
        return torch.empty_like(x)
