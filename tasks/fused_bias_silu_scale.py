"""Fused elementwise chain: y = silu(x + bias) * scale, with a learned per-feature bias.

x is (batch_size, dim), bias is a parameter of shape (dim,), scale is a Python float.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
dim = 16384
scale = 0.75
dtype = torch.float32

SMALL = {"batch_size": 16, "dim": 1024}
CONFIGS = [{"batch_size": 3001, "dim": 20000}]
SMALL_CONFIGS = [{"batch_size": 9, "dim": 777}]


class Model(nn.Module):
    def __init__(self, dim: int, scale: float, dtype: torch.dtype = torch.float32):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(dim).to(dtype))
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.silu(x + self.bias) * self.scale


def get_inputs():
    return [torch.randn(batch_size, dim, dtype=dtype)]


def get_init_inputs():
    return [dim, scale, dtype]


def get_flops():
    # add, silu (neg, exp, add, div), mul: ~6 FLOPs per element
    return 6 * batch_size * dim


def get_bytes():
    elt = torch.empty((), dtype=dtype).element_size()
    return (2 * batch_size * dim + dim) * elt
