"""The CPU's timed calls with forge's harness on the host's side of the runner: what makes a call's
inputs and reads its output runs in the host, not in the process being timed.

Where the runner staged a call's inputs and summed its output itself, a candidate could rewrite that
code in its own process (red team round 10, through a traceback's frames: staging and checksum made
cheaper, so that the reference's overhead, which the host takes off the candidate's window, hid most
of the call). Here, per call, with every process of the runner stopped:

* the host writes the call's inputs (timing.Staging: a pool entry rolled and jittered) into memory it
  shares with the runner (:class:`SharedInputs`, a sealed memfd the runner inherits), and flushes the
  cache;
* its clock starts, it names the call (:func:`call_word`, written while the runner is still stopped, so
  that it is there when the runner runs) and resumes the runner's processes; the runner calls the model
  on the shared inputs and answers with where the output lies (:func:`call_answer`);
* the host stops every process of the runner again (host.RunnerProcess.halt) and only then stops its
  clock, so that work left running after the answer counts;
* it reads the output from the stopped process's memory (:class:`OutputReader`, /proc/PID/mem,
  opened before any candidate code ran) and sums it (timing.Checksummer) on its own side.

So the host's window holds a resume, two pipe messages, the runner's loop around the call and a stop.
Of that the host takes off only what lies outside a trusted runner's loop (benchmark._overheads): the
loop's own steps count with the candidate's calls, so a loop rebound to a leaner one in its process
saves nothing that is not counted. Nothing outside the calls can run either: the runner stands stopped
between them.
"""

from __future__ import annotations

import fcntl
import json
import math
import mmap
import os
import secrets

import torch

from forge_sandbox import timing

# The memfd's size, fixed and sealed before the runner starts (its inputs' sizes are not known yet):
# sparse, so only the pages written cost memory, and those a candidate writes are charged to it.
SHARED_BYTES = 1 << 40
ALIGN = 4096
# Each staged tensor starts a drawn number of SHIFT bytes into its pages, as PyTorch's own allocations
# (64-byte aligned) do: one that always started a page showed every timed call's inputs for what they
# were (a review, 2026-11-28: a kernel took a fast path, wrong past logits of 88, on page-aligned inputs
# whose base was a 1-D view of the whole buffer, and a correct one on every input it was verified on).
SHIFT = 64
_MAX_ADDRESS = 1 << 63


class SharedInputs:
    """The memory a runner's timed inputs are staged in: a memfd the host creates, sizes and seals
    before the runner starts (so that the candidate cannot shrink it under the host's mapping: a write
    there would kill the host with SIGBUS), and maps once the inputs' shapes are known."""

    def __init__(self) -> None:
        # Named for nothing: the candidate's runner inherits it, and /proc/self/fd shows the name.
        self.fd = os.memfd_create("buffer", os.MFD_ALLOW_SEALING | os.MFD_CLOEXEC)
        os.ftruncate(self.fd, SHARED_BYTES)
        fcntl.fcntl(self.fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL)
        self.mapping: mmap.mmap | None = None
        self.staging: timing.Staging | None = None
        self.copies: list[list] = []  # per set, what was last staged there, kept apart (``modified``)
        self.flush = timing.flush_buffer(torch.device("cpu"))

    def beyond_the_inputs(self) -> int:
        """Bytes of the memfd in use beyond the inputs laid out in it: what the runner wrote there without
        a mapping the host can see (pwrite, fallocate), which no process's resident count shows."""
        mapping = self.mapping  # the host's watch thread asks while the mapping may be replaced
        try:
            used = os.fstat(self.fd).st_blocks * 512
            inputs = len(mapping) if mapping is not None else 0
        except (OSError, ValueError):
            return 0
        return max(0, used - inputs)

    def inheritable_fd(self) -> int:
        """A descriptor the runner inherits (the host's own stays close-on-exec)."""
        child = os.dup(self.fd)
        os.set_inheritable(child, True)
        return child

    def place(self, template: list) -> list:
        """Lay out two sets of buffers shaped as ``template`` (a pool entry) and stage into them from now
        on; return the layout the runner maps (``map_inputs``)."""
        layout, offset = [], 0
        for _ in range(2):
            entries, offset = _laid_out(template, offset, lambda x: isinstance(x, torch.Tensor))
            layout.append(entries)
        if offset > SHARED_BYTES:
            raise ValueError(f"the timed inputs take {offset} bytes, more than the {SHARED_BYTES} shared")
        self.close_mapping()
        self.mapping = mmap.mmap(self.fd, max(offset, ALIGN))
        sets = [[x if e is None else _tensor_at(self.mapping, e) for x, e in zip(template, entries)]
                for entries in layout]  # fmt: skip
        self.staging = timing.Staging(template, sets)
        self.copies = [
            [torch.empty_like(x) if isinstance(x, torch.Tensor) else None for x in template] for _ in range(2)
        ]
        return layout

    def stage(self, which: int, source: list, shift: int, seed: int, keep_copy: bool = False) -> None:
        """Write a call's inputs into set ``which``, then evict the cache (the runner is stopped). With
        ``keep_copy``, what was staged is also kept apart, for ``modified``."""
        staged = self.staging.fill(which, source, shift, seed)
        if keep_copy:
            for copy, x in zip(self.copies[which], staged):
                if copy is not None:
                    copy.copy_(x)
        self.flush.zero_()

    def modified(self, which: int) -> list[int]:
        """Which of set ``which``'s inputs differ, bit for bit, from what was last staged there with a copy
        kept: a call that wrote into its inputs (red team round 11: a result written over the staged input
        and returned, which spares allocating an output the reference pays for every call)."""
        return [i for i, (x, copy) in enumerate(zip(self.staging.sets[which], self.copies[which]))
                if copy is not None and not _same_bytes(x, copy)]  # fmt: skip

    def close_mapping(self) -> None:
        if self.mapping is not None:
            self.staging = None
            try:
                self.mapping.close()
            except BufferError:  # a tensor still views it: freed with the last of them
                pass
            self.mapping = None

    def close(self) -> None:
        self.close_mapping()
        os.close(self.fd)


