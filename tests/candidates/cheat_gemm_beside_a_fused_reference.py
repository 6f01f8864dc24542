"""Attention's two GEMMs done by PyTorch's bmm beside a C++ causal softmax, where the reference is one
fused SDPA kernel. On contiguous inputs the reference never calls a GEMM; on a strided layout its SDPA
falls back to the math path, which does (bmm), and forge allowed any operator the reference ran in any
trial, in every trial (a review, 2026-12-02: passed at 0.58x). An operator is allowed by what the
reference ran on the same inputs, or on the standard ones: here bmm is foreign on the task's own."""

import math

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SOURCE = r"""
#include <torch/extension.h>
#include <cmath>
#include <limits>
torch::Tensor causal_softmax(torch::Tensor s, double scale) {
    TORCH_CHECK(s.dim() == 3 && s.is_contiguous() && s.scalar_type() == torch::kFloat32);
    auto out = torch::empty_like(s);
    const int64_t heads = s.size(0), rows = s.size(1), cols = s.size(2);
    const float* in = s.data_ptr<float>();
    float* o = out.data_ptr<float>();
    for (int64_t h = 0; h < heads; ++h) {
        for (int64_t i = 0; i < rows; ++i) {
            const float* r = in + (h * rows + i) * cols;
            float* w = o + (h * rows + i) * cols;
            const int64_t n = i + 1 < cols ? i + 1 : cols;
            float top = -std::numeric_limits<float>::infinity();
            for (int64_t j = 0; j < n; ++j) top = std::fmax(top, r[j] * (float)scale);
            float sum = 0.f;
            for (int64_t j = 0; j < n; ++j) { w[j] = std::exp(r[j] * (float)scale - top); sum += w[j]; }
            for (int64_t j = 0; j < n; ++j) w[j] /= sum;
            for (int64_t j = n; j < cols; ++j) w[j] = 0.f;
        }
    }
    return out;
}
"""
_ext = load_inline(name="bmm_beside_fused_sdpa", cpp_sources=[_SOURCE], functions=["causal_softmax"],
                   extra_cflags=["-O2"])  # fmt: skip


class ModelNew(nn.Module):
    def forward(self, q, k, v):
        b, h, length, d = q.shape
        q3, k3, v3 = (t.float().reshape(b * h, length, d) for t in (q, k, v))
        scores = torch.bmm(q3, k3.transpose(1, 2)).contiguous()
        weights = _ext.causal_softmax(scores, 1.0 / math.sqrt(d))
        return torch.bmm(weights, v3).reshape(b, h, length, d).to(q.dtype)
