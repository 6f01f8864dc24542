"""Honest C++ candidate (load_inline) for tests/tasks/slow_running_max.py: one pass per row."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
#include <torch/extension.h>
#include <algorithm>

torch::Tensor running_max(torch::Tensor x) {
    TORCH_CHECK(x.dim() == 2 && x.scalar_type() == torch::kFloat32, "expected a 2D float32 tensor");
    auto in = x.contiguous();
    auto out = torch::empty_like(in);
    const float* src = in.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    const int64_t rows = in.size(0), cols = in.size(1);
    for (int64_t r = 0; r < rows; ++r) {
        float best = src[r * cols];
        for (int64_t c = 0; c < cols; ++c) {
            best = std::max(best, src[r * cols + c]);
            dst[r * cols + c] = best;
        }
    }
    return out;
}
"""

running_max_ext = load_inline(
    name="forge_test_running_max",
    cpp_sources=cpp_source,
    functions=["running_max"],
    extra_cflags=["-O2"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return running_max_ext.running_max(x)
