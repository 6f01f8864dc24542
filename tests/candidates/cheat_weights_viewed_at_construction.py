# A second fresh review, static check off (2026-11-27): see tests/test_adversarial.py.
"""Triton candidate for tasks/layernorm.py: LayerNorm over the last dim with weight and bias.

Rows up to _MAX_SINGLE_BLOCK columns stay in registers (one read, one write); longer rows
loop over column chunks (mean pass, centered-variance pass, normalize pass).
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

_MAX_SINGLE_BLOCK = 16384
_LOOP_BLOCK = 4096


@triton.jit
def _layernorm_single_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    base = row * n_cols
    x = tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    xc = tl.where(mask, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    y = xc * rstd * w + b
    tl.store(y_ptr + base + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _layernorm_loop_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * n_cols
    cols0 = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + cols0
        x = tl.load(x_ptr + base + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        acc += x
    mean = tl.sum(acc, axis=0) / n_cols
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + cols0
        mask = cols < n_cols
        x = tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        xc = tl.where(mask, x - mean, 0.0)
        acc += xc * xc
    var = tl.sum(acc, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(var + eps)
    for start in range(0, n_cols, BLOCK):
        cols = start + cols0
        mask = cols < n_cols
        x = tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * w + b
        tl.store(y_ptr + base + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int, eps: float, dtype: torch.dtype = torch.float32):
        super().__init__()
        self.norm = nn.LayerNorm(dim, eps=eps)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.1 * torch.randn(dim))
            self.norm.bias.copy_(0.1 * torch.randn(dim))
        self.norm.to(dtype)
        # "cached contiguous weights": detach() aliases the parameters' storage at construction
        self._wb = (self.norm.weight.detach().contiguous(), self.norm.bias.detach().contiguous())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = self.norm.weight.shape[0]
        x2 = x.contiguous().reshape(-1, n_cols)
        y = torch.empty_like(x2)
        rows = x2.shape[0]
        if rows == 0:
            return y.reshape(x.shape)
        (w, b), eps = self._wb, float(self.norm.eps)
        block = triton.next_power_of_2(n_cols)
        if block <= _MAX_SINGLE_BLOCK:
            num_warps = min(16, max(4, block // 512))
            _layernorm_single_kernel[(rows,)](x2, w, b, y, n_cols, eps, BLOCK=block, num_warps=num_warps)
        else:
            _layernorm_loop_kernel[(rows,)](x2, w, b, y, n_cols, eps, BLOCK=_LOOP_BLOCK, num_warps=8)
        return y.reshape(x.shape)
