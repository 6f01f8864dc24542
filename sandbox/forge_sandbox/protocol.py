"""The channel between the host and a runner process.

Commands and replies are single JSON lines on two private pipes that the host
creates and passes to the child (never stdout: a candidate can print anything
there). Tensors are serialized with ``torch.save`` and read by the host with
``torch.load(weights_only=True)``, which refuses arbitrary objects, so a
hostile runner cannot make the host execute code.

The reference runner's outputs are the answers, so they never touch the file
system, where a candidate could look for them: they follow the reply on the
pipe itself (``payload_bytes`` raw bytes after the JSON line). The candidate
runner's outputs and the inputs, which are no secret, travel as files.

Everything a runner sends is untrusted data: the host checks its shape here
and its meaning in evaluate.py.
"""

from __future__ import annotations

import io
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


def write_message(fd: int, message: dict, payload: bytes = b"") -> None:
    """One JSON line, then ``payload`` raw bytes when the message announces them."""
    if payload:
        message = {**message, "payload_bytes": len(payload)}
    data = (json.dumps(message, allow_nan=True) + "\n").encode() + payload
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
        return _parse(line)

    def read_exact(self, n: int, timeout: float | None) -> bytes:
        """The ``n`` raw bytes that follow a reply."""
        deadline = None if timeout is None else time.monotonic() + timeout
        chunks, have = [self.buffer[:n]], len(self.buffer[:n])
        self.buffer = self.buffer[n:]
        while have < n:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self.fd], [], [], wait)
            if not ready:
                raise ChannelTimeout()
            chunk = os.read(self.fd, min(n - have, 1 << 22))
            if not chunk:
                raise ChannelClosed()
            chunks.append(chunk)
            have += len(chunk)
        return b"".join(chunks)


def _parse(line: bytes) -> dict:
    try:
        message = json.loads(line)
    except ValueError as exc:
        raise ProtocolViolation(f"malformed message: {exc}") from None
    if not isinstance(message, dict):
        raise ProtocolViolation("message is not a JSON object")
    return message


def save_tensors(path: str, value) -> None:
    torch.save(value, path)


def tensors_to_bytes(value) -> bytes:
    buffer = io.BytesIO()
    torch.save(value, buffer)
    return buffer.getvalue()


def load_tensors(source):
    """Load what a runner sent (a path or bytes), refusing anything but tensors and plain containers."""
    if isinstance(source, bytes):
        source = io.BytesIO(source)
    return torch.load(source, map_location="cpu", weights_only=True)
