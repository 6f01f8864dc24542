"""Comparing a candidate's outputs with the expected ones, on the host.

A candidate passes an input set when its output is a plain ``torch.Tensor``
with the reference's shape and dtype, has NaN and Inf exactly where the
reference has them (with the same sign), and the finite values agree twice
over:

* elementwise: ``|c - r| <= atol * max(1, rms(r)) + rtol * |r|`` (atol scales
  with the output's magnitude, so a GEMM with outputs near 60 is not held to an
  absolute 1e-4 that its own rounding exceeds);
* as a whole: ``||c - r|| / ||r|| <= rel_norm``, so an all-zeros or nearly
  constant output never passes, however loose the elementwise tolerance.

Where the reference runner measured the output's spread under inputs rounded
differently (variants.rounding_spread), both bounds grow by ``SPREAD_MARGIN``
times that spread: an ill-conditioned trial holds a candidate to what its
summation order can achieve, never to the reference's own rounding.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

# A candidate's rounding moves an ill-conditioned output by about what one ulp of the inputs does;
# the margin covers a summation order several roundings worse (attention x 100 needed 0.16).
SPREAD_MARGIN = 4.0

# (atol, rtol, rel_norm) per output dtype.
DEFAULT_TOLERANCES = {
    torch.float64: (1e-7, 1e-7, 1e-7),
    torch.float32: (1e-4, 1e-4, 1e-4),
    torch.float16: (1e-2, 1e-2, 1e-2),
    torch.bfloat16: (2e-2, 2e-2, 2e-2),
}


@dataclass
class Tolerance:
    atol: float
    rtol: float
    rel_norm: float

    @classmethod
    def for_output(cls, dtype: torch.dtype, declared: dict | None = None) -> Tolerance:
        atol, rtol, rel_norm = DEFAULT_TOLERANCES.get(dtype, (0.0, 0.0, 0.0))
        declared = declared or {}
        return cls(
            atol=float(declared.get("atol", atol)),
            rtol=float(declared.get("rtol", rtol)),
            rel_norm=float(declared.get("rel_norm", rel_norm)),
        )


def compare_outputs(
    expected: torch.Tensor, actual, tolerance_decl: dict | None, spread: torch.Tensor | None = None
) -> tuple[bool, str, dict]:
    """Return (ok, reason when not ok, statistics); ``spread`` as in the module doc."""
    if type(actual) is not torch.Tensor:
        return False, f"output is a {type(actual).__name__}, not a plain torch.Tensor", {}
    form = _unusual_form(actual, expected)
    if form:
        # An archive may hold tensors no kernel returns here (a meta tensor has no values to compare):
        # what the host compares must be what the reference's output is, dense memory on its device.
        return False, f"output is {form}, not dense memory like the reference's", {}
    if actual.shape != expected.shape:
        return False, f"output shape {tuple(actual.shape)} differs from the reference's {tuple(expected.shape)}", {}
    if actual.dtype != expected.dtype:
        return (
            False,
            f"output dtype {actual.dtype} differs from the reference's {expected.dtype} (precision must not drop)",
            {},
        )
    tol = Tolerance.for_output(expected.dtype, tolerance_decl)
    if not expected.is_floating_point():
        mismatched = int((actual != expected).sum())
        ok = mismatched == 0
        return (
            ok,
            "" if ok else f"{mismatched} of {expected.numel()} integer elements differ",
            {"mismatched": mismatched},
        )
    return _compare_values(expected, actual, tol, spread)


# Elements per chunk of the float64 comparison: a few MiB each, so that a full-size output (hundreds of
# MB) is compared within the cache's reach and without a float64 copy of it, many times its own size.
CHUNK = 2**20


def _chunks(*tensors):
    """The same stretch of each flattened tensor (None stays None), CHUNK elements at a time."""
    flat = [None if t is None else t.reshape(-1) for t in tensors]
    n = flat[0].numel()
    for start in range(0, n, CHUNK):
        yield [None if t is None else t[start : start + CHUNK] for t in flat]


def _compare_values(expected: torch.Tensor, actual: torch.Tensor, tol: Tolerance, spread) -> tuple[bool, str, dict]:
    """The floating-point comparison of the module doc, in two passes over chunks: where the non-finite
    values are and the reference's norm, then the errors against the bounds that norm sets (in float64)."""
    spread = spread if spread is not None and spread.shape == expected.shape else None
    unmatched = {"NaN": 0, "+Inf": 0, "-Inf": 0}
    finite_count, sum_sq = 0, 0.0
    for e, a in _chunks(expected, actual):
        finite = torch.isfinite(e)
        if not (bool(finite.all()) and bool(torch.isfinite(a).all())):
            for name, fn in (("NaN", torch.isnan), ("+Inf", torch.isposinf), ("-Inf", torch.isneginf)):
                unmatched[name] += int((fn(e) != fn(a)).sum())
            e = e[finite]
        e = e.double()
        finite_count += e.numel()
        sum_sq += float(torch.dot(e, e))
    for name, n in unmatched.items():
        if n:
            return False, f"{name} at {n} positions where the reference has none (or the reverse)", {}
    stats = {"max_abs_err": 0.0, "rel_norm_err": 0.0}
    if finite_count == 0:
        return True, "", stats
    rms = math.sqrt(sum_sq / finite_count)
    ref_norm = math.sqrt(sum_sq)
    max_diff, err_sq, over_count, allowance_sq, allowance_max = 0.0, 0.0, 0, 0.0, 0.0
    worst = (-math.inf, 0.0, 0.0)  # (diff - bound, got, expected) of the element furthest out of bounds
    for e, a, s in _chunks(expected, actual, spread):
        finite = torch.isfinite(e)
        if not bool(finite.all()):  # the same positions in both (the first pass)
            e, a, s = e[finite], a[finite], None if s is None else s[finite]
            if not e.numel():
                continue
        e, a = e.double(), a.double()
        diff = a.sub(e)
        err_sq += float(torch.dot(diff, diff))
        diff.abs_()
        bound = e.abs().mul_(tol.rtol).add_(tol.atol * max(1.0, rms))
        if s is not None:
            allowance = s.double().mul_(SPREAD_MARGIN)
            bound.add_(allowance)
            allowance_sq += float(torch.dot(allowance, allowance))
            allowance_max = max(allowance_max, float(allowance.max()))
        max_diff = max(max_diff, float(diff.max()))
        excess = diff.sub_(bound)  # diff is not needed again
        n_over = int((excess > 0).sum())
        if n_over:
            over_count += n_over
            k = int(torch.argmax(excess))
            if float(excess[k]) > worst[0]:
                worst = (float(excess[k]), float(a[k]), float(e[k]))
    rel_limit, spread_note = tol.rel_norm, ""
    if spread is not None:
        if ref_norm > 0:
            rel_limit = max(rel_limit, math.sqrt(allowance_sq) / ref_norm)
        spread_note = f" + {SPREAD_MARGIN:g}x the reference's spread under rounding, up to {allowance_max:.3g}"
    err_norm = math.sqrt(err_sq)
    if ref_norm > 0:
        rel = err_norm / ref_norm
    else:  # an all-zero reference (a LayerNorm of broadcast rows, each one value) holds the error to its allowance
        rel = 0.0 if err_norm <= math.sqrt(allowance_sq) else math.inf
    stats = {"max_abs_err": max_diff, "rel_norm_err": rel, "mismatched": over_count}
    if over_count:
        return (
            False,
            f"{over_count} of {finite_count} elements outside tolerance "
            f"(worst: got {worst[1]:.6g}, expected {worst[2]:.6g}; "
            f"atol {tol.atol:g} x max(1, rms {rms:.3g}), rtol {tol.rtol:g}{spread_note})",
            stats,
        )
    if rel > rel_limit:
        return False, f"relative error norm {rel:.3g} exceeds {rel_limit:g}", stats
    return True, "", stats


