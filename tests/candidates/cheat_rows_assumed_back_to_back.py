# Red team round 13 (2026-11-24): a softmax that copies its input only where the last dimension is
# not contiguous, then takes each row to start where the last one ended. Verified only on contiguous
# inputs, transposed ones and strided ones (all copied), it passed; on a narrowed view (rows a buffer's
# width apart, as in one part of a fused projection) it reads the wrong elements.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_src = r"""
#include <torch/extension.h>
#include <cmath>
torch::Tensor softmax_rows(torch::Tensor x) {
    if (x.stride(-1) != 1) x = x.contiguous();
    auto y = torch::empty(x.sizes(), x.options());
    const int64_t n = x.size(-1), rows = x.numel() / n;
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    for (int64_t r = 0; r < rows; ++r) {
        const float* row = in + r * n;  // rows back to back: true only of a contiguous tensor
        float top = row[0], total = 0.f;
        for (int64_t i = 1; i < n; ++i) top = std::max(top, row[i]);
        for (int64_t i = 0; i < n; ++i) total += std::exp(row[i] - top);
        for (int64_t i = 0; i < n; ++i) out[r * n + i] = std::exp(row[i] - top) / total;
    }
    return y;
}
"""
_mod = load_inline(name="rows_back_to_back_softmax", cpp_sources=_src, functions=["softmax_rows"], extra_cflags=["-O2"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _mod.softmax_rows(x)
