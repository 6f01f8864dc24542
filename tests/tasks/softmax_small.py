"""Test task: a row softmax of a 2D fp32 tensor (CPU-sized)."""

import torch
import torch.nn as nn

rows = 64
cols = 512


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []


SMALL = {"rows": 32, "cols": 256}
