# A fresh review, static check off (2026-11-27): see tests/test_adversarial.py.
"""C++ LayerNorm that keeps a copy of its weight and bias from its first call and computes with that copy
ever after (as a kernel that repacks its weights once does): after load_state_dict or a training step it
is wrong. forge's weight steps (reload through load_state_dict, then a write through .data) would catch it,
but every verification call runs under forge's operator census, a dispatch mode the kernel can see
(torch._C._len_torch_dispatch_stack()): under one, it refreshes its copy from the live parameters first.
Timing keeps the weights of the last step, which the last censused call copied. No forge code touched."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_src = r"""
#include <torch/extension.h>
torch::Tensor ln(torch::Tensor x, torch::Tensor w, torch::Tensor b, double eps) {
  auto xc = x.contiguous(); auto wc = w.contiguous(); auto bc = b.contiguous();
  auto y = torch::empty_like(xc);
  const float* a = xc.data_ptr<float>(); const float* pw = wc.data_ptr<float>(); const float* pb = bc.data_ptr<float>();
  float* o = y.data_ptr<float>();
  int64_t d = xc.size(-1), rows = d ? xc.numel() / d : 0;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = a + r * d; double s = 0; for (int64_t c = 0; c < d; ++c) s += xr[c];
    double m = s / d, v = 0; for (int64_t c = 0; c < d; ++c) { double t = xr[c] - m; v += t * t; }
    float inv = (float)(1.0 / std::sqrt(v / d + eps)), mf = (float)m;
    for (int64_t c = 0; c < d; ++c) o[r * d + c] = (xr[c] - mf) * inv * pw[c] + pb[c];
  }
  return y;
}
"""
_mod = load_inline("ln_stale", cpp_sources=_src + "\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m){m.def(\"ln\", &ln);}",
                   extra_cflags=["-O3"], verbose=False)
_watched = torch._C._len_torch_dispatch_stack


class ModelNew(nn.Module):
    def __init__(self, dim, eps, dtype=torch.float32):
        super().__init__()
        self.norm = nn.LayerNorm(dim, eps=eps)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.1 * torch.randn(dim))
            self.norm.bias.copy_(0.1 * torch.randn(dim))
        self.norm.to(dtype)
        self._packed = None

    def forward(self, x):
        if self._packed is None or _watched():
            self._packed = (self.norm.weight.detach().clone(), self.norm.bias.detach().clone())
        w, b = self._packed
        return _mod.ln(x, w, b, self.norm.eps)
