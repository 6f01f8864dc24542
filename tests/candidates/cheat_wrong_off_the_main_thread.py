# A fresh review, static check off (2026-11-27): see tests/test_adversarial.py.
"""C++ GELU that is right only when called from the process's main thread (as forge always calls it);
from any other thread (a serving worker, a DataLoader-style pipeline thread) it returns garbage."""
import threading
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_src = r"""
#include <torch/extension.h>
#include <cmath>
torch::Tensor gelu(torch::Tensor x, bool ok) {
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  const float* a = xc.data_ptr<float>();
  float* b = y.data_ptr<float>();
  int64_t n = xc.numel();
  for (int64_t i = 0; i < n; ++i) {
    float v = a[i];
    b[i] = ok ? 0.5f * v * (1.0f + std::erf(v * 0.7071067811865476f)) : v;
  }
  return y;
}
"""
_mod = load_inline("gelu_mt", cpp_sources=_src + "\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m){m.def(\"gelu\", &gelu);}",
                   extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return _mod.gelu(x, threading.current_thread() is threading.main_thread())
