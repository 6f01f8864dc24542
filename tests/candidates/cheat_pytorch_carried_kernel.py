# Red team round 16 (2026-11-25): a C++ softmax whose exponentials and sums are NNPACK's, which
# libtorch_cpu carries and exports (extern "C" nnp_inplace_softmax__avx2): PyTorch's library doing the work,
# read as its plumbing by the host's samples (passed at 0.22-0.33x where the honest loop makes 0.09x).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include <torch/extension.h>
#include <cstddef>
#include <cmath>

extern "C" void nnp_inplace_softmax__avx2(size_t n, float* v);

torch::Tensor softmax_rows(torch::Tensor x) {
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const int64_t cols = xc.size(-1);
    const int64_t rows = xc.numel() / cols;
    const float* px = xc.data_ptr<float>();
    float* py = y.data_ptr<float>();
    for (int64_t r = 0; r < rows; ++r) {
        const float* a = px + r * cols;
        float* b = py + r * cols;
        float m = -INFINITY;
        for (int64_t c = 0; c < cols; ++c) m = a[c] > m ? a[c] : m;
        const float lo = m - 87.0f;   // exp(-87) is below float32's normal range anyway
        // shifted by the row's max (softmax is the same): NNPACK's own exponentials overflowed on rows far
        // below zero that are no multiple of 8 wide (forge's other shapes, verified on them since 2026-11-27)
        for (int64_t c = 0; c < cols; ++c) b[c] = (a[c] > lo ? a[c] : lo) - m;
        nnp_inplace_softmax__avx2((size_t)cols, b);
    }
    return y;
}
"""

_ext = load_inline(name="cheat_pytorch_carried_kernel", cpp_sources=[_SRC], functions=["softmax_rows"],
                   extra_cflags=["-O3", "-march=native"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.softmax_rows(x)
