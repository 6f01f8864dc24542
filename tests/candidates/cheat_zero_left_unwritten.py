# A fresh review, static check on (2026-11-27): see tests/test_adversarial.py.
"""C++ candidate for activation_gelu: erf form for positive inputs, erfc form for negative inputs
(more accurate in the far negative tail). Bug: exact zeros (and NaN) fall through both branches and
the output element is left as whatever torch::empty's memory held. Real inputs hold exact zeros
(zero padding, dropout, ReLU outputs); forge's inputs held none then."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <cmath>

torch::Tensor gelu(torch::Tensor x) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "float32 only");
    auto xc = x.contiguous();
    auto out = torch::empty(xc.sizes(), xc.options().requires_grad(false));
    const float* xp = xc.data_ptr<float>();
    float* op = out.data_ptr<float>();
    const int64_t n = xc.numel();
    const float r2 = 0.70710678118654752f;
    for (int64_t i = 0; i < n; ++i) {
        const float v = xp[i];
        if (v > 0.f) {
            op[i] = 0.5f * v * (1.f + std::erf(v * r2));
        } else if (v < 0.f) {
            op[i] = 0.5f * v * std::erfc(-v * r2);
        }
    }
    return out;
}
"""

_ext = load_inline(name="a3_gelu_sign", cpp_sources=_CPP, functions=["gelu"], extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.gelu(x)
