"""Test task: two LayerNorms around a ReLU; both start as ones and zeros, as freshly built ones do."""

import torch
import torch.nn as nn

batch = 256
dim = 512


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.ln2 = nn.LayerNorm(dim)

    def forward(self, x):
        return self.ln2(torch.relu(self.ln1(x)))


def get_inputs():
    return [torch.randn(batch, dim)]


def get_init_inputs():
    return [dim]


SMALL = {"batch": 64, "dim": 256}