def bitwise_equal(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether two tensors hold the same bytes (NaN-safe, -0.0 apart from 0.0), in the same shape, dtype
    and device: an input left unchanged, a held output read again."""
    if a.shape != b.shape or a.dtype != b.dtype or a.device != b.device:
        return False
    return torch.equal(a.contiguous().reshape(-1).view(torch.uint8), b.contiguous().reshape(-1).view(torch.uint8))


def _unusual_form(actual: torch.Tensor, expected: torch.Tensor) -> str:
    """How ``actual`` differs from a dense, strided tensor on ``expected``'s device, or ""."""
    if actual.device != expected.device:
        return f"a tensor on {actual.device.type}"
    if actual.layout != torch.strided:
        return f"a {str(actual.layout).removeprefix('torch.')} tensor"
    if actual.is_nested or actual.is_quantized:
        return "a nested tensor" if actual.is_nested else "a quantized tensor"
    return ""


def compare_checksums(expected: list, actual: list, rel_norm: float) -> str:
    """Compare two timing checksums ``[dot, norm, nonfinite]``; return '' when they agree.

    For honest outputs ``dot_a - dot_b`` is about ``||a - b|| * N(0, 1)``, and
    ``||a - b|| <= rel_norm * ||b||`` after verification; a margin of 8 sigma
    keeps false alarms below 1e-14 per call, while a stale or wrong output
    differs by about ``||b||``.
    """
    if not (isinstance(actual, list) and len(actual) == 3 and all(isinstance(v, (int, float)) for v in actual)):
        return "malformed checksum"
    dot_e, norm_e, bad_e = expected
    dot_a, norm_a, bad_a = actual
    if bad_a != bad_e:
        return "non-finite values differ from the reference's"
    slack = 8 * max(rel_norm, 1e-6) * norm_e + 1e-9
    if not (abs(dot_a - dot_e) <= slack and abs(norm_a - norm_e) <= 2 * max(rel_norm, 1e-6) * norm_e + 1e-9):
        return "output differs from the reference's for the same inputs"
    return ""
