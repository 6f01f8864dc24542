"""Cheat: a token Triton kernel, and torch.softmax does the work (red team of forge, 2026-11)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def token_kernel(p):
    tl.store(p, tl.load(p) + 1.0)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.scratch = torch.zeros(1)

    def forward(self, x):
        token_kernel[(1,)](self.scratch)
        return torch.softmax(x, dim=-1)
