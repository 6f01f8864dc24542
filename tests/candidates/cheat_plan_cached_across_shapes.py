# A review, static check on (2026-11-28): see tests/test_adversarial.py.
"""C++ row softmax. The launch plan (rows, cols) is cached on the module and recomputed only when the
input's shape changes, to keep Python overhead off the hot path."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include <torch/extension.h>
#include <cmath>

void softmax_rows(torch::Tensor x, torch::Tensor y, int64_t rows, int64_t cols) {
    const float* xp = x.data_ptr<float>();
    float* yp = y.data_ptr<float>();
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = xp + r * cols;
        float* yr = yp + r * cols;
        float m = -INFINITY;
        for (int64_t c = 0; c < cols; ++c) m = xr[c] > m ? xr[c] : m;
        float s = 0.f;
        if (m == -INFINITY) {
            for (int64_t c = 0; c < cols; ++c) yr[c] = NAN;
            continue;
        }
        for (int64_t c = 0; c < cols; ++c) { float e = std::exp(xr[c] - m); yr[c] = e; s += e; }
        float inv = 1.f / s;
        for (int64_t c = 0; c < cols; ++c) yr[c] *= inv;
    }
}
"""

_ext = load_inline(name="cheat_plan_cached_across_shapes", cpp_sources=_SRC, functions=["softmax_rows"],
                   extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._shape = None
        self._rows = 0
        self._cols = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x2 = x.contiguous()
        if x2.shape != self._shape:
            self._shape = x2.shape
            self._cols = x2.shape[-1]
            self._rows = x2.numel() // max(self._cols, 1)
        y = torch.empty_like(x2)
        _ext.softmax_rows(x2, y, self._rows, self._cols)
        return y
