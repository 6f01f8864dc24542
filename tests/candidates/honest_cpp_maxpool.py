"""Honest C++ candidate for tasks/maxpool2d.py: MaxPool2d(2, 2), floor mode, one pass (NaN kept)."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include <torch/extension.h>
#include <cmath>
torch::Tensor maxpool2x2(torch::Tensor x) {
    auto xc = x.contiguous();
    int64_t N = xc.size(0), C = xc.size(1), H = xc.size(2), W = xc.size(3);
    int64_t Ho = H / 2, Wo = W / 2;
    auto y = torch::empty({N, C, Ho, Wo}, xc.options());
    const float* in = xc.data_ptr<float>();
    float* out = y.data_ptr<float>();
    for (int64_t p = 0; p < N * C; ++p) {
        const float* plane = in + p * H * W;
        float* o = out + p * Ho * Wo;
        for (int64_t i = 0; i < Ho; ++i) {
            const float* r0 = plane + (2 * i) * W;
            const float* r1 = r0 + W;
            for (int64_t j = 0; j < Wo; ++j) {
                float a = r0[2 * j], b = r0[2 * j + 1], c = r1[2 * j], d = r1[2 * j + 1];
                float m = a > b || std::isnan(a) ? a : b;
                float n = c > d || std::isnan(c) ? c : d;
                o[i * Wo + j] = m > n || std::isnan(m) ? m : n;
            }
        }
    }
    return y;
}
"""
_ext = load_inline(name="honest_cpp_maxpool", cpp_sources=[_SRC], functions=["maxpool2x2"],
                   extra_cflags=["-O3", "-march=native"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.maxpool2x2(x)
