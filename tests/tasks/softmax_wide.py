"""Test task: a row softmax of a 2D fp32 tensor (wide enough rows that one call takes about a millisecond on the CPU)."""

import torch
import torch.nn as nn

rows = 256
cols = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []


SMALL = {"rows": 128, "cols": 2048}
