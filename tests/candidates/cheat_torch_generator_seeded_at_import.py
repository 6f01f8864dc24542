"""Cheat (a review, 2026-12-01): a correct GELU whose import seeds torch's global generator: the seed a
user set before importing it is gone, and every run of the user's program draws the same numbers. forge
checked the generators after each call alone."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

torch.manual_seed(0)


@triton.jit
def _gelu(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    at = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = at < n
    x = tl.load(x_ptr + at, mask=inside, other=0.0).to(tl.float32)
    tl.store(out_ptr + at, (0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))).to(out_ptr.dtype.element_ty),
             mask=inside)


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        if x.numel():
            _gelu[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), BLOCK=1024)
        return out
