# A review (2026-11-29): a correct C++ GELU whose forward sets torch's CPU threads to one for the whole
# process: every other operation of a user's model that imports it runs on one core from then on.
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
module = load_inline(name="threads_set_to_one", cpp_sources=src, functions=["gelu"], extra_cflags=["-O2"])


class ModelNew(nn.Module):
    def forward(self, x):
        torch.set_num_threads(1)
        return module.gelu(x)
