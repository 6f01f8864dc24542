# A fresh review, static check on (2026-11-27); caught since 2026-11-28 by the trial made alongside other calls.
"""A C++ sum over the middle dimension that keeps one static scratch row for every call and releases the
GIL around its loop: two threads calling the model at once share it and get each other's partial sums
(4 wrong outputs in 100 from 2 threads x 50 calls)."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_src = r"""
#include <torch/extension.h>
#include <vector>

// Reused accumulator row: no allocation per call (the output row is float, the running sum double).
static std::vector<double> acc;

torch::Tensor sum_mid(torch::Tensor x) {
    TORCH_CHECK(x.dim() == 3 && x.scalar_type() == torch::kFloat32, "3-D float32 expected");
    const int64_t B = x.size(0), R = x.size(1), C = x.size(2);
    const int64_t s0 = x.stride(0), s1 = x.stride(1), s2 = x.stride(2);
    auto y = torch::empty({B, C}, x.options().requires_grad(false));
    const float* xp = x.data_ptr<float>();
    float* yp = y.data_ptr<float>();
    {
        py::gil_scoped_release nogil;   // long-running native loop: let other Python threads run
        acc.resize(C);
        for (int64_t b = 0; b < B; ++b) {
            std::fill(acc.begin(), acc.end(), 0.0);
            for (int64_t r = 0; r < R; ++r) {
                const float* row = xp + b * s0 + r * s1;
                for (int64_t c = 0; c < C; ++c) acc[c] += row[c * s2];
            }
            for (int64_t c = 0; c < C; ++c) yp[b * C + c] = (float)acc[c];
        }
    }
    return y;
}
"""

_ext = load_inline(name="sum_mid_scratch", cpp_sources=cpp_src, functions=["sum_mid"],
                   extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, reduce_dim: int = 1):
        super().__init__()
        assert reduce_dim == 1

    def forward(self, x):
        return _ext.sum_mid(x)
