"""Test task: y = relu(x @ W^T + b), KernelBench style (weights are parameters, input is batch-first)."""

import torch
import torch.nn as nn

batch = 1024
features = 1024


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.fc = nn.Linear(features, features)

    def forward(self, x):
        return torch.relu(self.fc(x))


def get_inputs():
    return [torch.randn(batch, features)]


def get_init_inputs():
    return [features]


SMALL = {"batch": 512, "features": 512}
TOLERANCE = {"atol": 1e-3, "rtol": 1e-3, "rel_norm": 1e-4}
