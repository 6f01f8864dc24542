"""The channel between the host and a runner process.

Commands and replies are single JSON lines on two private pipes that the host
creates and passes to the child (never stdout: a candidate can print anything
there). Tensors travel as files written with ``torch.save`` and read by the
host with ``torch.load(weights_only=True)``, which refuses arbitrary objects,
so a hostile runner cannot make the host execute code.

Everything a runner sends is untrusted data: the host checks its shape here
and its meaning in evaluate.py.
"""

from __future__ import annotations

import json
import os
import select
import time

import torch

MAX_MESSAGE_BYTES = 64 * 1024 * 1024


class ChannelClosed(Exception):
    """The other side closed its end (the runner exited or crashed)."""


class ChannelTimeout(Exception):
    """No complete reply arrived before the deadline."""


class ProtocolViolation(Exception):
    """The runner sent something the host did not ask for, or not in the expected form."""


def write_message(fd: int, message: dict) -> None:
    data = (json.dumps(message, allow_nan=True) + "\n").encode()
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


class LineReader:
    """Reads newline-terminated JSON messages from a pipe with a deadline."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = b""

    def pending(self) -> bool:
        """True when bytes are waiting that nobody asked for."""
        if self.buffer:
            return True
        ready, _, _ = select.select([self.fd], [], [], 0)
        if not ready:
            return False
        chunk = os.read(self.fd, 65536)
        self.buffer += chunk
        return bool(chunk)

    def read(self, timeout: float | None) -> dict:
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self.buffer:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self.fd], [], [], wait)
            if not ready:
                raise ChannelTimeout()
            chunk = os.read(self.fd, 65536)
            if not chunk:
                raise ChannelClosed()
            self.buffer += chunk
            if len(self.buffer) > MAX_MESSAGE_BYTES:
                raise ProtocolViolation("message larger than 64 MiB")
        line, self.buffer = self.buffer.split(b"\n", 1)
        try:
            message = json.loads(line)
        except ValueError as exc:
            raise ProtocolViolation(f"malformed message: {exc}") from None
        if not isinstance(message, dict):
            raise ProtocolViolation("message is not a JSON object")
        return message


def save_tensors(path: str, value) -> None:
    torch.save(value, path)


def load_tensors(path: str):
    """Load what a runner saved, refusing anything but tensors and plain containers."""
    return torch.load(path, map_location="cpu", weights_only=True)
