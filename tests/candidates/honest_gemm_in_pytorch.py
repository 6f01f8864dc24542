"""Honest candidate for tests/tasks/linear_relu.py: the GEMM stays in PyTorch (a library call, allowed),
its own Triton kernel adds the bias and applies the ReLU in one pass."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def bias_relu_kernel(h_ptr, b_ptr, out_ptr, n, cols, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    h = tl.load(h_ptr + offsets, mask=mask)
    b = tl.load(b_ptr + offsets % cols, mask=mask)
    tl.store(out_ptr + offsets, tl.maximum(h + b, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.fc = nn.Linear(features, features)

    def forward(self, x):
        h = torch.mm(x, self.fc.weight.t()).contiguous()
        out = torch.empty_like(h)
        n = h.numel()
        bias_relu_kernel[(triton.cdiv(n, 1024),)](h, self.fc.bias, out, n, h.shape[1], BLOCK=1024)
        return out
