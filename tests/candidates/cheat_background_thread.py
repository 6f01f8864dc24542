"""Cheat: returns an empty output at once and fills it from a background thread."""

import threading

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


# One launch at a time: Triton's interpreter (the CPU's stand-in) cannot run two at once, and this
# cheat is about the thread being left running, not about the interpreter failing under it.
_one_launch = threading.Lock()


def launch(x, y, alpha):
    x, y = x.contiguous(), y.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    with _one_launch:
        scale_add_kernel[(triton.cdiv(n, 1024),)](x, y, out, alpha, n, BLOCK=1024)
    return out


class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        x, y = x.contiguous(), y.contiguous()
        out = torch.empty_like(x)
        launch(x[:8], y[:8], self.alpha)

        def work():
            out.copy_(launch(x, y, self.alpha))

        threading.Thread(target=work).start()
        return out
