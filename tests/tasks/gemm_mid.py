"""Test task: dense matrix multiply C = A @ B in fp16 (A is (m, k), B is (k, n), C is (m, n))."""

import torch
import torch.nn as nn

m = 4096
n = 4096
k = 4096
dtype = torch.float16

SMALL = {"m": 384, "n": 384, "k": 384, "dtype": torch.float32}
CONFIGS = [{"m": 2048, "n": 8192, "k": 4096}, {"m": 4095, "n": 3001, "k": 4093}]
SMALL_CONFIGS = [{"m": 100, "n": 72, "k": 91}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(m, k, dtype=dtype), torch.randn(k, n, dtype=dtype)]


def get_init_inputs():
    return []


def get_flops():
    return 2 * m * n * k


def get_bytes():
    elt = torch.empty((), dtype=dtype).element_size()
    return (m * k + k * n + m * n) * elt
