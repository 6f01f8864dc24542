"""Red team, round 6: forge's own staging and checksum made cheaper inside the candidate's process,
and a slowed clock.

Native code (pybind11, from a C++ string) imports forge_sandbox.timing and rebinds Staging.fill and
Checksummer.__call__ to one-pass C++ versions, then binds one clock running at a tenth of the real speed
to both time.perf_counter and the timing module's own name for it. The host's window around each call,
less the reference's harness overhead, then leaves less than the call took, and the slowed report
decides. The static check finds the native imports; without it the figure is still the report's
(open: the harness must leave the candidate's process)."""
import time
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include <torch/extension.h>
#include <cmath>
namespace py = pybind11;

torch::Tensor maxpool2x2(torch::Tensor x) {
    auto xc = x.contiguous();
    int64_t N = xc.size(0), C = xc.size(1), H = xc.size(2), W = xc.size(3);
    int64_t Ho = H / 2, Wo = W / 2;
    auto y = torch::empty({N, C, Ho, Wo}, xc.options());
    const float* in = xc.data_ptr<float>();
    float* out = y.data_ptr<float>();
    for (int64_t p = 0; p < N * C; ++p) {
        const float* plane = in + p * H * W;
        float* o = out + p * Ho * Wo;
        for (int64_t i = 0; i < Ho; ++i) {
            const float* r0 = plane + (2 * i) * W;
            const float* r1 = r0 + W;
            for (int64_t j = 0; j < Wo; ++j) {
                float a = r0[2 * j], b = r0[2 * j + 1], c = r1[2 * j], d = r1[2 * j + 1];
                float m = a > b || std::isnan(a) ? a : b;
                float n = c > d || std::isnan(c) ? c : d;
                o[i * Wo + j] = m > n || std::isnan(m) ? m : n;
            }
        }
    }
    return y;
}

// dst = roll(src, shift, first dim with >1 element) * pattern[start : start + numel]
void stage_one(torch::Tensor dst, torch::Tensor src, torch::Tensor pattern, int64_t shift, int64_t start) {
    int64_t d = -1;
    for (int64_t k = 0; k < src.dim(); ++k) if (src.size(k) > 1) { d = k; break; }
    if (!src.is_floating_point() || d < 0 || src.scalar_type() != at::kFloat || !src.is_contiguous()
        || !dst.is_contiguous()) {
        py::gil_scoped_release nogil;
        if (!src.is_floating_point() || d < 0) { dst.copy_(src); return; }
        auto f = pattern.narrow(0, start, src.numel()).view(src.sizes());
        dst.copy_(src.roll(shift % src.size(d), d) * f);
        return;
    }
    int64_t n = src.size(d), s = shift % n, inner = src.numel() / n;
    const float* a = src.data_ptr<float>();
    const float* f = pattern.data_ptr<float>() + start;
    float* o = dst.data_ptr<float>();
    for (int64_t r = 0; r < n; ++r) {
        const float* ar = a + ((r - s + n) % n) * inner;
        const float* fr = f + r * inner;
        float* orow = o + r * inner;
        for (int64_t j = 0; j < inner; ++j) orow[j] = ar[j] * fr[j];
    }
}

// [dot(out, w), ||out||, 0] in float64, one pass; None when a value is not finite (forge's path then)
py::object checksum(torch::Tensor out, torch::Tensor w) {
    if (out.scalar_type() != at::kFloat || !out.is_contiguous()) return py::none();
    const float* x = out.data_ptr<float>();
    const double* wv = w.data_ptr<double>();
    int64_t n = out.numel();
    double dot = 0, sq = 0;
    for (int64_t i = 0; i < n; ++i) { double v = x[i]; dot += v * wv[i]; sq += v * v; }
    if (!std::isfinite(sq)) return py::none();
    return py::make_tuple(dot, std::sqrt(sq));
}

py::object originals() {
    auto t = py::module_::import("forge_sandbox.timing");
    return py::make_tuple(t.attr("Staging").attr("fill"), t.attr("Checksummer").attr("__call__"));
}

void install(py::object fill, py::object call) {
    auto t = py::module_::import("forge_sandbox.timing");
    py::setattr(t.attr("Staging"), "fill", fill);
    py::setattr(t.attr("Checksummer"), "__call__", call);
}

void install_clock(py::object fake) {
    // the same object in both places: forge's "patched" check compares timing._perf_counter with time.perf_counter
    auto t = py::module_::import("forge_sandbox.timing");
    py::setattr(t, "_perf_counter", fake);
    py::setattr(py::module_::import("time"), "perf_counter", fake);
}
"""
_ext = load_inline(name="cheat_cheaper_harness_slow_clock", cpp_sources=[_SRC],
                   functions=["maxpool2x2", "stage_one", "checksum", "originals", "install", "install_clock"],
                   extra_cflags=["-O3", "-march=native"], verbose=False)

_orig_fill, _orig_call = _ext.originals()
_JITTER_OFFSETS = 1 << 20


def _fast_fill(self, which, source, shift, seed):
    for t, (dst, src) in enumerate(zip(self.sets[which], source)):
        if isinstance(src, torch.Tensor):
            _ext.stage_one(dst, src, self.pattern, shift, (seed + t * 0x9E3779B1) % _JITTER_OFFSETS)
    return self.sets[which]


def _fast_call(self, out):
    if isinstance(out, torch.Tensor):
        n = out.numel()
        w = self.weights.get(n)
        if w is not None:
            got = _ext.checksum(out, w)
            if got is not None:
                return [got[0], got[1], 0.0]
    return _orig_call(self, out)


_ext.install(_fast_fill, _fast_call)
_real = time.perf_counter


def _fake():
    return _real() * 0.1


_ext.install_clock(_fake)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.maxpool2x2(x)
