"""Test task: a reference that torch.compile cannot handle (it refuses to be compiled), like some real ones."""

import torch
import torch.nn as nn

n = 4096
alpha = 2.0


class Model(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        if torch.compiler.is_compiling():
            torch._dynamo.graph_break()
            raise AssertionError("this reference cannot be compiled")
        return x * self.alpha + y


def get_inputs():
    return [torch.randn(n), torch.randn(n)]


def get_init_inputs():
    return [alpha]


SMALL = {"n": 4096}
