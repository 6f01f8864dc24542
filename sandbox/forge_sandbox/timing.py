"""The one function that times a model, and the helpers that feed it inputs.

Method (:func:`time_calls`), the same for the reference and the candidate:

* every call gets inputs of its own: pool entry ``slot`` (a set made by the
  task's ``get_inputs`` from a host seed) rolled by ``shift`` along its first
  non-trivial dimension and every floating-point value scaled by its own
  random factor in [0.9, 1.1] (from a per-call host seed), copied into one of
  two staging buffers that alternate. No two calls share input values, so no
  cache (by pointer, by value, or by the layout of a known pool) can return an
  output it has seen; one that tries returns a stale output, which the
  checksum of every timed output exposes. The jitter keeps each value's sign
  and rough magnitude, so the task's input distribution barely changes;
* the last-level cache is flushed (a buffer larger than L2 is zeroed) before
  every call, outside the timed region;
* CUDA: an event pair per call on the current stream, with a *device-wide*
  synchronize before the end event, so work hidden on another stream or left
  running is counted; CPU: ``time.perf_counter`` around the call;
* warm-up calls run before any timed call and are not recorded.

The caller (the host, through a runner) chooses the number of calls from a
time budget and interleaves reference and candidate blocks.
"""

from __future__ import annotations

import time

import torch

# Bound when this module is imported, which the runner does before the candidate
# is imported: a candidate that patches time.perf_counter or torch.cuda.Event
# later does not reach these names, and the runner checks the originals stayed.
_perf_counter = time.perf_counter
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


def fill_staging(staging: list, source: list, shift: int, seed: int) -> None:
    """Copy one pool entry into a staging set: floating tensors rolled by ``shift`` and jittered."""
    generator = None
    for dst, src in zip(staging, source):
        if not isinstance(src, torch.Tensor):
            continue
        d = roll_dim(src)
        if not (src.is_floating_point() and d is not None):
            dst.copy_(src)
            continue
        if generator is None:
            generator = torch.Generator(device=src.device)
            generator.manual_seed(seed)
        dst.copy_(torch.roll(src, shift % src.shape[d], d))
        factor = torch.rand(dst.shape, generator=generator, device=dst.device, dtype=torch.float32)
        dst.mul_(factor.mul_(2 * JITTER).add_(1 - JITTER).to(dst.dtype))


def make_staging(pool: list[list]) -> list[list]:
    """Two staging sets shaped like the pool's first entry; non-tensors pass through."""
    template = pool[0]
    return [[torch.empty_like(x) if isinstance(x, torch.Tensor) else x for x in template] for _ in range(2)]


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        _cuda_synchronize()


def time_calls(model, pool: list[list], calls: list, device: torch.device, warmup: int, on_output) -> list[float]:
    """Time ``model`` once per entry of ``calls`` (``(slot, shift, seed)`` triples); return ms per call.

    ``on_output(index, output)`` runs after each timed call, outside the timed
    region (it checksums the output). Warm-up calls reuse the first entries.
    """
    staging = make_staging(pool)
    flush = flush_buffer(device)
    with torch.no_grad():
        for i in range(warmup):
            slot, shift, seed = calls[i % len(calls)]
            fill_staging(staging[i % 2], pool[slot], shift, seed)
            model(*staging[i % 2])
        _sync(device)
        times = []
        for i, (slot, shift, seed) in enumerate(calls):
            inputs = staging[i % 2]
            fill_staging(inputs, pool[slot], shift, seed)
            flush.zero_()
            _sync(device)
            if device.type == "cuda":
                start, end = _cuda_event(enable_timing=True), _cuda_event(enable_timing=True)
                start.record()
                out = model(*inputs)
                _cuda_synchronize()  # device-wide: work on any stream counts
                end.record()
                end.synchronize()
                times.append(start.elapsed_time(end))
            else:
                t0 = _perf_counter()
                out = model(*inputs)
                times.append((_perf_counter() - t0) * 1e3)
            on_output(i, out)
            del out
    return times


class Checksummer:
    """A position-weighted checksum of each output: dot(out, w) with w ~ N(0, 1) from a host seed.

    Rolled inputs permute the output, which a plain sum would not notice; a
    random weighting does. For honest outputs the difference of two checksums
    is about ||out_a - out_b||, so the host can compare them with the same
    relative-norm tolerance it uses for whole outputs.
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
        finite = torch.isfinite(flat)
        clean = torch.where(finite, flat, torch.zeros_like(flat))
        dot = torch.dot(clean, self.weights[n]).item()
        norm = torch.linalg.vector_norm(clean).item()
        return [dot, norm, float(n - int(finite.sum().item()))]
