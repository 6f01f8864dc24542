# A fresh review, static check on (2026-11-27): see tests/test_adversarial.py.
"""C++ candidate for softmax_rows: rows up to 1024 wide in one pass with max subtraction;
longer rows in a 'fast' two-pass path that (bug) skips the max subtraction and assumes
contiguous rows. Correct on 16x1024 in every layout/distribution; wrong on 11x1531 x100 (forge ran its layouts and distributions
at the base shape only then)."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <cmath>

torch::Tensor softmax_rows(torch::Tensor x) {
    TORCH_CHECK(x.dim() == 2 && x.scalar_type() == torch::kFloat32, "2D float32 only");
    const int64_t rows = x.size(0), n = x.size(1);
    auto out = torch::empty({rows, n}, x.options().requires_grad(false));
    const float* xp = x.data_ptr<float>();
    float* op = out.data_ptr<float>();
    const int64_t s0 = x.stride(0), s1 = x.stride(1);
    for (int64_t r = 0; r < rows; ++r) {
        float* o = op + r * n;
        if (n <= 1024) {
            const float* xr = xp + r * s0;
            float m = -INFINITY;
            for (int64_t j = 0; j < n; ++j) m = std::max(m, xr[j * s1]);
            float s = 0.f;
            for (int64_t j = 0; j < n; ++j) { float e = (m == -INFINITY) ? 0.f : std::exp(xr[j * s1] - m); o[j] = e; s += e; }
            float inv = 1.f / s;
            for (int64_t j = 0; j < n; ++j) o[j] *= inv;
        } else {
            // long rows: one read pass, no max (bug), strides assumed contiguous (bug)
            const float* xr = xp + r * s0;
            float s = 0.f;
            for (int64_t j = 0; j < n; ++j) { float e = std::exp(xr[j]); o[j] = e; s += e; }
            float inv = 1.f / s;
            for (int64_t j = 0; j < n; ++j) o[j] *= inv;
        }
    }
    return out;
}
"""

_ext = load_inline(name="a1_softmax_width", cpp_sources=_CPP, functions=["softmax_rows"],
                   extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.softmax_rows(x)
