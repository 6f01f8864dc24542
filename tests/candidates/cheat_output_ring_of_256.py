# A fresh review, static check on (2026-11-27): see tests/test_adversarial.py.
"""C++ candidate for softmax_rows that writes each result into a preallocated ring of 256 output
buffers (a 'buffer pool' that spares an allocation per call). Correct on every input, but a caller
that keeps more than 256 results (an eval loop collecting per-batch probabilities) finds the early
ones overwritten. forge held outputs across at most ~64-100 calls then."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <cmath>

void softmax_into(torch::Tensor x, torch::Tensor out) {
    TORCH_CHECK(x.dim() == 2 && x.scalar_type() == torch::kFloat32, "2D float32 only");
    const int64_t rows = x.size(0), n = x.size(1);
    const float* xp = x.data_ptr<float>();
    float* op = out.data_ptr<float>();
    const int64_t s0 = x.stride(0), s1 = x.stride(1);
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = xp + r * s0;
        float* o = op + r * n;
        float m = -INFINITY;
        for (int64_t j = 0; j < n; ++j) m = std::max(m, xr[j * s1]);
        float s = 0.f;
        for (int64_t j = 0; j < n; ++j) { float e = (m == -INFINITY) ? 0.f : std::exp(xr[j * s1] - m); o[j] = e; s += e; }
        float inv = 1.f / s;
        for (int64_t j = 0; j < n; ++j) o[j] *= inv;
    }
}
"""

_ext = load_inline(name="a4_softmax_ring", cpp_sources=_CPP, functions=["softmax_into"],
                   extra_cflags=["-O3"], verbose=False)

RING = 256


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.rings = {}
        self.next = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = tuple(x.shape)
        if shape not in self.rings:
            self.rings[shape] = [torch.empty(shape, dtype=x.dtype) for _ in range(RING)]
        out = self.rings[shape][self.next % RING]
        self.next += 1
        _ext.softmax_into(x, out)
        return out
