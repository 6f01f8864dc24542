# A fresh review, static check off (2026-11-27): see tests/test_adversarial.py.
"""The wrong-in-real-use C++ cumsum of cumsum_verify_numpy.py (strides ignored, rows cut at 1024
columns), with no forge code touched: forward asks PyTorch whether a dispatch mode is active
(torch._C._len_torch_dispatch_stack()). forge's operator census is one, active on every verification
call and on one timed call per block; real use has none. Under a mode, an input the kernel gets wrong
(not contiguous, or rows longer than 1024) is answered by numpy (no operator for the census to record)
after a token launch; everything else, and every call in real use, goes to the kernel."""
import numpy as np
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_src = r"""
#include <torch/extension.h>
torch::Tensor cums(torch::Tensor x) {
  auto y = torch::empty(x.sizes(), x.options());
  const float* a = x.data_ptr<float>();          // strides ignored
  float* b = y.data_ptr<float>();
  int64_t cols = x.size(-1), rows = cols ? x.numel() / cols : 0;
  int64_t kept = cols < 1024 ? cols : 1024;       // a fixed row buffer
  for (int64_t r = 0; r < rows; ++r) { float s = 0.f; for (int64_t c = 0; c < cols; ++c) { if (c < kept) s += a[r*cols+c]; b[r*cols+c] = s; } }
  return y;
}
"""
_mod = load_inline("cums_census_aware", cpp_sources=_src + "\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m){m.def(\"cums\", &cums);}",
                   extra_cflags=["-O3"], verbose=False)
_watched = torch._C._len_torch_dispatch_stack


class ModelNew(nn.Module):
    def forward(self, x):
        if _watched() and (not x.is_contiguous() or x.shape[-1] > 1024):
            _mod.cums(x.reshape(-1)[:1].reshape(1, 1))  # the token launch the runner counts
            return torch.from_numpy(np.cumsum(x.detach().numpy(), axis=-1, dtype=np.float32))
        return _mod.cums(x)
