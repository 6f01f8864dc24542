"""Hardware evidence for the judge and the user: ptxas statistics, roofline position, kernel census.

All of it is plain data in, plain data out, so that it is tested without a GPU:
ptxas's report comes from a build log, the roofline from the task's declared
work and the device's own peaks, the census from the profiler's kernel list.
"""

from __future__ import annotations

import re

from forge_sandbox import ncu_metrics
from forge_sandbox.kernel_names import function_name, is_own_kernel

# -- ptxas --------------------------------------------------------------------------------

_ENTRY = re.compile(r"Compiling entry function '([^']+)' for '([^']+)'")
_PROPS = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers")
_SMEM = re.compile(r"(\d+) bytes smem")
_BARRIERS = re.compile(r"used (\d+) barriers")


def ptxas_stats(log: str) -> list[dict]:
    """One record per kernel from `ptxas -v` output: registers, spills, stack, shared memory."""
    kernels: list[dict] = []
    current = None
    for line in log.splitlines():
        if m := _ENTRY.search(line):
            current = {"kernel": m.group(1), "arch": m.group(2), "registers": None, "spill_stores": 0,
                       "spill_loads": 0, "stack_bytes": 0, "smem_bytes": 0, "barriers": 0}  # fmt: skip
            kernels.append(current)
        elif current is not None and (m := _PROPS.search(line)):
            current["stack_bytes"], current["spill_stores"], current["spill_loads"] = map(int, m.groups())
        elif current is not None and (m := _USED.search(line)):
            current["registers"] = int(m.group(1))
            if s := _SMEM.search(line):
                current["smem_bytes"] = int(s.group(1))
            if b := _BARRIERS.search(line):
                current["barriers"] = int(b.group(1))
    return kernels


def describe_ptxas(stats: list[dict]) -> list[str]:
    lines = []
    for k in stats:
        spill = k["spill_stores"] + k["spill_loads"]
        lines.append(
            f"{k['kernel']} ({k['arch']}): {k['registers']} registers, {k['smem_bytes']} B shared, "
            + (f"{spill} B spilled (stores {k['spill_stores']}, loads {k['spill_loads']})" if spill else "no spills")
        )
    return lines


# -- roofline -----------------------------------------------------------------------------

LAUNCH_BOUND_MS = 0.01  # below ~10 us a kernel's time is mostly launch and sync overhead


def roofline(
    flops: float | None, nbytes: float | None, ms: float, peak_flops: float | None, peak_bw: float | None
) -> dict:
    """Achieved throughput against the device's peaks, speed-of-light share and the bound.

    ``nbytes`` is what the caller chose (evidence.gather says which, in
    ``bytes_source``): the task's declared compulsory bytes, else ncu's measured
    DRAM bytes when they cover the whole call, else the inputs read once and the
    output written once. SOL% = max(FLOP/s / peak FLOP/s, bytes/s / peak bytes/s).
    """
    out: dict = {"ms": ms}
    seconds = ms / 1e3
    if nbytes:
        out["bytes_per_s"] = nbytes / seconds
    if flops:
        out["flops_per_s"] = flops / seconds
    if flops and nbytes:
        out["intensity_flop_per_byte"] = flops / nbytes
    shares = []
    if nbytes and peak_bw:
        out["bandwidth_pct"] = 100 * out["bytes_per_s"] / peak_bw
        shares.append(out["bandwidth_pct"])
    if flops and peak_flops:
        out["compute_pct"] = 100 * out["flops_per_s"] / peak_flops
        if out["compute_pct"] <= 100:
            shares.append(out["compute_pct"])
        else:  # the roof is the fp32 non-tensor peak; tensor cores go past it
            out["tensor_cores_likely"] = True
    out["sol_pct"] = max(shares) if shares else None
    out["bound"], out["why"] = _bound(out, ms, peak_flops, peak_bw)
    return out


