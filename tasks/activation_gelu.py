"""Exact (erf-based) GELU activation applied elementwise to a 2D fp32 tensor.

y = 0.5 * x * (1 + erf(x / sqrt(2)))
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
dim = 16384
dtype = torch.float32

SMALL = {"batch_size": 16, "dim": 1024}
CONFIGS = [{"batch_size": 4093, "dim": 16411}]
SMALL_CONFIGS = [{"batch_size": 7, "dim": 1003}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x)


def get_inputs():
    return [torch.randn(batch_size, dim, dtype=dtype)]


def get_init_inputs():
    return []


def get_flops():
    # ~8 FLOPs per element: scale, erf (counted as 1), add, two multiplies, ...
    return 8 * batch_size * dim


def get_bytes():
    elt = torch.empty((), dtype=dtype).element_size()
    return 2 * batch_size * dim * elt
