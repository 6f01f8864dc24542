"""Causal scaled dot-product attention, fp16: softmax(Q K^T / sqrt(D) + causal mask) V.

q, k, v and the output are (batch_size, num_heads, seq_len, head_dim).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
num_heads = 16
seq_len = 2048
head_dim = 64
dtype = torch.float16

SMALL = {"batch_size": 2, "num_heads": 2, "seq_len": 128, "head_dim": 32, "dtype": torch.float32}
CONFIGS = [{"batch_size": 4, "num_heads": 12, "seq_len": 4095, "head_dim": 128}]
SMALL_CONFIGS = [{"batch_size": 1, "num_heads": 3, "seq_len": 77, "head_dim": 48}]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def get_inputs():
    shape = (batch_size, num_heads, seq_len, head_dim)
    return [torch.randn(shape, dtype=dtype) for _ in range(3)]


def get_init_inputs():
    return []


def get_flops():
    # QK^T and PV over the seq_len*(seq_len+1)/2 unmasked (query, key) pairs
    pairs = seq_len * (seq_len + 1) // 2
    return 4 * batch_size * num_heads * pairs * head_dim


def get_bytes():
    elt = torch.empty((), dtype=dtype).element_size()
    return 4 * batch_size * num_heads * seq_len * head_dim * elt
