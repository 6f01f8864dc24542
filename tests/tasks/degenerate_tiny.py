"""Degenerate task: outputs so small that all-zeros passes an absolute tolerance elementwise."""

import torch
import torch.nn as nn

n = 4096


class Model(nn.Module):
    def forward(self, x):
        return x * 1e-7


def get_inputs():
    return [torch.randn(n)]


def get_init_inputs():
    return []


SMALL = {"n": 1024}
