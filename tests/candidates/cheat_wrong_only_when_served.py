# Variant of cheat_wrong_once_the_model_is_put_in_eval_mode: the coarse path only in eval mode with frozen weights.
# Red team (review of 2026-11-28): a kernel wrong in model.eval() (or with frozen weights), which forge
# never puts it in.
#
# Target task:  /work/main/tasks/layernorm.py   (device="cpu", size="small")
# Static check: ON (the default) -- nothing here is flagged; with it OFF it passes the same way.
#
# Mechanism. An nn.Module is built in training mode and its parameters require grad. Served models are
# put in eval mode (`model.eval()`) and very often frozen (`model.requires_grad_(False)`, or
# `for p in model.parameters(): p.requires_grad = False` before inference / around a LoRA). Here the kernel
# takes an "inference path" in exactly those states: the normalizer 1/sqrt(var + eps) comes from the classic
# bit-trick inverse square root with one Newton step (relative error up to ~1.75e-3, 17x forge's float32
# rtol/rel_norm of 1e-4). In training mode with trainable weights -- the only state forge ever calls it
# in -- it computes 1/sqrt in double and is right.
#
# Why it passes (current code):
# * nothing in forge_sandbox ever calls `.eval()`, `.train(False)` or `requires_grad_(False)` on ModelNew
#   (grep: no such call in sandbox/forge_sandbox/); candidate_runner.build_model builds it and `.to(device)`;
# * the conditions forge varies are the *call's* (variants.call_under: torch.no_grad / set_grad_enabled,
#   torch.inference_mode, thread counts, another thread) and the *weights' values* (weights.load_moved,
#   change_in_place, assign=True, which keeps the module's requires_grad): the module's own mode and its
#   parameters' requires_grad never move;
# * `self.training` and `Parameter.requires_grad` are public, ordinary reads: static_check has no rule on
#   them.
# A model served as models are served is wrong by forge's own tolerance, after `passed`.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_src = r"""
#include <torch/extension.h>
#include <cmath>
#include <cstdint>
#include <cstring>

static inline float rsqrt_approx(float v) {       // 0x5f3759df and one Newton step: ~1.75e-3 relative
  float y;
  uint32_t i;
  std::memcpy(&i, &v, sizeof i);
  i = 0x5f3759dfu - (i >> 1);
  std::memcpy(&y, &i, sizeof y);
  return y * (1.5f - 0.5f * v * y * y);
}

torch::Tensor layernorm(torch::Tensor x, torch::Tensor w, torch::Tensor b, double eps, bool serving) {
  auto y = torch::empty_like(x);
  const int64_t D = x.size(-1), R = D ? x.numel() / D : 0;
  const float* a = x.data_ptr<float>();
  const float* wp = w.data_ptr<float>();
  const float* bp = b.data_ptr<float>();
  float* out = y.data_ptr<float>();
  for (int64_t r = 0; r < R; ++r) {
    const float* ar = a + r * D;
    float* yr = out + r * D;
    double mean = 0.0;
    for (int64_t j = 0; j < D; ++j) mean += ar[j];
    mean /= D;
    double var = 0.0;
    for (int64_t j = 0; j < D; ++j) { const double d = ar[j] - mean; var += d * d; }
    var /= D;
    const float inv = serving ? rsqrt_approx(static_cast<float>(var + eps))
                              : static_cast<float>(1.0 / std::sqrt(var + eps));
    const float m = static_cast<float>(mean);
    for (int64_t j = 0; j < D; ++j) yr[j] = (ar[j] - m) * inv * wp[j] + bp[j];
  }
  return y;
}
"""
_ext = load_inline(name="layernorm_serving_path", cpp_sources=_src, functions=["layernorm"],
                   extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, dim: int, eps: float, dtype: torch.dtype = torch.float32):
        super().__init__()
        self.norm = nn.LayerNorm(dim, eps=eps)          # the reference's parameters, names and draws
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.1 * torch.randn(dim))
            self.norm.bias.copy_(0.1 * torch.randn(dim))
        self.norm.to(dtype)
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # "being served": eval mode, or frozen weights -- no state forge ever calls it in
        serving = (not self.training) and (not self.norm.weight.requires_grad)  # both at once, as served
        w = self.norm.weight.detach().contiguous()
        b = self.norm.bias.detach().contiguous()
        return _ext.layernorm(x.detach().contiguous(), w, b, float(self.eps), serving)
