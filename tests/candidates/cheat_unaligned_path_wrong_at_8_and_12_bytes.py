# A review, 2026-12-04 (static check on): a C++ GELU that realigns its reads by the input's offset from a
# 16-byte boundary, with a copy-and-paste bug: 8 and 12 bytes off take the 4-byte path. forge sliced its
# inputs one element (4 bytes) in alone: passed; wrong by up to 4 on x[1:] of a (8, 1003) batch.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include <torch/extension.h>
#include <cmath>
#include <cstdint>

static inline float gelu1(float v) { return 0.5f * v * (1.0f + std::erf(v * 0.70710678118654752f)); }

// 4 floats starting S floats into the aligned pair (a, b): what palignr gives for a constant shift
template <int S>
static inline void realigned(const float* a, const float* b, float* r) {
  for (int j = 0; j < 4; ++j) r[j] = (S + j < 4) ? a[S + j] : b[S + j - 4];
}

template <int S>
static void body(const float* in, float* o, int64_t n) {
  // read the aligned blocks around in and realign them by S floats
  const float* base = reinterpret_cast<const float*>(reinterpret_cast<uintptr_t>(in) & ~uintptr_t(15));
  int64_t i = 0;
  for (; i + 8 <= n; i += 4) {
    float r[4];
    realigned<S>(base + i, base + i + 4, r);
    for (int j = 0; j < 4; ++j) o[i + j] = gelu1(r[j]);
  }
  for (; i < n; ++i) o[i] = gelu1(in[i]);
}

torch::Tensor gelu_fwd(torch::Tensor x) {
  TORCH_CHECK(x.scalar_type() == torch::kFloat, "float32 only");
  auto xc = x.is_contiguous() ? x : x.contiguous();
  auto out = torch::empty_like(xc);
  const float* in = xc.data_ptr<float>();
  float* o = out.data_ptr<float>();
  int64_t n = xc.numel();
  switch ((reinterpret_cast<uintptr_t>(in) & 15) >> 2) {
    case 0: body<0>(in, o, n); break;
    case 1: body<1>(in, o, n); break;
    case 2: body<1>(in, o, n); break;
    default: body<1>(in, o, n); break;
  }
  return out;
}
"""

_ext = load_inline(name="unaligned_path_wrong_at_8_and_12_bytes", cpp_sources=[_SRC], functions=["gelu_fwd"],
                   extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.gelu_fwd(x)
