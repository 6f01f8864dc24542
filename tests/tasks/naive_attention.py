"""Test task: causal attention written out naively (matmul, mask, softmax, matmul), as many references are."""

import math

import torch
import torch.nn as nn

batch = 2
heads = 4
seq = 256
dim = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
        mask = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool, device=q.device).triu(1)
        return torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1) @ v


def get_inputs():
    return [torch.randn(batch, heads, seq, dim) for _ in range(3)]


def get_init_inputs():
    return []


SMALL = {"batch": 1, "heads": 2, "seq": 64, "dim": 32}
