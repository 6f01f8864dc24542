"""Malformed task: get_inputs raises."""

import torch.nn as nn

n = 4


class Model(nn.Module):
    def forward(self, x):
        return x + 1


def get_inputs():
    raise RuntimeError("dataset not found")


def get_init_inputs():
    return []


SMALL = {"n": 4}
