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
    e, a = expected.double(), actual.double()
    for name, fn in (("NaN", torch.isnan), ("+Inf", torch.isposinf), ("-Inf", torch.isneginf)):
        where_e, where_a = fn(e), fn(a)
        if not torch.equal(where_e, where_a):
            n = int((where_e != where_a).sum())
            return False, f"{name} at {n} positions where the reference has none (or the reverse)", {}
    finite = torch.isfinite(e)
    e, a = e[finite], a[finite]
    stats = {"max_abs_err": 0.0, "rel_norm_err": 0.0}
    if e.numel() == 0:
        return True, "", stats
    diff = (a - e).abs()
    rms = math.sqrt(float((e * e).mean()))
    bound = tol.atol * max(1.0, rms) + tol.rtol * e.abs()
    ref_norm = float(torch.linalg.vector_norm(e))
    rel_limit, spread_note = tol.rel_norm, ""
    if spread is not None and spread.shape == expected.shape:
        allowance = SPREAD_MARGIN * spread.double()[finite]
        bound = bound + allowance
        if ref_norm > 0:
            rel_limit = max(rel_limit, float(torch.linalg.vector_norm(allowance)) / ref_norm)
        spread_note = f" + {SPREAD_MARGIN:g}x the reference's spread under rounding, up to {float(allowance.max()):.3g}"
    over = diff > bound
    err_norm = float(torch.linalg.vector_norm(a - e))
    rel = err_norm / ref_norm if ref_norm > 0 else (0.0 if err_norm == 0 else math.inf)
    stats = {"max_abs_err": float(diff.max()), "rel_norm_err": rel, "mismatched": int(over.sum())}
    if over.any():
        worst = int(torch.argmax(diff - bound))
        return (
            False,
            f"{int(over.sum())} of {e.numel()} elements outside tolerance "
            f"(worst: got {float(a[worst]):.6g}, expected {float(e[worst]):.6g}; "
            f"atol {tol.atol:g} x max(1, rms {rms:.3g}), rtol {tol.rtol:g}{spread_note})",
            stats,
        )
    if rel > rel_limit:
        return False, f"relative error norm {rel:.3g} exceeds {rel_limit:g}", stats
    return True, "", stats


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
