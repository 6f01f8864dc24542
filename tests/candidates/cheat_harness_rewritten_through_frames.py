# Red team round 10 (2026-11-24): see tests/test_adversarial.py.
# gemm_bias_relu: an honest (plain) C++ GEMM + bias + ReLU, plus a rewrite of forge's own per-call harness in this
# process: staging and checksum done by fast C++ (same values), and the reported per-call time scaled
# down. The host's bound (window - reference's overhead) then no longer covers the call.
import math
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_src = r"""
#include <torch/extension.h>
#include <cmath>
torch::Tensor linear_relu(torch::Tensor x, torch::Tensor w, torch::Tensor bias) {
  int64_t M = x.size(0), K = x.size(1), N = w.size(0);
  auto y = torch::empty({M, N}, x.options());
  const float* a = x.data_ptr<float>(); const float* b = w.data_ptr<float>(); const float* c = bias.data_ptr<float>();
  float* o = y.data_ptr<float>();
  for (int64_t i = 0; i < M; ++i) for (int64_t j = 0; j < N; ++j) {
    const float* ar = a + i * K; const float* br = b + j * K; float s = 0;
    for (int64_t k = 0; k < K; ++k) s += ar[k] * br[k];
    s += c[j]; o[i * N + j] = s > 0 ? s : 0;
  }
  return y;
}
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
_mod = load_inline(name="fake_timing_gemm_s", cpp_sources=_src, functions=["linear_relu", "stage", "checksum"],
                   extra_cflags=["-O3", "-march=native"])

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

    def _time_hosted_calls(model, sets, n, start_call, end_call):  # the same claim where the host stages
        times = []
        with torch.no_grad():
            for i in range(n):
                which, context = start_call(i)
                started_ns = _mono()
                with context:
                    t0 = _pc()
                    out = model(*sets[which])
                    times.append((_pc() - t0) * 1e3 * 0.05)
                end_call(i, times[-1], out, [started_ns, _mono()])
                del out
        return times
    _timing.Staging.fill = _fill
    _timing.Checksummer.__call__ = _checksum
    _timing.time_calls = _time_calls
    if hasattr(_timing, "time_hosted_calls"):
        _timing.time_hosted_calls = _time_hosted_calls




class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, dtype=torch.float16):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features).to(dtype)

    def forward(self, x):
        if not _done[0]:
            _done[0] = True
            _install()
        dt = x.dtype
        return _mod.linear_relu(x.float().contiguous(), self.linear.weight.float().contiguous(),
                                self.linear.bias.float().contiguous()).to(dt)