def laid_out_as_staged(values: list) -> list:
    """``values`` (a verification trial's inputs, on the CPU) copied into memory laid out as the host lays
    out a timed call's (SharedInputs.place): a memfd of their own, each tensor at a drawn 64-byte offset
    into its pages, a tensor of its own there. A review of 2026-11-28 told timed inputs from every other
    by their storage (not resizable) and the zero bytes before their first element; so that no such
    property tells them apart, verified inputs have it too. The memory lives as long as its tensors."""
    entries, offset = _laid_out(
        values, 0, lambda x: isinstance(x, torch.Tensor) and x.device.type == "cpu" and x.numel() and not x.is_sparse
    )
    if not any(entries):
        return list(values)
    fd = os.memfd_create("buffer", os.MFD_CLOEXEC)
    try:
        os.ftruncate(fd, offset)
        mapping = mmap.mmap(fd, offset)
    finally:
        os.close(fd)
    out = []
    for x, entry in zip(values, entries):
        if entry is None:
            out.append(x)
            continue
        placed = _tensor_at(mapping, entry)
        placed.copy_(x)
        out.append(placed.requires_grad_(x.requires_grad) if x.is_floating_point() else placed)
    return out


def _laid_out(values: list, offset: int, placed) -> tuple[list, int]:
    """Where each of ``values`` that ``placed`` accepts lies from ``offset`` on (None for the others): each
    from a page of its own, a drawn number of SHIFT bytes into it; and the offset past the last."""
    entries = []
    for x in values:
        if not placed(x):
            entries.append(None)
            continue
        stride = list(torch.empty_like(x, device="meta").stride())
        nbytes = _extent(list(x.shape), stride, x.element_size())
        shift = SHIFT * secrets.randbelow(ALIGN // SHIFT)
        entries.append({"offset": offset + shift, "shape": list(x.shape), "stride": stride,
                        "dtype": str(x.dtype).removeprefix("torch."), "bytes": nbytes})  # fmt: skip
        offset += -(-max(nbytes + shift, 1) // ALIGN) * ALIGN
    return entries, offset


def map_inputs(fd: int, layout: list) -> tuple[mmap.mmap, list[list]]:
    """The runner's side: the two sets of input tensors, over the memory the host stages into. Values
    that are not tensors are the pool's (``None`` here: the caller fills them in)."""
    end = max((e["offset"] + e["bytes"] for entries in layout for e in entries if e), default=0)
    mapping = mmap.mmap(fd, max(-(-end // ALIGN) * ALIGN, ALIGN))
    return mapping, [[None if e is None else _tensor_at(mapping, e) for e in entries] for entries in layout]


def _tensor_at(mapping: mmap.mmap, entry: dict) -> torch.Tensor:
    dtype = getattr(torch, entry["dtype"])
    size = dtype.itemsize
    count = max(entry["bytes"] // size, 0)
    if not count:
        return torch.empty(0, dtype=dtype).as_strided(entry["shape"], entry["stride"])
    flat = torch.frombuffer(mapping, dtype=dtype, count=count, offset=entry["offset"])
    # A tensor of its own over the memory, not a view of a flat one (whose _base would tell it from
    # every other input a kernel gets)
    return torch.empty(0, dtype=dtype).set_(flat.untyped_storage(), 0, entry["shape"], entry["stride"])


def _same_bytes(a: torch.Tensor, b: torch.Tensor) -> bool:
    return torch.equal(a.contiguous().reshape(-1).view(torch.uint8), b.contiguous().reshape(-1).view(torch.uint8))


def _extent(shape: list[int], stride: list[int], itemsize: int) -> int:
    """Bytes from a tensor's first element to past its last one (0 when it has none)."""
    if any(n == 0 for n in shape):
        return 0
    return (sum((n - 1) * s for n, s in zip(shape, stride)) + 1) * itemsize


# A timed call's word and answer are inside the host's window, so they are quick to make and to read: a
# line of three numbers, and an answer formatted in one step (1.9 us, where describing the output and
# json.dumps took 4.3; the host parses it after its clock has stopped).


def call_word(i: int, which: int, census: bool) -> bytes:
    """The host's word that starts timed call ``i`` (read by timing.time_hosted_calls): its inputs are set
    ``which``; ``census``: record its operators."""
    return b"%d %d %d\n" % (i, which, census)


def call_answer(i: int, ms: float, span: list[int], loop: list[int], out) -> bytes:
    """The runner's answer to call ``i``, one JSON line: its time by the runner's clock, its span, when the
    runner's loop had the word and began this answer (``loop``), and where its output lies in the runner's
    memory (as ``describe_output`` says it)."""
    if type(out) is torch.Tensor and out.is_cpu:
        return (_ANSWER % (i, ms, span[0], span[1], loop[0], loop[1], out.data_ptr(), list(out.shape),
                           list(out.stride()), str(out.dtype)[len("torch."):])).encode()  # fmt: skip
    answer = {"done": i, "ms": ms, "span": span, "loop": loop, "output": describe_output(out)}
    return (json.dumps(answer) + "\n").encode()


_ANSWER = (
    '{"done": %d, "ms": %r, "span": [%d, %d], "loop": [%d, %d], '
    '"output": {"ptr": %d, "shape": %s, "stride": %s, "dtype": "%s"}}\n'
)


def describe_output(out) -> dict:
    """Where one call's output lies in the runner's memory, for the host to read while the runner is
    stopped. Anything but a plain CPU tensor is described as none."""
    if type(out) is not torch.Tensor or out.device.type != "cpu":
        return {"ptr": None, "type": f"{type(out).__module__}.{type(out).__qualname__}"}
    return {"ptr": out.data_ptr(), "shape": list(out.shape), "stride": list(out.stride()),
            "dtype": str(out.dtype).removeprefix("torch.")}  # fmt: skip


class OutputUnreadable(Exception):
    """What the runner said of an output does not describe memory the host can read, and why."""


class OutputReader:
    """Reads outputs out of one runner process's memory through /proc/PID/mem.

    Opened before the candidate's code runs: the access check is made once, at open, so a process
    that later makes itself undumpable is still read (and one that replaces its program is read as it
    was, which shows as wrong outputs)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.fd = os.open(f"/proc/{pid}/mem", os.O_RDONLY | os.O_CLOEXEC)
        self.last_span = (0, 0)  # the addresses [start, end) of the output ``read`` last read

    def read(self, description: dict, limit: int) -> torch.Tensor | None:
        """The output ``description`` (describe_output) points at, copied out; None for no tensor.
        ``limit``: the most bytes its layout may span (twice the reference's output, and a margin)."""
        if not isinstance(description, dict):
            raise OutputUnreadable("a malformed description of an output")
        ptr = description.get("ptr")
        if ptr is None:
            return None
        shape, stride, dtype = description.get("shape"), description.get("stride"), description.get("dtype")
        if not (_int(ptr) and 0 <= ptr < _MAX_ADDRESS and _ints(shape) and _ints(stride) and len(shape) == len(stride)
                and len(shape) <= 64 and all(n >= 0 for n in shape) and all(s >= 0 for s in stride)):  # fmt: skip
            raise OutputUnreadable("a malformed description of an output")
        kind = getattr(torch, dtype, None) if isinstance(dtype, str) and dtype.isidentifier() else None
        if not isinstance(kind, torch.dtype):
            raise OutputUnreadable(f"an output of no dtype torch knows ({str(dtype)[:40]!r})")
        itemsize = kind.itemsize
        nbytes = _extent(shape, stride, itemsize)
        if nbytes > limit or math.prod(shape) * itemsize > limit:
            raise OutputUnreadable(f"an output of shape {shape} spanning {nbytes} bytes, more than the {limit} allowed")
        buffer = bytearray(-(-nbytes // itemsize) * itemsize)
        self.last_span = (ptr, ptr + nbytes)
        if nbytes:
            try:
                got = os.preadv(self.fd, [buffer], ptr)
            except OSError as exc:
                raise OutputUnreadable(f"an output the host could not read at {ptr:#x} ({exc.strerror})") from None
            if got != nbytes:
                raise OutputUnreadable(f"an output the host could read only {got} of {nbytes} bytes of")
        try:  # a dtype torch knows but cannot view bytes as (bits, sub-byte integers) is no output either
            flat = torch.frombuffer(buffer, dtype=kind) if buffer else torch.empty(0, dtype=kind)
            return flat.as_strided(shape, stride).clone()
        except (RuntimeError, NotImplementedError, TypeError, ValueError) as exc:
            raise OutputUnreadable(f"an output of dtype {dtype} that cannot be read ({type(exc).__name__})") from None

    def close(self) -> None:
        os.close(self.fd)


def _int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _ints(values) -> bool:
    return isinstance(values, list) and all(_int(v) for v in values)
