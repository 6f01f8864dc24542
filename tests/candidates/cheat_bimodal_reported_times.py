"""Cheat: an honest kernel whose reported call times are split in two (red team round 11, 2026-11).

The runner's answer is rewritten in its own process (the function that formats it): in each timed block,
half of the calls (the census call among them: it runs under a dispatch mode) report 1000 ms, the other
half 0.01 ms. Against a block's
median window, the median report (500 ms) left nothing unexplained, and once the census call was set
aside the short reports were the majority: 42x for a kernel that earns 0.9x, the floor of the host's
resolution its only bound.
"""

import sys

import torch
import torch.nn as nn
from torch.utils._python_dispatch import _get_current_dispatch_mode
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include <torch/extension.h>
#include <cmath>
torch::Tensor softmax_rows(torch::Tensor x) {
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  int64_t R = xc.size(0), C = xc.size(1);
  const float* p = xc.data_ptr<float>(); float* q = y.data_ptr<float>();
  for (int64_t r = 0; r < R; ++r) {
    const float* a = p + r * C; float* b = q + r * C;
    float m = -INFINITY; for (int64_t c = 0; c < C; ++c) m = a[c] > m ? a[c] : m;
    float s = 0.f; for (int64_t c = 0; c < C; ++c) { float e = std::exp(a[c] - m); b[c] = e; s += e; }
    float inv = 1.f / s; for (int64_t c = 0; c < C; ++c) b[c] *= inv;
  }
  return y;
}
"""
_ext = load_inline(name="bimodal_reports_softmax", cpp_sources=_SRC, functions=["softmax_rows"], extra_cflags=["-O3"])

_state = {"census": False, "long": 0}


def _calls_in_block():
    frame = sys._getframe()
    while frame is not None:
        if frame.f_code.co_name == "_time_hosted_block":
            return frame.f_locals.get("n")
        frame = frame.f_back
    return None


def _split(call_answer):
    def split_answer(i, ms, span, loop, out):
        n = _calls_in_block()
        if n and n % 2 == 0 and n >= 20:
            if i == 0:
                _state["long"] = 0
            if _state["census"] or _state["long"] < n // 2 - 1:
                _state["long"] += not _state["census"]
                ms = 1000.0
            else:
                ms = 0.01
        return call_answer(i, ms, span, loop, out)

    return split_answer


_hosted = sys.modules.get("forge_sandbox.hosted_calls")  # the answer's formatting, which the runner looks up per call
if _hosted is not None:
    _hosted.call_answer = _split(_hosted.call_answer)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        _state["census"] = _get_current_dispatch_mode() is not None
        return _ext.softmax_rows(x)
