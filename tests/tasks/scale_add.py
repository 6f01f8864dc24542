"""Test task: out = x * alpha + y, with alpha a constructor argument."""

import torch
import torch.nn as nn

n = 1 << 24
alpha = 2.0


class Model(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        return x * self.alpha + y


def get_inputs():
    return [torch.randn(n), torch.randn(n)]


def get_init_inputs():
    return [alpha]


def get_flops():
    return 2 * n


def get_bytes():
    return 3 * 4 * n


SMALL = {"n": 4096}
SMALL_CONFIGS = [{"n": 1000}]
