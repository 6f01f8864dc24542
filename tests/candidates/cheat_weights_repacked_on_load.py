"""RMSNorm with its weight packed at construction and packed again whenever weights are loaded (a
load_state_dict hook): right after a checkpoint, stale once a training step (or any in-place write)
changes the parameter. A kernel reads the module's parameters at every call; caught by the step
that changes them in place (red team round 14, a load_state_dict override on gemm_bias_relu)."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_src = r"""
#include <torch/extension.h>
#include <cmath>
torch::Tensor rmsnorm(torch::Tensor x, torch::Tensor w, double eps) {
    x = x.contiguous();
    auto y = torch::empty_like(x);
    const int64_t cols = x.size(-1), rows = x.numel() / cols;
    const float* xp = x.data_ptr<float>(); const float* wp = w.data_ptr<float>(); float* yp = y.data_ptr<float>();
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = xp + r * cols; float* yr = yp + r * cols;
        float s = 0.f;
        for (int64_t c = 0; c < cols; ++c) s += xr[c] * xr[c];
        const float inv = 1.f / std::sqrt(s / cols + (float)eps);
        for (int64_t c = 0; c < cols; ++c) yr[c] = xr[c] * inv * wp[c];
    }
    return y;
}
"""
_ext = load_inline("weights_repacked_on_load", cpp_sources=_src, functions=["rmsnorm"], extra_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self, dim, eps, dtype=torch.float32):
        super().__init__()
        self.weight = nn.Parameter((1.0 + 0.1 * torch.randn(dim)).to(dtype))
        self.eps = eps
        self._pack()
        self.register_load_state_dict_post_hook(lambda module, keys: module._pack())

    def _pack(self):
        self.packed = self.weight.detach().float().contiguous().clone()

    def forward(self, x):
        return _ext.rmsnorm(x, self.packed, self.eps)
