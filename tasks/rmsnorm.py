"""RMSNorm over the last dimension of a 2D fp32 tensor with a learned weight.

y = x / sqrt(mean(x^2, dim=-1) + eps) * weight
"""

import torch
import torch.nn as nn

batch_size = 16384
dim = 4096
eps = 1e-6
dtype = torch.float32

SMALL = {"batch_size": 16, "dim": 1024}
CONFIGS = [{"batch_size": 4099, "dim": 14337}, {"batch_size": 65536, "dim": 1000}]
SMALL_CONFIGS = [{"batch_size": 13, "dim": 999}]


class Model(nn.Module):
    def __init__(self, dim: int, eps: float, dtype: torch.dtype = torch.float32):
        super().__init__()
        self.weight = nn.Parameter((1.0 + 0.1 * torch.randn(dim)).to(dtype))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return x * rms * self.weight


def get_inputs():
    return [torch.randn(batch_size, dim, dtype=dtype)]


def get_init_inputs():
    return [dim, eps, dtype]


def get_flops():
    # square+accumulate (2), scale (1), weight (1): ~4 FLOPs per element
    return 4 * batch_size * dim


def get_bytes():
    elt = torch.empty((), dtype=dtype).element_size()
    return (2 * batch_size * dim + dim) * elt
