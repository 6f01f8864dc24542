"""The channel between the host and a runner process.

Commands and replies are single JSON lines on two private pipes that the host
creates and passes to the child (never stdout: a candidate can print anything
there). Tensors are serialized with ``torch.save`` and read by the host with
``torch.load(weights_only=True)``, which refuses arbitrary objects, so a
hostile runner cannot make the host execute code.

Outputs follow a reply on the pipe itself (``payload_bytes`` raw bytes after
the JSON line): the reference's, because they are the answers and must never
touch the file system, where a candidate could look for them; the candidate's,
because the host then reads no more than it asked for (the size of the
reference's outputs) and no file a candidate could swap, grow or fake. Inputs,
which are no secret, travel as files the reference writes.

Everything a runner sends is untrusted data: the host checks its shape here
and its meaning in evaluate.py.
"""

from __future__ import annotations

import io
import json
import os
import select
import time
import zipfile

import torch

from forge_sandbox.verdict import shortened

MAX_MESSAGE_BYTES = 64 * 1024 * 1024
# What an untrusted runner may send: its replies are a few KiB (6 KiB the largest seen, a compiler's
# error), and a parsed message takes some 30 times its bytes in the host's memory, which the
# candidate's memory limit does not cover.
UNTRUSTED_MESSAGE_BYTES = 1024 * 1024
UNTRUSTED_TEXT_CHARS = 16 * 1024  # any one string in such a message (an exception's detail: 8000)
# The most one read from a pipe asks for: a pipe holds 64 KiB unless resized, so a larger read returns no
# more, and it costs more: Python allocates the whole request first, and a request above malloc's mmap
# threshold maps and unmaps it each time, which in a process with threads on other cores is a TLB
# shootdown by IPIs. Reads of 4 MiB took 9 us single-threaded and 30 us beside two threads on a 2-core
# VM, against 0.5-0.7 us for 4 KiB (2026-11-29), inside the host's window around every timed call.
READ_CHUNK = 1 << 16


class ChannelClosed(Exception):
    """The other side closed its end (the runner exited or crashed)."""


class ChannelTimeout(Exception):
    """No complete reply arrived before the deadline."""


class ProtocolViolation(Exception):
    """The runner sent something the host did not ask for, or not in the expected form."""


def write_message(fd: int, message: dict, payload: bytes = b"", timeout: float | None = None) -> None:
    """One JSON line, then ``payload`` raw bytes when the message announces them.

    On a non-blocking descriptor (the host's) a reader that stops reading
    cannot block the writer past ``timeout``: ChannelTimeout instead.
    """
    if payload:
        message = {**message, "payload_bytes": len(payload)}
    deadline = None if timeout is None else time.monotonic() + timeout
    # The line and the payload written one after the other: joined, a payload of outputs at a task's
    # full size (hundreds of MB) would be copied once more for nothing.
    write_all(fd, memoryview((json.dumps(message, allow_nan=True) + "\n").encode()), deadline)
    if payload:
        write_all(fd, memoryview(payload).cast("B"), deadline)


def write_all(fd: int, view: memoryview, deadline: float | None) -> None:
    """All of ``view`` to ``fd``; on a non-blocking descriptor ChannelTimeout past ``deadline``."""
    while view:
        try:
            n = os.write(fd, view)
        except BlockingIOError:
            wait = None if deadline is None else deadline - time.monotonic()
            if wait is not None and wait <= 0:
                raise ChannelTimeout() from None
            select.select([], [fd], [], wait)
            continue
        view = view[n:]