def _bound(r: dict, ms: float, peak_flops, peak_bw) -> tuple[str, str]:
    if ms < LAUNCH_BOUND_MS:
        return "launch overhead", f"{ms * 1e3:.1f} us per call: launch and synchronization dominate"
    if r.get("tensor_cores_likely"):
        return (
            "compute",
            f"{r['flops_per_s'] / 1e12:.3g} TFLOP/s is past the fp32 non-tensor peak: tensor cores at work",
        )
    if r["sol_pct"] is None:
        return "unknown", "the device's peaks or the task's work are unknown"
    if r["sol_pct"] < 30:
        return "latency", f"only {r['sol_pct']:.0f}% of speed of light: neither memory nor compute is saturated"
    if "intensity_flop_per_byte" in r and peak_flops and peak_bw:
        ridge = peak_flops / peak_bw
        if r["intensity_flop_per_byte"] >= ridge:
            return "compute", f"intensity {r['intensity_flop_per_byte']:.3g} FLOP/B is above the ridge ({ridge:.3g})"
        return "memory", f"intensity {r['intensity_flop_per_byte']:.3g} FLOP/B is below the ridge ({ridge:.3g})"
    if r.get("bandwidth_pct", 0) >= r.get("compute_pct", 0):
        return "memory", f"{r['bandwidth_pct']:.0f}% of peak bandwidth"
    return "compute", f"{r['compute_pct']:.0f}% of peak FLOP/s"


# -- kernel census ------------------------------------------------------------------------

OWN_SHARE_FLOOR = 0.2  # below this share of GPU time, the candidate's own kernels are not doing the work


def census(kernels: list[tuple[str, float]], own_names: list[str]) -> dict:
    """Split the kernels that ModelNew.forward launched into the candidate's own and library ones.

    ``kernels`` is (name, device time in us) per launch; a kernel is the
    candidate's own when its function name is one of the names its source defines
    (Triton function names, CUDA ``__global__`` names, CuPy kernel names).
    """
    own, library = {}, {}
    for name, us in kernels:
        bucket = own if is_own_kernel(name, own_names) else library
        bucket[name] = bucket.get(name, 0.0) + us
    own_us, lib_us = sum(own.values()), sum(library.values())
    total = own_us + lib_us
    share = own_us / total if total else None
    result = {
        "own_us": own_us,
        "library_us": lib_us,
        "own_share": share,
        "own": sorted(own.items(), key=lambda kv: -kv[1]),
        "library": sorted(library.items(), key=lambda kv: -kv[1])[:10],
    }
    if share is not None and share < OWN_SHARE_FLOOR:
        result["flag"] = (
            f"the candidate's own kernels did {100 * share:.0f}% of the GPU time; library kernels did the rest"
        )
    return result


# Kernels that torch.compile's Inductor generates: `triton_poi_fused_add_mul_0`, `triton_red_...`, and so on.
_INDUCTOR_KERNEL = re.compile(r"^triton_(?:poi|per|red|tem|for|spl|unk)_")


def compiler_kernels(kernels: list[tuple[str, float]], own_names: list[str]) -> list[str]:
    """Kernels in a census that PyTorch's compiler generated, not the candidate: torch.compile did work."""
    names = {function_name(name) for name, _ in kernels if not is_own_kernel(name, own_names)}
    return sorted(n for n in names if _INDUCTOR_KERNEL.match(n))


def describe(hw: dict) -> list[str]:
    """The evidence as short lines, for the judge's prompt and `forge show`."""
    lines = []
    r = hw.get("roofline")
    if r:
        parts = [f"{r['ms']:.4g} ms"]
        if "bytes_per_s" in r:
            parts.append(
                f"{r['bytes_per_s'] / 1e9:.4g} GB/s"
                + (f" ({r['bandwidth_pct']:.0f}% of peak)" if "bandwidth_pct" in r else "")
            )
        if "flops_per_s" in r:
            parts.append(
                f"{r['flops_per_s'] / 1e12:.4g} TFLOP/s"
                + (f" ({r['compute_pct']:.0f}% of fp32 peak)" if "compute_pct" in r else "")
            )
        if r.get("sol_pct") is not None:
            parts.append(f"{r['sol_pct']:.0f}% of speed of light")
        source = f" [bytes: {r['bytes_source']}]" if r.get("bytes_source") else ""
        lines.append("roofline: " + ", ".join(parts) + f"; bound: {r['bound']} ({r['why']}){source}")
    c = hw.get("census")
    if c and c.get("own_share") is not None:
        own = ", ".join(f"{name} {us:.1f} us" for name, us in c["own"][:4]) or "none"
        lib = ", ".join(f"{name[:60]} {us:.1f} us" for name, us in c["library"][:3]) or "none"
        lines.append(f"kernel census: own kernels {100 * c['own_share']:.0f}% of GPU time ({own}); library: {lib}")
        if c.get("flag"):
            lines.append("warning: " + c["flag"])
    if hw.get("ncu"):
        lines += ncu_metrics.describe(hw["ncu"])
    lines += [f"ptxas: {line}" for line in describe_ptxas(hw.get("ptxas") or [])]
    lines += [f"not measured: {item}" for item in hw.get("not_measured", [])]
    return lines
