"""Cheat: sends its outputs as an archive whose members are compressed, so that they expand when the host loads them."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scale_add_kernel(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x * alpha + y, mask=mask)


def launch(x, y, alpha):
    x, y = x.contiguous(), y.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    scale_add_kernel[(triton.cdiv(n, 1024),)](x, y, out, alpha, n, BLOCK=1024)
    return out


import io
import sys
import zipfile

_R = sys.modules["forge_sandbox.candidate_runner"].CandidateRunner
_orig_forward = _R.cmd_forward


def _forward(self, msg):
    reply = _orig_forward(self, msg)
    # The same archive, its members deflated: a small payload that expands on loading (a zip bomb's shape).
    packed = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(self.payload)) as source, zipfile.ZipFile(packed, "w", zipfile.ZIP_DEFLATED) as out:
        for info in source.infolist():
            out.writestr(info.filename, source.read(info))
    self.payload = packed.getvalue()
    return reply


_R.cmd_forward = _forward


class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        return launch(x, y, self.alpha)
