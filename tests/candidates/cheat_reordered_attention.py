"""Attack (tests/tasks/naive_attention.py): every FLOP is PyTorch's, fewer PyTorch ops than the
reference, and the own 'kernel' is a trivial C++ call.

* q@k^T/sqrt(d) + causal mask in ONE hidden torch.baddbmm (additive -inf bias cached at init,
  alpha = 1/sqrt(d)), then a hidden in-place softmax: hidden from the census with
  torch._C._DisableTorchDispatch reached through operator.attrgetter;
* the final  @ v  is left visible to the census (bmm, which the reference runs too), so the
  census records PyTorch work: the host's "unseen" sample rule is then skipped, and the samples
  land in functions the reference runs too (MKL GEMM, the softmax kernel), never "foreign"."""
import math
import operator

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include <torch/extension.h>
int64_t touch(torch::Tensor x) { return x.numel(); }
"""
_ext = load_inline(name="a07_touch_ext", cpp_sources=_SRC, functions=["touch"], extra_cflags=["-O1"])
_hide = operator.attrgetter("_C._DisableTorchDispatch")(torch)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.bias = {}

    def forward(self, q, k, v):
        _ext.touch(q)
        b, h, s, d = q.shape
        key = (s, k.shape[-2])
        with _hide():
            if key not in self.bias:
                self.bias[key] = torch.full((s, k.shape[-2]), float("-inf")).triu(1)
            q3, k3 = q.reshape(b * h, s, d), k.reshape(b * h, k.shape[-2], d)
            scores = torch.baddbmm(self.bias[key].expand(b * h, -1, -1), q3, k3.transpose(1, 2),
                                   alpha=1.0 / math.sqrt(d))
            p = torch.softmax(scores, -1)
        return torch.matmul(p.reshape(b, h, s, -1), v)
