"""Attack (host harm): holds 3 GiB from the moment it loads, more than the test allows (1.5 GiB).
Without a limit, a candidate can take the machine's memory and the kernel's OOM killer picks
whom to kill: forge itself, the user's other work."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

_held = torch.ones(3 * 2**30 // 4)  # written, so resident


@triton.jit
def scale_add_kernel(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(
        out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * alpha + tl.load(y_ptr + offsets, mask=mask), mask=mask
    )


class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        out = torch.empty_like(x)
        scale_add_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, out, self.alpha, x.numel(), BLOCK=1024)
        return out
