# A review (2026-11-29): a correct C++ GELU whose module switches mixed precision (autocast) on for the
# whole thread when it is imported: a user's Linear then returns bfloat16, and forge's comparison, made in
# another process, sees nothing of it.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

src = r"""
#include <torch/extension.h>
#include <cmath>
torch::Tensor gelu(torch::Tensor x) {
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const float* in = xc.data_ptr<float>();
  float* out = y.data_ptr<float>();
  for (int64_t i = 0, n = xc.numel(); i < n; ++i) out[i] = 0.5f * in[i] * (1.0f + std::erf(in[i] * 0.70710678f));
  return y;
}
"""
module = load_inline(name="autocast_left_on", cpp_sources=src, functions=["gelu"], extra_cflags=["-O2"])

torch.set_autocast_enabled("cpu", True)


class ModelNew(nn.Module):
    def forward(self, x):
        return module.gelu(x)
