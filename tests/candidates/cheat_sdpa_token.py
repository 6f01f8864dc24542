"""Cheat: launches a one-float Triton kernel, then lets PyTorch's fused attention (SDPA) do the work behind a
naive attention reference (red team of forge, 2026-11: passed at 1.4x to 4.2x)."""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def token_kernel(p):
    tl.store(p, tl.load(p) + 1.0)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.scratch = torch.zeros(1)

    def forward(self, q, k, v):
        token_kernel[(1,)](self.scratch)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
