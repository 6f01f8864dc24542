"""Softmax over the last dimension of a 2D fp32 tensor (one independent softmax per row)."""

import torch
import torch.nn as nn

batch_size = 4096
dim = 16384
dtype = torch.float32

SMALL = {"batch_size": 16, "dim": 1024}
CONFIGS = [{"batch_size": 2048, "dim": 30011}, {"batch_size": 65536, "dim": 1000}]
SMALL_CONFIGS = [{"batch_size": 11, "dim": 1531}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(batch_size, dim, dtype=dtype)]


def get_init_inputs():
    return []


def get_flops():
    # max, subtract, exp, sum, divide: ~5 FLOPs per element
    return 5 * batch_size * dim


def get_bytes():
    elt = torch.empty((), dtype=dtype).element_size()
    return 2 * batch_size * dim * elt
