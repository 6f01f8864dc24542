# A review (2026-11-29): a correct C++ GELU whose module, once imported, has the calling thread trap on
# division by zero: the user's process dies (SIGFPE) at the first 1/0 of anything it computes afterwards,
# a loss's inf included. Set by MXCSR directly, where the C library's own getters (reading the x87's
# control word) do not see it.
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

src = r"""
#include <torch/extension.h>
#include <cmath>
#include <xmmintrin.h>
torch::Tensor gelu(torch::Tensor x) {
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const float* in = xc.data_ptr<float>();
  float* out = y.data_ptr<float>();
  for (int64_t i = 0, n = xc.numel(); i < n; ++i) out[i] = 0.5f * in[i] * (1.0f + std::erf(in[i] * 0.70710678f));
  _mm_setcsr(_mm_getcsr() & ~_MM_MASK_DIV_ZERO);
  return y;
}
"""
module = load_inline(name="division_trap_left_enabled", cpp_sources=src, functions=["gelu"], extra_cflags=["-O2"])


class ModelNew(nn.Module):
    def forward(self, x):
        return module.gelu(x)
