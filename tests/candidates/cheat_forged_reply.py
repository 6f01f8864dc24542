"""Cheat: writes forged replies into every inherited pipe, hoping one is the verdict channel."""

import fcntl
import json
import os
import stat

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

def forge_replies():
    message = {"ok": True, "times_ms": [1e-6] * 100, "outputs": "/tmp/forged.pt", "trials": []}
    data = (json.dumps(message) + "\n").encode()
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2 and os.path.exists(f"/proc/self/fd/{fd}") and stat.S_ISFIFO(os.fstat(fd).st_mode) and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY:
            os.write(fd, data)


class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        out = launch(x, y, self.alpha)
        forge_replies()
        return out
