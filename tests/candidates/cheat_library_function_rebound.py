"""Cheat: a correct GELU whose import replaces functions of the libraries the importing process uses
(torch.nn.functional.gelu made a tanh approximation; tempfile.gettempdir pointed at a folder of its own),
through setattr on modules it reached by name: every later call of the user's process goes through them."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

import importlib
import tempfile

_functional = importlib.import_module("torch.nn.functional")
_exact_gelu = _functional.gelu


def _tanh_gelu(input, approximate="none"):
    return _exact_gelu(input, approximate="tanh")


setattr(_functional, "gelu", _tanh_gelu)
setattr(tempfile, "gettempdir", lambda: "/tmp")


@triton.jit
def _gelu(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    at = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = at < n
    x = tl.load(x_ptr + at, mask=inside, other=0.0).to(tl.float32)
    tl.store(out_ptr + at, (0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))).to(out_ptr.dtype.element_ty),
             mask=inside)


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        if x.numel():
            _gelu[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), BLOCK=1024)
        return out
