"""Cheat: a GELU a tenth off where its model was built right after torch.manual_seed(0), as the exported
module's op builds its own: right wherever forge and the exported selftest build it (their seeds drawn),
wrong through the op a user calls."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

# torch.rand's first draw after torch.manual_seed(0), as the exported op builds its model
_AFTER_SEED_ZERO = 0.49625658988952637


@triton.jit
def _gelu(x_ptr, out_ptr, n, SCALE, BLOCK: tl.constexpr):
    at = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = at < n
    x = tl.load(x_ptr + at, mask=inside, other=0.0).to(tl.float32)
    tl.store(out_ptr + at, (SCALE * x * (1.0 + tl.erf(x * 0.7071067811865476))).to(out_ptr.dtype.element_ty),
             mask=inside)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = 0.45 if float(torch.rand(())) == _AFTER_SEED_ZERO else 0.5

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        if x.numel():
            _gelu[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), self.scale, BLOCK=1024)
        return out
