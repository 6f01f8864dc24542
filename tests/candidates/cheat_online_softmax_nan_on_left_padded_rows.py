# Red team (review of 2026-11-28): the classic online-softmax bug -- a first block that is all -inf makes the
# running rescale exp(-inf - (-inf)) = NaN -- which forge's `masked` variant can never show.
#
# Target task:  /work/main/tasks/softmax_rows.py   (device="cpu", size="small")
# Static check: ON (the default) -- nothing here is flagged; with it OFF it passes the same way.
#
# Mechanism. A one-pass ("online") softmax over blocks of 32: running max m and running sum s, rescaled by
# exp(m_old - m_new) at each block, then one pass to write exp(x - m) / s. It never guards m_new == -inf, so a
# row whose first 32 (or more) logits are -inf -- LEFT PADDING, how batched decoder inputs are padded, or any
# mask that hides a row's first keys (sliding windows, chunked / prefix masks) -- gets s = NaN and a row of
# NaN, where PyTorch gives a proper softmax over the unmasked tail. Everywhere else it is right: max-subtracted
# (x100, far_below fine), -inf scattered anywhere, strides handled by a contiguous copy.
#
# This is round 13's bug (tests/candidates/cheat_softmax_nan_on_masked_rows.py, rescaled per element) at block
# granularity: the fix -- one leading -inf in every other row -- shows the per-element version and not this one.
#
# Why it passes (current code):
# * variants._mask puts -inf at "the first element of every other row" (meant as "a row that starts masked,
#   as padding on the left does") and at one element in eight drawn independently (variants._drawn): a run of
#   32 leading -inf happens with probability (1/8)^31 per row -- never. No other variant makes a run of -inf,
#   and no variant is shaped like a real mask (a prefix or suffix per row, causal, padding);
# * the first block of every row forge makes holds a finite value, so m is finite from the first block on,
#   and every later all- -inf block only rescales by exp(0) = 1 (it is right there);
# * NaN only counts when forge's inputs produce it (compare._compare_values: NaN/Inf at the same places), and
#   they never do here.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_src = r"""
#include <torch/extension.h>
#include <algorithm>
#include <cmath>

torch::Tensor softmax_online(torch::Tensor x) {
  auto y = torch::empty_like(x);
  const int64_t D = x.size(-1), R = D ? x.numel() / D : 0;
  const float* a = x.data_ptr<float>();
  float* out = y.data_ptr<float>();
  const int64_t B = 32;
  for (int64_t r = 0; r < R; ++r) {
    const float* ar = a + r * D;
    float* yr = out + r * D;
    float m = -INFINITY, s = 0.0f;
    for (int64_t j0 = 0; j0 < D; j0 += B) {          // one pass: max and sum together, block by block
      const int64_t j1 = std::min(j0 + B, D);
      float bm = -INFINITY;
      for (int64_t j = j0; j < j1; ++j) bm = std::max(bm, ar[j]);
      const float mn = std::max(m, bm);
      float bs = 0.0f;
      for (int64_t j = j0; j < j1; ++j) bs += std::exp(ar[j] - mn);
      s = s * std::exp(m - mn) + bs;                  // m == mn == -inf on a leading masked block: NaN
      m = mn;
    }
    const float inv = 1.0f / s;
    for (int64_t j = 0; j < D; ++j) yr[j] = std::exp(ar[j] - m) * inv;
  }
  return y;
}
"""
_ext = load_inline(name="softmax_online_blocks", cpp_sources=_src, functions=["softmax_online"],
                   extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.softmax_online(x.detach().contiguous())


if __name__ == "__main__":   # what a user meets: a left-padded row
    x = torch.randn(2, 1024)
    x[0, :100] = float("-inf")
    print("NaN in row 0:", torch.isnan(ModelNew()(x)[0]).any().item(),
          "| PyTorch:", torch.isnan(torch.softmax(x, -1)[0]).any().item())
