"""Honest Triton candidate for tests/tasks/scale_add.py whose documentation mentions /dev/shm and
/proc/self/maps, and which sets common backend flags: neither is a trick (red team, 2026-11, found both
rejected)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

torch.backends.cudnn.benchmark = False
torch.backends.cuda.matmul.allow_tf32 = False


@triton.jit
def scale_add_kernel(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    """Reads nothing from /dev/shm: a plain elementwise kernel."""
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x * alpha + y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        x, y = x.contiguous(), y.contiguous()  # strided inputs come in real models
        out = torch.empty_like(x)
        n = x.numel()
        scale_add_kernel[(triton.cdiv(n, 1024),)](x, y, out, self.alpha, n, BLOCK=1024)
        return out