class LineReader:
    """Reads newline-terminated JSON messages from a pipe with a deadline: each at most ``limit`` bytes,
    and its strings cut to ``text_limit`` characters where one is given."""

    def __init__(self, fd: int, alive=None, limit: int = MAX_MESSAGE_BYTES, text_limit: int | None = None) -> None:
        self.fd = fd
        self.buffer = b""
        self.limit = limit
        self.text_limit = text_limit
        # A runner can die while a child it forked keeps the pipe open, so EOF never
        # comes: ``alive()`` is asked between waits, and a dead runner ends the read.
        self.alive = alive or (lambda: True)

    def _wait(self, deadline: float | None, spin_s: float = 0.0) -> bytes:
        """The next chunk; ChannelTimeout at the deadline, ChannelClosed on EOF or a dead writer. With
        ``spin_s``, polled without sleeping for that long first (see ``read``)."""
        spin_until = time.monotonic() + spin_s
        while spin_s and time.monotonic() < spin_until:
            ready, _, _ = select.select([self.fd], [], [], 0)
            if ready:
                chunk = os.read(self.fd, READ_CHUNK)
                if not chunk:
                    raise ChannelClosed()
                return chunk
            os.sched_yield()
        while True:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise ChannelTimeout()
            ready, _, _ = select.select([self.fd], [], [], 0.5 if left is None else min(0.5, left))
            if ready:
                chunk = os.read(self.fd, READ_CHUNK)
                if not chunk:
                    raise ChannelClosed()
                return chunk
            if not self.alive():
                ready, _, _ = select.select([self.fd], [], [], 0.2)  # what it wrote before dying
                chunk = os.read(self.fd, READ_CHUNK) if ready else b""
                if not chunk:
                    raise ChannelClosed()
                return chunk

    def pending(self) -> bool:
        """True when bytes are waiting that nobody asked for."""
        if self.buffer:
            return True
        ready, _, _ = select.select([self.fd], [], [], 0)
        if not ready:
            return False
        chunk = os.read(self.fd, READ_CHUNK)
        self.buffer += chunk
        return bool(chunk)

    def wait_line(self, timeout: float | None, spin_s: float = 0.0) -> None:
        """Return once a whole line (or more than ``limit`` bytes) has arrived, reading nothing of it: a
        host that times a runner's answer stops its clock (and the runner) first and parses after. As
        ``read``, of which it is the first half."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self.buffer:
            self.buffer += self._wait(deadline, spin_s)
            if len(self.buffer) > self.limit:
                break

    def read(self, timeout: float | None, spin_s: float = 0.0) -> dict:
        """The next message. ``spin_s``: poll for it without sleeping that long first, for a reader whose
        clock runs meanwhile: a process that sleeps through a call of milliseconds wakes late (on a
        virtual machine its idle processor may be descheduled), and the reader's clock with it."""
        self.wait_line(timeout, spin_s)
        message = _parse(self._take_line())
        if self.text_limit is None:
            return message
        try:
            return _cut_strings(message, self.text_limit)
        except RecursionError:
            raise ProtocolViolation("malformed message: nested deeper than the host reads") from None

    def next_line(self) -> bytes:
        """The next line as it came, nothing parsed, through plain blocking reads (no deadline, no
        select): for a runner's timed call, whose word the host wrote before resuming it."""
        while b"\n" not in self.buffer and len(self.buffer) <= self.limit:
            chunk = os.read(self.fd, READ_CHUNK)
            if not chunk:
                raise ChannelClosed()
            self.buffer += chunk
        return self._take_line()

    def _take_line(self) -> bytes:
        line, _, self.buffer = self.buffer.partition(b"\n")
        if len(line) > self.limit:
            raise ProtocolViolation(f"a message larger than {self.limit / 2**20:g} MiB")
        return line

    def read_exact(self, n: int, timeout: float | None) -> bytes:
        """The ``n`` raw bytes that follow a reply."""
        deadline = None if timeout is None else time.monotonic() + timeout
        chunks, have = [self.buffer[:n]], len(self.buffer[:n])
        self.buffer = self.buffer[n:]
        while have < n:
            chunk = self._wait(deadline)
            self.buffer = chunk[n - have :]
            chunks.append(chunk[: n - have])
            have += len(chunks[-1])
        return b"".join(chunks)


def _parse(line: bytes) -> dict:
    try:
        message = json.loads(line)
    except (ValueError, RecursionError) as exc:
        raise ProtocolViolation(f"malformed message: {type(exc).__name__}") from None
    if not isinstance(message, dict):
        raise ProtocolViolation("message is not a JSON object")
    return message


def _cut_strings(value, limit: int):
    """``value`` with every string (keys too) longer than ``limit`` cut to it, marked as cut."""
    if isinstance(value, str):
        return shortened(value, limit)
    if isinstance(value, list):
        return [_cut_strings(v, limit) for v in value]
    if isinstance(value, dict):
        return {_cut_strings(k, limit): _cut_strings(v, limit) for k, v in value.items()}
    return value


def save_tensors(path: str, value) -> None:
    torch.save(value, path)


def tensors_to_bytes(value) -> memoryview:
    """``value`` saved as torch.save does, for write_message: a view of the archive, not a copy of it."""
    buffer = io.BytesIO()
    torch.save(value, buffer)
    return buffer.getbuffer()


def load_tensors(source):
    """Load what a runner sent (a path or bytes), refusing anything but tensors and plain containers."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        source = io.BytesIO(source)
    return torch.load(source, map_location="cpu", weights_only=True)


class UnsafeArchive(Exception):
    """What a runner sent is not a plain torch.save archive of the expected size."""


def load_untrusted_tensors(data: bytes, limit: int):
    """Tensors from a runner that is not trusted: the archive's members must be stored, never
    compressed (nothing expands beyond the bytes received), and hold at most ``limit`` bytes."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise UnsafeArchive(f"not a tensor archive ({type(exc).__name__})") from None
    if any(m.compress_type != zipfile.ZIP_STORED for m in members):
        raise UnsafeArchive("a compressed member (an archive that expands on loading)")
    total = sum(m.file_size for m in members)
    if total > limit:
        raise UnsafeArchive(f"{total} bytes unpacked, more than the {limit} expected")
    return load_tensors(data)
