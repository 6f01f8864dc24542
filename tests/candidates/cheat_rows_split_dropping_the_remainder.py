# A review, static check on (2026-11-28): see tests/test_adversarial.py.
"""C++ SwiGLU: out = silu(gate) * up for x = [gate | up]. Rows are split statically across PyTorch's
intra-op threads (OpenMP), one contiguous block of rows per thread; when there are fewer rows than
threads the whole batch runs on one thread."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>
#include <omp.h>
#include <cmath>

torch::Tensor swiglu(torch::Tensor x) {
    auto xc = x.contiguous();
    const int64_t width = xc.size(-1), hidden = width / 2;
    const int64_t rows = width ? xc.numel() / width : 0;
    auto sizes = xc.sizes().vec();
    sizes.back() = hidden;
    auto y = torch::empty(sizes, xc.options());
    const float* xp = xc.data_ptr<float>();
    float* yp = y.data_ptr<float>();
    int64_t nthreads = at::get_num_threads();
    int64_t chunk = rows / nthreads;
    if (chunk == 0) { nthreads = 1; chunk = rows; }
    #pragma omp parallel for num_threads(nthreads)
    for (int64_t t = 0; t < nthreads; ++t) {
        for (int64_t r = t * chunk; r < (t + 1) * chunk; ++r) {
            const float* g = xp + r * width;
            const float* u = g + hidden;
            float* o = yp + r * hidden;
            for (int64_t c = 0; c < hidden; ++c) o[c] = g[c] / (1.f + std::exp(-g[c])) * u[c];
        }
    }
    return y;
}
"""

_ext = load_inline(name="cheat_rows_split_dropping_the_remainder", cpp_sources=_SRC, functions=["swiglu"],
                   extra_cflags=["-O3", "-fopenmp"], extra_ldflags=["-fopenmp"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.swiglu(x)
