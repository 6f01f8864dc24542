"""The hardware evidence gathered once a candidate passed: kernel census, Nsight Compute, roofline.

It is what the judge and the user read: on CUDA, the kernels ``forward``
launched (the candidate's own against library ones, and their share of the GPU
time), ptxas's register and shared-memory report, Nsight Compute's metrics when
asked for, and the kernel's place on the device's roofline. Two of its checks
can still end the evaluation: a time below the physical floor (compulsory bytes
at the device's bandwidth), and kernels that torch.compile generated.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

import torch

from forge_sandbox import hardware, isolation, ncu
from forge_sandbox.benchmark import compiled_reason
from forge_sandbox.sides import Sides
from forge_sandbox.verdict import REJECTED, Stop, Verdict


@dataclass
class TimedShape:
    """The base configuration, which is timed and profiled."""

    setup: dict  # the reference runner's reply to setup: input files, declared FLOPs and bytes
    init_seed: int
    output_dtype: torch.dtype
    output_bytes: int
    overrides: dict
    output_shape: tuple = ()


def ptxas_lines(log: str) -> str:
    """ptxas's report of each kernel (registers, spills, shared memory) from a build log."""
    keep = [line.rstrip() for line in log.splitlines() if line.startswith("ptxas") or "bytes stack frame" in line]
    return "\n".join(keep)


def own_share_from_split(split: dict) -> float | None:
    """On the CPU: the share of one forward pass's host-clock time spent inside the candidate's own launches."""
    forward, own = split.get("forward_ms"), split.get("own_ms")
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (forward, own)) or forward <= 0:
        return None
    return round(min(1.0, max(0.0, own / forward)), 4)


def gather(sides: Sides, verdict: Verdict, options, timed: TimedShape, kernel_names: list[str]) -> None:
    """Census, Nsight Compute and roofline into ``verdict.hardware``; what cannot be measured is said so."""
    env, hw = verdict.environment, verdict.hardware
    missing = hw.setdefault("not_measured", [])
    on_cuda = options.device.startswith("cuda")
    _check_floor(verdict, timed, on_cuda)
    if not on_cuda:
        missing.append("kernel census and device peaks: CPU device (no device kernels to profile)")
    else:
        hw["census"] = _census(sides, kernel_names)
        verdict.own_share = hw["census"].get("own_share")
        if hw["census"].get("flag"):
            verdict.warnings.append(hw["census"]["flag"])
    _nsight_compute(sides, verdict, options, timed, kernel_names, missing)
    measured = _measured_bytes(hw)
    nbytes, source = (
        (timed.setup["bytes"], "declared by the task")
        if timed.setup.get("bytes")
        else (measured, "DRAM bytes measured by ncu")
        if measured
        else (timed.setup.get("input_bytes", 0) + timed.output_bytes, "inputs read once, output written once")
    )
    hw["roofline"] = hardware.roofline(
        timed.setup.get("flops"), nbytes, verdict.candidate_ms, env.get("fp32_flops_per_s"),
        env.get("memory_bandwidth_bytes_per_s"),
    )  # fmt: skip
    hw["roofline"]["bytes_source"] = source
    if not hw.get("ptxas") and "cuda" in verdict.backends:
        missing.append("ptxas statistics: the extension was already built (no compiler output)")


def _census(sides: Sides, kernel_names: list[str]) -> dict:
    """The kernels one forward pass launched (torch.profiler); kernels torch.compile generated end it."""
    reply = sides.ask_cand({"op": "kernels"}, stage="census")
    raw = reply.get("kernels") if isinstance(reply.get("kernels"), list) else []
    kernels = [(str(k[0]), float(k[1])) for k in raw if isinstance(k, list) and len(k) == 2
               and isinstance(k[1], (int, float))]  # fmt: skip
    generated = hardware.compiler_kernels(kernels, kernel_names)
    if generated:
        raise Stop(REJECTED, compiled_reason(len(generated)) + f" (kernels {', '.join(generated[:5])})",
                   stage="census")  # fmt: skip
    return hardware.census(kernels, kernel_names)


def _check_floor(verdict: Verdict, timed: TimedShape, on_cuda: bool) -> None:
    env = verdict.environment
    bandwidth = env.get("memory_bandwidth_bytes_per_s")
    nbytes = timed.setup.get("bytes") or timed.output_bytes  # at least the output must be written
    if not on_cuda or not bandwidth or not nbytes:
        verdict.warnings.append(
            "physical floor not checked: " + ("CPU device" if not on_cuda else "no bandwidth or byte count")
        )
        return
    floor_ms = nbytes / bandwidth * 1e3
    if verdict.candidate_ms < 0.8 * floor_ms:
        raise Stop(
            REJECTED,
            f"{verdict.candidate_ms:.4f} ms is below the physical floor of {floor_ms:.4f} ms "
            f"({nbytes / 1e6:.1f} MB at {bandwidth / 1e9:.0f} GB/s): the work was not all timed",
            stage="benchmark",
        )


def _nsight_compute(sides: Sides, verdict: Verdict, options, timed: TimedShape, kernel_names, missing) -> None:
    if not options.profile:
        missing.append("Nsight Compute metrics: not requested (profile with --profile)")
        return
    if not options.device.startswith("cuda"):
        missing.append("Nsight Compute metrics: CPU device")
        return
    try:
        result = _run_ncu(sides, verdict, options, timed, kernel_names)
    except Exception as exc:  # profiling is evidence, never the verdict: no failure of it may end one
        result = {"error": f"profiling failed inside forge ({type(exc).__name__}: {exc})"}
    if "error" in result:
        missing.append(f"Nsight Compute metrics: {result['error']}")
    else:
        verdict.hardware["ncu"] = result


def _run_ncu(sides: Sides, verdict: Verdict, options, timed: TimedShape, kernel_names) -> dict:
    workdir = os.path.join(sides.workdir, "ncu")
    prefix, args = [], []
    if options.profile_isolated:
        prefix, why_not = isolation.isolation_prefix()
        if why_not:
            return {"error": f"isolated profiling asked for, but {why_not}"}
        readable = [os.path.join(sides.workdir, "reference"), os.path.dirname(sides.candidate_copy)]
        args = ["--layout", json.dumps(isolation.layout(workdir, readable, sides.caches))]
    return ncu.profile(
        ncu.ProfileRequest(
            candidate=sides.candidate_copy,
            init_inputs=timed.setup["init_inputs"],
            inputs=timed.setup["pool_inputs"],
            init_seed=timed.init_seed,
            kernel_names=kernel_names,
            workdir=workdir,
            device=options.device,
            report_dir=options.profile_dir,
            report_name=os.path.splitext(os.path.basename(verdict.candidate))[0],
            timeout=options.profile_timeout,
            isolation_prefix=prefix,
            target_args=args,
            env=sides.caches,  # the candidate runner's caches: a load_inline build is reused
        )
    )


def _measured_bytes(hw: dict) -> float | None:
    """ncu's DRAM bytes stand for the whole call only when every launch was profiled and the
    candidate's own kernels did (nearly) all of the GPU's work."""
    profile, census = hw.get("ncu") or {}, hw.get("census") or {}
    if profile.get("all_launches") and (census.get("own_share") or 0) >= 0.95:
        return profile.get("dram_bytes")
    return None
