"""Two LayerNorms that start equal kept as one (outside review, round 14): right on every input while
both hold their built values, wrong on any checkpoint that gives them different ones. Caught since
each reference parameter moves by a seed of its own."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_src = r"""
#include <torch/extension.h>
#include <cmath>
torch::Tensor norm_relu_norm(torch::Tensor x, torch::Tensor w, torch::Tensor b, double eps) {
    x = x.contiguous();
    auto y = torch::empty_like(x);
    const int64_t cols = x.size(-1), rows = x.numel() / cols;
    const float* xp = x.data_ptr<float>(); const float* wp = w.data_ptr<float>(); const float* bp = b.data_ptr<float>();
    float* yp = y.data_ptr<float>();
    std::vector<float> h(cols);
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = xp + r * cols; float* yr = yp + r * cols;
        for (int pass = 0; pass < 2; ++pass) {
            const float* in = pass == 0 ? xr : h.data();
            float mean = 0.f, var = 0.f;
            for (int64_t c = 0; c < cols; ++c) mean += in[c];
            mean /= cols;
            for (int64_t c = 0; c < cols; ++c) var += (in[c] - mean) * (in[c] - mean);
            const float inv = 1.f / std::sqrt(var / cols + (float)eps);
            for (int64_t c = 0; c < cols; ++c) {
                const float v = (in[c] - mean) * inv * wp[c] + bp[c];
                if (pass == 0) h[c] = v > 0.f ? v : 0.f; else yr[c] = v;
            }
        }
    }
    return y;
}
"""
_ext = load_inline("weights_two_norms_merged", cpp_sources=_src, functions=["norm_relu_norm"], extra_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)  # one for both: they start equal

    def forward(self, x):
        return _ext.norm_relu_norm(x, self.norm.weight, self.norm.bias, self.norm.eps)
