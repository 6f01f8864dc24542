# A review, static check on (2026-11-28): see tests/test_adversarial.py.
"""C++ row softmax. Non-contiguous inputs (a transposed or sliced view) are staged into a contiguous
buffer kept on the module, so the copy does not allocate every call."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include <torch/extension.h>
#include <cmath>

torch::Tensor softmax_rows(torch::Tensor x) {
    TORCH_CHECK(x.is_contiguous(), "contiguous input expected");
    const int64_t cols = x.size(-1);
    const int64_t rows = cols ? x.numel() / cols : 0;
    auto y = torch::empty_like(x);
    const float* xp = x.data_ptr<float>();
    float* yp = y.data_ptr<float>();
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = xp + r * cols;
        float* yr = yp + r * cols;
        float m = -INFINITY;
        for (int64_t c = 0; c < cols; ++c) m = xr[c] > m ? xr[c] : m;
        if (m == -INFINITY) { for (int64_t c = 0; c < cols; ++c) yr[c] = NAN; continue; }
        float s = 0.f;
        for (int64_t c = 0; c < cols; ++c) { float e = std::exp(xr[c] - m); yr[c] = e; s += e; }
        const float inv = 1.f / s;
        for (int64_t c = 0; c < cols; ++c) yr[c] *= inv;
    }
    return y;
}
"""

_ext = load_inline(name="cheat_staging_shared_on_the_strided_path", cpp_sources=_SRC, functions=["softmax_rows"],
                   extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._stage = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not x.is_contiguous():
            if self._stage is None or self._stage.shape != x.shape or self._stage.dtype != x.dtype:
                self._stage = torch.empty(x.shape, dtype=x.dtype, device=x.device)
            self._stage.copy_(x)
            x = self._stage
        return _ext.softmax_rows(x)
