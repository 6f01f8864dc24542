"""The one function that times a model, and the helpers that feed it inputs.

Method (:func:`time_calls`), the same for the references and the candidate:

* the last-level cache is flushed (a buffer larger than L2 is zeroed) before
  every call, and only then does the runner tell the host it is ready;
* the host answers with the call's inputs, and from then on its own clock
  runs: pool entry ``slot`` (a set made by the task's ``get_inputs`` from a
  host seed) rolled by ``shift`` along its first non-trivial dimension and
  every floating-point value scaled by its own factor in [0.9, 1.1] (where
  in a fixed pattern, from a per-call host seed: :class:`Staging`), written
  into one of two staging buffers that alternate. No two calls share input
  values, and none is known before the host's word, so no cache (by pointer,
  by value, or by the layout of a known pool) can return an output it has
  seen, and nothing can be computed ahead;
* CUDA: an event pair around the call on the current stream, with a
  *device-wide* synchronize before the end event, so work hidden on another
  stream or left running is counted; CPU: ``time.perf_counter`` around it;
* a checksum of the output goes back to the host at once, and its clock
  stops when that arrives: the host's time for a call is its staging, the call
  and its checksum, which a candidate cannot shorten without the output;
* warm-up is a block like any other whose times the caller discards;
* each call's span on CLOCK_MONOTONIC goes back with its checksum, so that
  the host can tell which of the samples it takes of the runner's threads
  (cpu_samples) fell inside the forward pass. A false span moves samples
  between "forward" and "around it", and both are held to rules
  (op_census.judge_samples); it changes no time.

The per-call times measured here come from inside a runner's process. The
reference's are trusted; the candidate's are its own claim, which the host
bounds block by block with its own clock (benchmark.py): no clock inside the
candidate's process decides.

On the CPU the host takes the staging and the checksum out of the runner
(:func:`time_hosted_calls`, hosted_calls.py): it stages each call's inputs
into memory it shares with the runner and reads the output from the runner's
memory, with the runner stopped, and its window runs from resuming the runner
to having stopped it again. What the runner does then is only the call, so a
candidate that rewrites forge's code in its own process (it can reach it)
changes nothing the host counts.
"""

from __future__ import annotations

import math
import time

import torch

# Bound when this module is imported, which the runner does before the candidate
# is imported: a candidate that patches time.perf_counter or torch.cuda.Event
# later does not reach these names, and the runner checks the originals stayed.
_perf_counter = time.perf_counter
_monotonic_ns = time.monotonic_ns
_cuda_event = torch.cuda.Event
_cuda_synchronize = torch.cuda.synchronize

CPU_FLUSH_BYTES = 32 * 1024 * 1024


def bound_primitives() -> dict:
    """The timing primitives as bound at import, to compare with the live ones."""
    return {
        "time.perf_counter": _perf_counter,
        "torch.cuda.Event": _cuda_event,
        "torch.cuda.synchronize": _cuda_synchronize,
    }


def live_primitives() -> dict:
    return {
        "time.perf_counter": time.perf_counter,
        "torch.cuda.Event": torch.cuda.Event,
        "torch.cuda.synchronize": torch.cuda.synchronize,
    }


