"""Sum reduction over the middle dimension of a 3D fp32 tensor.

x is (batch_size, dim1, dim2); y = x.sum(dim=1) has shape (batch_size, dim2).
"""

import torch
import torch.nn as nn

batch_size = 128
dim1 = 4096
dim2 = 256
dtype = torch.float32

SMALL = {"batch_size": 4, "dim1": 256, "dim2": 64}
CONFIGS = [
    {"batch_size": 127, "dim1": 1023, "dim2": 515},
    {"batch_size": 8, "dim1": 257, "dim2": 32769},
]
SMALL_CONFIGS = [{"batch_size": 3, "dim1": 301, "dim2": 37}]


class Model(nn.Module):
    def __init__(self, reduce_dim: int = 1):
        super().__init__()
        self.reduce_dim = reduce_dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=self.reduce_dim)


def get_inputs():
    return [torch.randn(batch_size, dim1, dim2, dtype=dtype)]


def get_init_inputs():
    return [1]


def get_flops():
    return batch_size * dim1 * dim2


def get_bytes():
    elt = torch.empty((), dtype=dtype).element_size()
    return (batch_size * dim1 * dim2 + batch_size * dim2) * elt
