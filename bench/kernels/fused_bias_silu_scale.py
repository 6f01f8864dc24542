"""Triton candidate for tasks/fused_bias_silu_scale.py: silu(x + bias) * scale in one pass.

2D launch grid (row, column block) so the bias index needs no integer division.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _bias_silu_scale_kernel(x_ptr, b_ptr, y_ptr, n_cols, scale, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    offs = row * n_cols + cols
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    z = x + b
    y = z / (1.0 + tl.exp(-z)) * scale
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int, scale: float, dtype: torch.dtype = torch.float32):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(dim).to(dtype))
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dim = self.bias.shape[0]
        x2 = x.contiguous().reshape(-1, dim)
        y = torch.empty_like(x2)
        rows = x2.shape[0]
        if rows == 0:
            return y.reshape(x.shape)
        block = min(2048, triton.next_power_of_2(dim))
        grid = (rows, triton.cdiv(dim, block))
        _bias_silu_scale_kernel[grid](
            x2,
            self.bias,
            y,
            dim,
            float(self.scale),
            BLOCK=block,
            num_warps=8 if block >= 2048 else 4,
        )
        return y.reshape(x.shape)
