"""Inclusive cumulative sum (prefix sum) along the last dimension of a 2D fp32 tensor."""

import torch
import torch.nn as nn

batch_size = 8192
dim = 8192
dtype = torch.float32

SMALL = {"batch_size": 16, "dim": 1024}
CONFIGS = [{"batch_size": 3001, "dim": 20011}, {"batch_size": 131072, "dim": 513}]
SMALL_CONFIGS = [{"batch_size": 7, "dim": 2999}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x, dim=-1)


def get_inputs():
    return [torch.randn(batch_size, dim, dtype=dtype)]


def get_init_inputs():
    return []


def get_flops():
    return batch_size * dim


def get_bytes():
    elt = torch.empty((), dtype=dtype).element_size()
    return 2 * batch_size * dim * elt
