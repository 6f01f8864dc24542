# After a review (2026-11-29): as cheat_reseeds_each_call, but through a generator state saved at import and
# put back at every call, so that no seed is ever set: the random draws of the importing process repeat all
# the same.
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
module = load_inline(name="rng_state_put_back", cpp_sources=src, functions=["gelu"], extra_cflags=["-O2"])
saved = torch.get_rng_state()


class ModelNew(nn.Module):
    def forward(self, x):
        torch.set_rng_state(saved)
        return module.gelu(x)
