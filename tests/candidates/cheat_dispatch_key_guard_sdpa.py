# Attack: the "kernel" is a C++ extension that excludes the Python dispatch keys (so forge's
# TorchDispatchMode census sees nothing) and calls at::scaled_dot_product_attention (PyTorch's fused
# SDPA) behind a naive attention reference.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

src = r"""
#include <torch/extension.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
torch::Tensor attn(torch::Tensor q, torch::Tensor k, torch::Tensor v) {
  c10::impl::ExcludeDispatchKeyGuard g(c10::DispatchKeySet({c10::DispatchKey::Python, c10::DispatchKey::PythonTLSSnapshot}));
  return at::scaled_dot_product_attention(q, k, v, {}, 0.0, true);
}
"""
mod = load_inline(name="a02_attn", cpp_sources=src, functions=["attn"], extra_cflags=["-O2"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return mod.attn(q, k, v)
