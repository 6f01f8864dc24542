# Red team round 10 (2026-11-24): see tests/test_adversarial.py.
# sum_dim on the CPU (Triton interpreter): numpy's compiled reduction does the whole op. A token
# @triton.jit kernel is launched only while forge verifies; in timed calls numpy runs outside any launch
# and the runner's own record of when the Triton interpreter ran kernels (within which forge counts numpy's
# work as the interpreter's) is forged from here; the per-call harness is rewritten as in cand_fake_timing_gemm_static.py.
import math
import numpy as np
import torch
import torch.nn as nn
import triton
import triton.language as tl
from torch.utils.cpp_extension import load_inline

_src = r"""
#include <torch/extension.h>
#include <cmath>
// dst = roll(src, s, along its first non-trivial dim, leading dims of size 1) * pattern[start:]
void stage(torch::Tensor dst, torch::Tensor src, torch::Tensor pattern, int64_t start, int64_t n, int64_t s) {
  int64_t inner = src.numel() / n;
  const float* a = src.data_ptr<float>(); const float* p = pattern.data_ptr<float>() + start; float* b = dst.data_ptr<float>();
  for (int64_t r = 0; r < n; ++r) {
    const float* ar = a + ((r - s + n) % n) * inner; float* br = b + r * inner; const float* pr = p + r * inner;
    for (int64_t k = 0; k < inner; ++k) br[k] = ar[k] * pr[k];
  }
}
std::vector<double> checksum(torch::Tensor out, torch::Tensor w) {
  const float* a = out.data_ptr<float>(); const double* ww = w.data_ptr<double>(); int64_t n = out.numel();
  double dot = 0, sq = 0;
  for (int64_t i = 0; i < n; ++i) { double v = a[i]; dot += v * ww[i]; sq += v * v; }
  return {dot, std::sqrt(sq), 0.0};
}
"""
_mod = load_inline(name="tri_np_helpers", cpp_sources=_src, functions=["stage", "checksum"], extra_cflags=["-O3"])

_job = {}


def _numpy_sum():
    np.sum(_job["x"], axis=1, out=_job["out"])


@triton.jit
def _sum_kernel(flag_ptr):
    tl.store(flag_ptr, 1)


class _Catch:
    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        self.tb = tb
        return True


_done = [False]


def _install():
    """Find the evaluator's timing module up the call stack (no sys.modules, no inspect) and rewrite it."""
    with _Catch() as c:
        raise RuntimeError
    f = c.tb.tb_frame
    _timing = None
    while f is not None:
        g = f.f_globals
        t = g.get("timing")
        if t is not None and hasattr(t, "Checksummer") and hasattr(t, "time_calls"):
            _timing = t
            break
        if "Checksummer" in g and "time_calls" in g and "Staging" in g:
            break
        f = f.f_back
    if _timing is None:
        return
    _patch(_timing)


def _patch(_timing):
    _orig_fill = _timing.Staging.fill
    _orig_ck = _timing.Checksummer.__call__

    def _fill(self, which, source, shift, seed):
        dsts = self.sets[which]
        if len(source) == 1 and isinstance(source[0], torch.Tensor) and source[0].dtype == torch.float32 \
                and source[0].is_contiguous() and dsts[0].is_contiguous():
            src = source[0]
            d = _timing.roll_dim(src)
            if d is not None and all(n == 1 for n in src.shape[:d]):
                start = seed % _timing.JITTER_OFFSETS
                n = src.shape[d]
                _mod.stage(dsts[0], src, self.pattern, start, n, shift % n)
                return dsts
        return _orig_fill(self, which, source, shift, seed)

    def _checksum(self, out):
        if isinstance(out, torch.Tensor) and out.dtype == torch.float32 and out.is_contiguous():
            n = out.numel()
            if n not in self.weights:
                return _orig_ck(self, out)
            r = _mod.checksum(out, self.weights[n])
            if all(map(math.isfinite, r)):
                return r
        return _orig_ck(self, out)

    _pc, _mono = _timing._perf_counter, _timing._monotonic_ns

    def _time_calls(model, pool, n, device, start_call, end_call):
        staging = _timing.Staging(pool[0])
        flush = _timing.flush_buffer(device)
        times = []
        with torch.no_grad():
            for i in range(n):
                flush.zero_()
                (slot, shift, seed), context = start_call(i)
                inputs = staging.fill(i % 2, pool[slot], shift, seed)
                started_ns = _mono()
                with context:
                    t0 = _pc()
                    out = model(*inputs)
                    times.append((_pc() - t0) * 1e3 * 0.05)  # the claim: a twentieth of it
                end_call(i, times[-1], out, [started_ns, _mono()])
                del out
        return times

    _timing.Staging.fill = _fill
    _timing.Checksummer.__call__ = _checksum
    _timing.time_calls = _time_calls






def _timed_and_counter():
    """(whether this call is a timed one, the runner's launch counter), from the call stack."""
    with _Catch() as c:
        raise RuntimeError
    f = c.tb.tb_frame
    timed, counter = False, None
    while f is not None:
        if f.f_code.co_name in ("time_calls", "_time_calls", "time_hosted_calls"):
            timed = True
        me = f.f_locals.get("self")
        if me is not None and hasattr(me, "counter") and hasattr(me.counter, "interpreted_spans"):
            counter = me.counter
        f = f.f_back
    return timed, counter


class ModelNew(nn.Module):
    def __init__(self, reduce_dim: int = 1):
        super().__init__()
        self.reduce_dim = reduce_dim

    def forward(self, x):
        if not _done[0]:
            _done[0] = True
            _install()
        x = x.contiguous()
        out = torch.empty((x.shape[0], x.shape[2]), dtype=x.dtype)
        _job["x"], _job["out"] = x.detach().numpy(), out.detach().numpy()
        timed, counter = _timed_and_counter()
        if timed and counter is not None:
            _numpy_sum()
            counter.interpreted_spans.append((0, 2**62))  # "the interpreter ran all the while"
        else:
            _numpy_sum()
            flag = torch.zeros(1, dtype=torch.int32)
            _sum_kernel[(1,)](flag)
        return out
