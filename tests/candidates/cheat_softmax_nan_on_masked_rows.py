# Red team round 13 (2026-11-24): a one-pass (online) softmax with no guard for a row that starts at
# -inf: its running maximum is -inf there and exp(-inf - -inf) is NaN, so every masked row of a real
# attention or padding mask comes out NaN. No verification input held a -inf, and it passed.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_src = r"""
#include <torch/extension.h>
#include <cmath>
torch::Tensor softmax_rows(torch::Tensor x) {
    x = x.contiguous();
    auto y = torch::empty_like(x);
    const int64_t n = x.size(-1), rows = x.numel() / n;
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    for (int64_t r = 0; r < rows; ++r) {
        const float* row = in + r * n;
        float top = -INFINITY, total = 0.f;
        for (int64_t i = 0; i < n; ++i) {  // rescale the running sum as the maximum grows
            float next = std::max(top, row[i]);
            total = total * std::exp(top - next) + std::exp(row[i] - next);
            top = next;
        }
        for (int64_t i = 0; i < n; ++i) out[r * n + i] = std::exp(row[i] - top) / total;
    }
    return y;
}
"""
_mod = load_inline(name="online_softmax_unguarded", cpp_sources=_src, functions=["softmax_rows"], extra_cflags=["-O2"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _mod.softmax_rows(x)
