"""A C++ GELU, right on every finite input, whose comparisons turn a NaN input into 0 where PyTorch's GELU
carries it through (as a ReLU through fmaxf does): a diverging model's NaN would be hidden. It passes, with a
warning (forge and the exported selftest alike)."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_source = r"""
#include <torch/extension.h>
#include <cmath>

torch::Tensor gelu_forward(torch::Tensor x) {
    auto input = x.contiguous();
    auto out = torch::empty_like(input);
    const float* in = input.data_ptr<float>();
    float* o = out.data_ptr<float>();
    for (int64_t i = 0; i < input.numel(); ++i) {
        float v = in[i];
        // every comparison with NaN is false: it falls through to 0
        o[i] = v >= 6.f ? v : (v > -6.f ? 0.5f * v * (1.f + std::erf(v * 0.70710678f)) : 0.f);
    }
    return out;
}
"""

_ext = load_inline(name="forge_test_gelu_nan_to_zero", cpp_sources=_source, functions=["gelu_forward"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.gelu_forward(x)
