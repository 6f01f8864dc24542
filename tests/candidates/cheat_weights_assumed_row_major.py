# Review 47 (2026-12-02): Linear + ReLU whose kernel reads its weight's memory as row-major, whatever its
# strides. Right on every weight forge gave it (each step loaded contiguous weights), wrong on a checkpoint
# saved from a transposed view, or, for a convolution's, once the model is moved to channels-last.

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_src = r"""
#include <torch/extension.h>
torch::Tensor linear_relu(torch::Tensor x, torch::Tensor w_t, torch::Tensor b) {
    x = x.contiguous();  // the weight read as row-major, whatever its strides
    const int64_t m = x.size(0), k = x.size(1), n = w_t.size(1);
    auto y = torch::empty({m, n}, x.options());
    const float* xp = x.data_ptr<float>(); const float* wp = w_t.data_ptr<float>();
    const float* bp = b.data_ptr<float>(); float* yp = y.data_ptr<float>();
    for (int64_t i = 0; i < m; ++i) {
        float* yr = yp + i * n;
        for (int64_t j = 0; j < n; ++j) yr[j] = bp[j];
        for (int64_t p = 0; p < k; ++p) {
            const float a = xp[i * k + p]; const float* wr = wp + p * n;
            for (int64_t j = 0; j < n; ++j) yr[j] += a * wr[j];
        }
        for (int64_t j = 0; j < n; ++j) yr[j] = yr[j] > 0.f ? yr[j] : 0.f;
    }
    return y;
}
"""
_ext = load_inline("weights_assumed_row_major", cpp_sources=_src, functions=["linear_relu"], extra_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, dtype=torch.float16):
        super().__init__()
        linear = nn.Linear(in_features, out_features).to(dtype)  # drawn as the reference draws it
        self.weight_in_out = nn.Parameter(linear.weight.detach().t().contiguous())
        self.bias = nn.Parameter(linear.bias.detach().clone())

    def forward(self, x):
        out = _ext.linear_relu(x.float(), self.weight_in_out.float(), self.bias.float())
        return out.to(x.dtype)
