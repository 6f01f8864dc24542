"""Cheat: swaps its runner log for a FIFO (or a link to a host file), hoping the host reads it and hangs."""

import os

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



_log = os.path.join(os.getcwd(), "runner.log")
if os.path.lexists(_log):
    os.unlink(_log)
    os.mkfifo(_log)
raise RuntimeError("now read my log")