def flush_buffer(device: torch.device) -> torch.Tensor:
    """A buffer bigger than the last-level cache; zeroing it evicts the inputs."""
    if device.type == "cuda":
        l2 = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 50 * 2**20)
        nbytes = max(256 * 2**20, 4 * l2)
    else:
        nbytes = CPU_FLUSH_BYTES
    return torch.empty(nbytes // 4, dtype=torch.int32, device=device)


def roll_dim(t: torch.Tensor) -> int | None:
    """The dimension timing inputs are rolled along: the first with more than one element."""
    for d, n in enumerate(t.shape):
        if n > 1:
            return d
    return None


JITTER = 0.1  # each timed input value is scaled by a factor in [1 - JITTER, 1 + JITTER]
JITTER_OFFSETS = 1 << 20  # where in the jitter pattern a call's factors may start


class Staging:
    """Where a call's inputs are staged: two sets of buffers that alternate.

    A call's inputs are the pool entry rolled by the host's shift, each value scaled by its own factor
    in [1 - JITTER, 1 + JITTER]: a window into one fixed pattern of uniform values, starting where the
    call's seed says. That the pattern is public gives nothing: an output known ahead would have to be
    one for every pool entry, shift and start. Staging is one pass (two multiplications that also
    roll), a small part of the host's window beside the call."""

    def __init__(self, template: list, sets: list[list] | None = None) -> None:
        """``sets``: the two sets of buffers to stage into (the host's shared memory, hosted_calls);
        by default new ones shaped as ``template``."""
        self.sets = sets or [[torch.empty_like(x) if isinstance(x, torch.Tensor) else x for x in template]
                             for _ in range(2)]  # fmt: skip
        longest = max((x.numel() for x in template if isinstance(x, torch.Tensor)), default=0)
        device = next((x.device for x in template if isinstance(x, torch.Tensor)), torch.device("cpu"))
        generator = torch.Generator(device=device)
        generator.manual_seed(0)
        pattern = torch.rand(longest + JITTER_OFFSETS, generator=generator, device=device)
        self.pattern = pattern.mul_(2 * JITTER).add_(1 - JITTER)

    def fill(self, which: int, source: list, shift: int, seed: int) -> list:
        """Stage pool entry ``source`` into set ``which`` and return it."""
        for t, (dst, src) in enumerate(zip(self.sets[which], source)):
            if not isinstance(src, torch.Tensor):
                continue
            d = roll_dim(src)
            if not (src.is_floating_point() and d is not None):
                dst.copy_(src)
                continue
            start = (seed + t * 0x9E3779B1) % JITTER_OFFSETS  # each tensor its own window
            factors = self.pattern[start : start + src.numel()].view(src.shape)
            n, s = src.shape[d], shift % src.shape[d]
            # dst = roll(src, s, d) * factors: src's row i lands at row (i + s) % n
            torch.mul(src.narrow(d, n - s, s), factors.narrow(d, 0, s), out=dst.narrow(d, 0, s))
            torch.mul(src.narrow(d, 0, n - s), factors.narrow(d, s, n - s), out=dst.narrow(d, s, n - s))
        return self.sets[which]


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        _cuda_synchronize()


def time_calls(model, pool: list[list], n: int, device: torch.device, start_call, end_call) -> list[float]:
    """Time ``n`` calls of ``model``; return ms per call.

    ``start_call(i)`` waits for the host's word on call ``i`` and returns its
    inputs, ``(slot, shift, seed)``, and a context manager the call runs inside
    (the operator census of a call the host picked, or one that does nothing).
    ``end_call(i, ms, output, span)`` runs right after the call; it sends the
    host the output's checksum, which stops the host's clock, and the call's
    ``[start, end]`` in CLOCK_MONOTONIC nanoseconds.
    """
    staging = Staging(pool[0])
    flush = flush_buffer(device)
    times = []
    with torch.no_grad():
        for i in range(n):
            flush.zero_()
            _sync(device)
            (slot, shift, seed), context = start_call(i)
            inputs = staging.fill(i % 2, pool[slot], shift, seed)
            _sync(device)
            started_ns = _monotonic_ns()
            with context:
                if device.type == "cuda":
                    start, end = _cuda_event(enable_timing=True), _cuda_event(enable_timing=True)
                    start.record()
                    out = model(*inputs)
                    _cuda_synchronize()  # device-wide: work on any stream counts
                    end.record()
                    end.synchronize()
                    times.append(start.elapsed_time(end))
                else:
                    out, ms = _cpu_call(model, inputs)
                    times.append(ms)
            end_call(i, times[-1], out, [started_ns, _monotonic_ns()])
            del out
    return times


def _cpu_call(model, inputs: list) -> tuple[object, float]:
    """One call on the CPU: its output and its milliseconds on the process's clock."""
    t0 = _perf_counter()
    out = model(*inputs)
    return out, (_perf_counter() - t0) * 1e3


def time_hosted_calls(model, sets: list[list], n: int, start_call, end_call) -> list[float]:
    """``time_calls`` where the host stages each call's inputs into ``sets`` and reads its output
    (hosted_calls, the CPU): ``start_call(i)`` waits for the host's word and returns which set holds
    the call's inputs and the context it runs inside; ``end_call(i, ms, output, span)`` tells the
    host where the output lies. The host stops the runner after each call, so ``end_call`` must hold
    the output until the host's next word (the host reads it in between). The host's clock runs
    around all of it, so it is as few steps as can be: one clock read on each side of the call."""
    times = []
    with torch.no_grad():
        for i in range(n):
            which, context = start_call(i)
            inputs = sets[which]
            with context:
                started_ns = _monotonic_ns()
                out = model(*inputs)
                ended_ns = _monotonic_ns()
            times.append((ended_ns - started_ns) / 1e6)
            end_call(i, times[-1], out, [started_ns, ended_ns])
            del out
    return times


class Checksummer:
    """A position-weighted checksum of each output: dot(out, w) with w ~ N(0, 1) from a host seed.

    Rolled inputs permute the output, which a plain sum would not notice; a
    random weighting does. For honest outputs the difference of two checksums
    is about ||out_a - out_b||, so the host can compare them with the same
    relative-norm tolerance it uses for whole outputs. Two passes in float64
    when every value is finite; the non-finite ones are counted only when the
    norm shows there are some.
    """

    def __init__(self, seed: int, device: torch.device) -> None:
        self.seed = seed
        self.device = device
        self.weights: dict[int, torch.Tensor] = {}

    def __call__(self, out) -> list[float]:
        if not isinstance(out, torch.Tensor):
            return [float("nan"), float("nan"), -1.0]
        flat = out.detach().reshape(-1).to(torch.float64)
        n = flat.numel()
        if n not in self.weights:
            gen = torch.Generator(device=self.device)
            gen.manual_seed(self.seed)
            self.weights[n] = torch.randn(n, generator=gen, device=self.device, dtype=torch.float64)
        norm = torch.linalg.vector_norm(flat).item()
        if math.isfinite(norm):
            return [torch.dot(flat, self.weights[n]).item(), norm, 0.0]
        finite = torch.isfinite(flat)
        clean = torch.where(finite, flat, torch.zeros_like(flat))
        dot = torch.dot(clean, self.weights[n]).item()
        return [dot, torch.linalg.vector_norm(clean).item(), float(n - int(finite.sum().item()))]
