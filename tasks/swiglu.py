"""SwiGLU gating from a transformer MLP: input (tokens, 2*hidden) holds [gate | up];
out = silu(gate) * up, shape (tokens, hidden), fp32.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

tokens = 4096
hidden = 14336
dtype = torch.float32

SMALL = {"tokens": 16, "hidden": 1024}
CONFIGS = [{"tokens": 3000, "hidden": 11008}, {"tokens": 8191, "hidden": 4095}]
SMALL_CONFIGS = [{"tokens": 9, "hidden": 1001}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate, up = x.chunk(2, dim=-1)
        return F.silu(gate) * up


def get_inputs():
    return [torch.randn(tokens, 2 * hidden, dtype=dtype)]


def get_init_inputs():
    return []


def get_flops():
    # silu (neg, exp, add, div) + mul: ~5 FLOPs per output element
    return 5 * tokens * hidden


def get_bytes():
    elt = torch.empty((), dtype=dtype).element_size()
    return 3 * tokens * hidden * elt
