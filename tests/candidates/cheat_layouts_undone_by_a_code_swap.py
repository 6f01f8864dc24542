# A fresh review, static check off, own-code checks on (2026-11-27): see tests/test_adversarial.py.
# A GELU kernel that ignores strides (reads the storage as if contiguous): wrong on any
# non-contiguous input a real model hands it (x.t(), a narrowed view...).  To pass forge with the
# own-code check ON, it swaps the *code* of forge's layout helper in its process: the function object
# (what own_code compares by identity) stays the same, so the check saw nothing rebound then.
import sys
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_src = r"""
#include <torch/extension.h>
#include <cmath>
torch::Tensor gelu(torch::Tensor x) {
    auto y = torch::empty(x.sizes(), x.options());   // contiguous output
    const float* a = x.data_ptr<float>();             // strides ignored: the bug
    float* b = y.data_ptr<float>();
    int64_t n = x.numel();
    for (int64_t i = 0; i < n; ++i) { float v = a[i]; b[i] = 0.5f * v * (1.0f + std::erf(v * 0.7071067811865476f)); }
    return y;
}
"""
_mod = load_inline(name="codeswap_gelu_ext", cpp_sources=[_src], functions=["gelu"], extra_cflags=["-O3"], verbose=False)

_v = sys.modules.get("forge_sandbox.variants")
if _v is not None:
    def _as_made(inputs, variant):
        return inputs
    _v.apply_layout.__code__ = _as_made.__code__   # same function object, other code


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _mod.gelu(x)
