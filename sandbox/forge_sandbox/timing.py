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
* a call is one forward pass or, where a pass is short beside the host's
  overhead around it, a group of them back to back (``repeat``, chosen by
  the host from the references' times), each on its own copy of the inputs;
* CUDA: an event pair around the call on the current stream, with a
  *device-wide* synchronize before the end event, so work hidden on another
  stream or left running is counted; CPU: ``time.perf_counter`` around it;
* a checksum of the outputs goes back to the host at once, and its clock
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
MAX_REPEAT = 256  # forward passes one host word may start (a group)
JITTER_OFFSETS = 1 << 16  # where in the jitter pattern a call's factors start
JITTER_STEPS = 64  # how far apart a group's copies start in it


class Staging:
    """Where a call's inputs are staged: two sets that alternate, each holding ``repeat`` copies of a
    pool entry's tensors along a new first dimension, and each set's per-pass argument lists (views,
    made once, outside any timing).

    A call's copies are the pool entry rolled by the host's shift, each value scaled by its own factor
    in [1 - JITTER, 1 + JITTER]. The factors are a window into one fixed pattern of uniform values:
    from the call's seed, a start among JITTER_OFFSETS and a step between copies among JITTER_STEPS.
    That the pattern is public gives nothing: an output known ahead would have to be one for every
    pool entry, shift, start and step. Staging is then one pass over the copies (two multiplications
    that also roll), so a group is cheap to stage beside its forward passes."""

    def __init__(self, template: list, repeat: int) -> None:
        self.repeat = repeat
        self.sets = [[torch.empty((repeat, *x.shape), dtype=x.dtype, device=x.device)
                      if isinstance(x, torch.Tensor) else x for x in template] for _ in range(2)]  # fmt: skip
        self.calls = [[[x[j] if isinstance(x, torch.Tensor) else x for x in staged] for j in range(repeat)]
                      for staged in self.sets]  # fmt: skip
        longest = max((x.numel() for x in template if isinstance(x, torch.Tensor)), default=0)
        device = next((x.device for x in template if isinstance(x, torch.Tensor)), torch.device("cpu"))
        generator = torch.Generator(device=device)
        generator.manual_seed(0)
        size = longest + JITTER_OFFSETS + JITTER_STEPS * repeat
        self.pattern = torch.rand(size, generator=generator, device=device).mul_(2 * JITTER).add_(1 - JITTER)

    def fill(self, which: int, source: list, shift: int, seed: int) -> list[list]:
        """Stage pool entry ``source`` into set ``which``; return its per-pass argument lists."""
        start, step = seed % JITTER_OFFSETS, 1 + (seed // JITTER_OFFSETS) % JITTER_STEPS
        for dst, src in zip(self.sets[which], source):
            if not isinstance(src, torch.Tensor):
                continue
            d = roll_dim(src)
            if not (src.is_floating_point() and d is not None):
                dst.copy_(src)  # into every copy
                continue
            factors = self.pattern.as_strided((self.repeat, *src.shape), (step, *_contiguous_strides(src.shape)),
                                              start)  # fmt: skip
            n, s = src.shape[d], shift % src.shape[d]
            # dst = roll(src, s, d) * factors: copy k of src's row i lands at row (i + s) % n.
            torch.mul(src.narrow(d, n - s, s), factors.narrow(d + 1, 0, s), out=dst.narrow(d + 1, 0, s))
            torch.mul(src.narrow(d, 0, n - s), factors.narrow(d + 1, s, n - s), out=dst.narrow(d + 1, s, n - s))
        return self.calls[which]


def _contiguous_strides(shape) -> list[int]:
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return strides[::-1]


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        _cuda_synchronize()


def time_calls(
    model, pool: list[list], n: int, device: torch.device, start_call, end_call, repeat: int = 1
) -> list[float]:
    """Time ``n`` calls of ``model``; return ms per forward pass.

    A call is ``repeat`` forward passes back to back, each on its own copy of
    the call's inputs (jittered apart): where one pass is short beside what the
    host's window holds besides it (staging, checksum, the pipe), a group of
    them makes the window mostly the candidate's work. ``start_call(i)`` waits
    for the host's word on call ``i`` and returns its inputs, ``(slot, shift,
    seed)``, and a context manager the call runs inside (the operator census of
    a call the host picked, or one that does nothing). ``end_call(i, ms,
    outputs, span)`` runs right after the call with the group's outputs; it
    sends the host their checksum, which stops the host's clock, and the
    call's ``[start, end]`` in CLOCK_MONOTONIC nanoseconds.
    """
    staging = Staging(pool[0], repeat)
    flush = flush_buffer(device)
    times = []
    with torch.no_grad():
        for i in range(n):
            flush.zero_()
            _sync(device)
            (slot, shift, seed), context = start_call(i)
            calls = staging.fill(i % 2, pool[slot], shift, seed)
            _sync(device)
            started_ns = _monotonic_ns()
            with context:
                if device.type == "cuda":
                    start, end = _cuda_event(enable_timing=True), _cuda_event(enable_timing=True)
                    start.record()
                    outs = [model(*inputs) for inputs in calls]
                    _cuda_synchronize()  # device-wide: work on any stream counts
                    end.record()
                    end.synchronize()
                    times.append(start.elapsed_time(end) / repeat)
                else:
                    t0 = _perf_counter()
                    outs = [model(*inputs) for inputs in calls]
                    times.append((_perf_counter() - t0) * 1e3 / repeat)
            end_call(i, times[-1], outs, [started_ns, _monotonic_ns()])
            del outs
    return times


class Checksummer:
    """A position-weighted checksum of a call's outputs, from a host seed.

    For one output, ``dot(out, w)`` with ``w ~ N(0, 1)``; for a group, the
    copies' dots with the same ``w`` weighted by ``c ~ N(0, 1)``, one per copy
    (so the copies cannot be swapped), with the norm of them all. Rolled
    inputs permute the output, which a plain sum would not notice; a random
    weighting does. For honest outputs the difference of two checksums is
    about ``||out_a - out_b||``, so the host can compare them with the same
    relative-norm tolerance it uses for whole outputs. One pass in float64
    when every value is finite; the non-finite ones are counted only when the
    norm shows there are some.
    """

    def __init__(self, seed: int, device: torch.device) -> None:
        self.seed = seed
        self.device = device
        self.weights: dict[int, torch.Tensor] = {}

    def __call__(self, out) -> list[float]:
        return self.group([out])

    def group(self, outs: list) -> list[float]:
        first = outs[0]
        if not all(isinstance(o, torch.Tensor) for o in outs) or any(
            o.shape != first.shape or o.dtype != first.dtype or o.device != first.device for o in outs
        ):
            return [float("nan"), float("nan"), -1.0]
        values = torch.stack([o.detach() for o in outs]) if len(outs) > 1 else first.detach().unsqueeze(0)
        values = values.reshape(len(outs), -1).to(torch.float64)
        n = values.shape[1]
        if n not in self.weights:
            gen = torch.Generator(device=self.device)
            gen.manual_seed(self.seed)
            self.weights[n] = torch.randn(n + MAX_REPEAT, generator=gen, device=self.device, dtype=torch.float64)
        w = self.weights[n]
        copies = w[n : n + len(outs)] if len(outs) > 1 else w[n : n + 1].new_ones(1)
        norm = torch.linalg.vector_norm(values).item()
        if math.isfinite(norm):
            return [torch.dot(torch.mv(values, w[:n]), copies).item(), norm, 0.0]
        finite = torch.isfinite(values)
        clean = torch.where(finite, values, torch.zeros_like(values))
        dot = torch.dot(torch.mv(clean, w[:n]), copies).item()
        return [dot, torch.linalg.vector_norm(clean).item(), float(values.numel() - int(finite.sum().item()))]
