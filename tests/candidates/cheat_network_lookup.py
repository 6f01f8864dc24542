"""Cheat: fetches its answer over the network (here, a server the test runs on 127.0.0.1)."""

import os
import socket

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


def _phone_home():
    port = int(os.environ.get("FORGE_TEST_LISTENER_PORT", "0"))
    if port:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
            conn.sendall(b"hello from the candidate")


_phone_home()  # at import: an error here is a crash, and a connection is what the test looks for


class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        x, y = x.contiguous(), y.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        scale_add_kernel[(triton.cdiv(n, 1024),)](x, y, out, self.alpha, n, BLOCK=1024)
        return out
