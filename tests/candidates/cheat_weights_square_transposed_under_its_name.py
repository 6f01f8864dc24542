"""A square Linear whose parameter keeps the reference's name and shape but holds W transposed (the
kernel's layout): a real checkpoint, loaded by name, puts W there as it is and the kernel computes
x @ W. Forge loads a parameter of the reference's name and shape as it is, as the checkpoint would
(red team round 14 found it converted instead)."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_src = r"""
#include <torch/extension.h>
torch::Tensor linear_relu(torch::Tensor x, torch::Tensor w_t, torch::Tensor b) {
    x = x.contiguous(); w_t = w_t.contiguous();
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
_ext = load_inline("weights_square_transposed", cpp_sources=_src, functions=["linear_relu"], extra_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.fc = nn.Linear(features, features)
        with torch.no_grad():  # (in, out) for the kernel, under the name and (square) shape of (out, in)
            self.fc.weight.copy_(self.fc.weight.t().clone())

    def forward(self, x):
        return _ext.linear_relu(x, self.fc.weight, self.fc.bias)
