"""Cheat: fills its own command pipe and stops, hoping the host's next write blocks forever."""

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


import contextlib
import fcntl
import os
import stat
import signal
import sys

from forge_sandbox import protocol

def _pipe_ends(access: int) -> list[int]:
    """The runner's pipes to the host, found among its open descriptors (its command line names none)."""
    found = []
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            if fd > 2 and stat.S_ISFIFO(os.fstat(fd).st_mode) and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == access:
                found.append(fd)
        except OSError:
            continue
    return sorted(found)

_cmd_fd = _pipe_ends(os.O_RDONLY)[0]
_reply_fd = _pipe_ends(os.O_WRONLY)[0]
_R = sys.modules["forge_sandbox.candidate_runner"].CandidateRunner
_orig_forward = _R.cmd_forward


def _forward(self, msg):  # fill our command pipe, answer the host ourselves, then stop
    reply = {"ok": True, **_orig_forward(self, msg)}
    payload, self.payload = self.payload, b""
    # Reopen our command pipe for writing and fill it, then stop: the host's next
    # os.write() on the command pipe would block forever if nothing bounded send().
    w = os.open(os.path.join("/", "proc", "self", "fd", str(_cmd_fd)), os.O_WRONLY | os.O_NONBLOCK)
    with contextlib.suppress(BlockingIOError):
        while True:
            os.write(w, b"x")
    protocol.write_message(_reply_fd, reply, payload)  # answer the host ourselves
    os.kill(os.getpid(), signal.SIGSTOP)


_R.cmd_forward = _forward


class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        return launch(x, y, self.alpha)
