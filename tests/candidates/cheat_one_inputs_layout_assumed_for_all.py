# Evaluator round 2 (2026-11-26): a kernel that reads the first input's layout and assumes it of the
# others. Right on every input forge made while each trial stored all its inputs alike (all contiguous,
# or all strided and then copied); wrong in a model where an activation is contiguous beside an input
# used as a strided view.
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


class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        if not x.is_contiguous():  # the first input's layout, taken for both
            x, y = x.contiguous(), y.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        BLOCK = 1024
        scale_add_kernel[(triton.cdiv(n, BLOCK),)](x, y, out, self.alpha, n, BLOCK=BLOCK)
        return out
