"""The benchmark stage of an evaluation: interleaved timing, and the checks on what was timed.

A mixin of the evaluation pipeline (evaluate.py), kept apart so that each file
reads in one sitting. The method itself is timing.time_calls; this module
sizes the blocks, interleaves the reference and the candidate, checks every
timed output and the reported times against the host's own clock, and
records the hardware evidence.
"""

from __future__ import annotations

import os
import secrets
import statistics

from forge_sandbox import compare, hardware, isolation, ncu, protocol
from forge_sandbox.host import RunnerFailure
from forge_sandbox.taskfile import TaskError
from forge_sandbox.verdict import INCORRECT, REJECTED, Stop, draw_seed


class BenchmarkStage:
    def _benchmark(self) -> None:
        cuda = self.on_cuda
        blocks = self.opt.blocks or (5 if cuda else 3)
        budget = self.opt.block_budget_s or (0.2 if cuda else 0.1)
        pool_size = self.opt.pool
        shift_range = 1 << 20

        def schedule(n: int) -> list:
            return [[secrets.randbelow(pool_size), 1 + secrets.randbelow(shift_range), draw_seed()] for _ in range(n)]

        # Warm up both (JIT compiles happen here), then size the blocks. The reference's
        # own times are trusted; for the candidate only the host's clock counts, so that a
        # candidate cannot shrink the blocks by claiming to be slow.
        for side in ("reference", "candidate"):
            self._time(side, schedule(1), warmup=3, block=-1)
        probe = schedule(5)
        ref, ref_wall = self._time("reference", probe, warmup=0, block=-2)
        ref_est = statistics.median(ref["times_ms"])
        ref_overhead_per_call = max(0.0, ref_wall * 1e3 - sum(ref["times_ms"])) / len(probe)
        _, cand_wall = self._time("candidate", probe, warmup=0, block=-2)
        cand_est = cand_wall * 1e3 / len(probe) - ref_overhead_per_call
        per_call_ms = max(ref_est, cand_est, 1e-3)
        lo, hi = (10, 1000) if cuda else (5, 50)
        n = int(min(hi, max(lo, budget * 1e3 / per_call_ms)))
        keep = min(2, n)
        ref_times, cand_times = [], []
        clock_blocks = []  # per block: (candidate's reported ms, reference's overhead ms, candidate's overhead ms)
        for b in range(blocks):
            calls = schedule(n)
            seed = draw_seed()
            ref, ref_wall = self._time("reference", calls, warmup=2, block=b, checksum_seed=seed, keep=keep)
            cand, cand_wall = self._time("candidate", calls, warmup=2, block=b, checksum_seed=seed, keep=keep)
            self._check_timed_outputs(ref, cand, n, keep)
            ref_times += ref["times_ms"]
            cand_times += cand["times_ms"]
            clock_blocks.append(
                (
                    sum(cand["times_ms"]),
                    ref_wall * 1e3 - sum(ref["times_ms"]),
                    cand_wall * 1e3 - sum(cand["times_ms"]),
                )
            )
        self._check_host_clock(clock_blocks, n)
        self._check_plausible(cand_times)
        ref_ms, cand_ms = statistics.median(ref_times), statistics.median(cand_times)
        v = self.verdict
        v.reference_ms, v.candidate_ms = _sig(ref_ms), _sig(cand_ms)
        v.reference_iqr_ms, v.candidate_iqr_ms = _iqr(ref_times), _iqr(cand_times)
        v.timing = {
            "method": "cuda events, device-wide sync, L2 flushed" if cuda else "host clock, cache flushed",
            "calls_per_block": n,
            "blocks": blocks,
            "interleaved": True,
            "pool": pool_size,
            # the task's declared work at the timed shape, for roofline figures
            "flops": self.setup.get("flops"),
            "bytes": self.setup.get("bytes") or self.output_bytes,
            "bytes_declared": bool(self.setup.get("bytes")),
        }
        self._check_floor(cand_ms)
        v.speedup = _sig(ref_ms / cand_ms)
        v.stage = "benchmark"
        self._hardware_evidence(cand_ms)

    def _hardware_evidence(self, cand_ms: float) -> None:
        """Kernel census, Nsight Compute metrics and roofline position; what cannot be measured is said so."""
        env, hw = self.verdict.environment, self.verdict.hardware
        missing = hw.setdefault("not_measured", [])
        if not self.on_cuda:
            missing.append("kernel census and device peaks: CPU device (no device kernels to profile)")
        else:
            reply = self._ask_cand({"op": "census"}, stage="census")
            kernels = [k for k in reply.get("kernels", []) if isinstance(k, list) and len(k) == 2]
            hw["census"] = hardware.census([(str(n), float(t)) for n, t in kernels], self.kernel_names)
            if hw["census"].get("flag"):
                self.verdict.warnings.append(hw["census"]["flag"])
        self._nsight_compute(hw, missing)
        measured = self._measured_bytes(hw)
        nbytes, source = (
            (self.setup["bytes"], "declared by the task")
            if self.setup.get("bytes")
            else (measured, "DRAM bytes measured by ncu")
            if measured
            else (self.setup.get("input_bytes", 0) + self.output_bytes, "inputs read once, output written once")
        )
        hw["roofline"] = hardware.roofline(
            self.setup.get("flops"),
            nbytes,
            cand_ms,
            env.get("fp32_flops_per_s"),
            env.get("memory_bandwidth_bytes_per_s"),
        )
        hw["roofline"]["bytes_source"] = source
        if not hw.get("ptxas") and "cuda" in self.verdict.backends:
            missing.append("ptxas statistics: the extension was already built (no compiler output)")

    def _nsight_compute(self, hw: dict, missing: list) -> None:
        if not self.opt.profile:
            missing.append("Nsight Compute metrics: not requested (profile with --profile)")
            return
        if not self.on_cuda:
            missing.append("Nsight Compute metrics: CPU device")
            return
        try:
            result = self._run_ncu()
        except Exception as exc:  # profiling is evidence, never the verdict: no failure of it may end one
            result = {"error": f"profiling failed inside forge ({type(exc).__name__}: {exc})"}
        if "error" in result:
            missing.append(f"Nsight Compute metrics: {result['error']}")
        else:
            hw["ncu"] = result

    def _run_ncu(self) -> dict:
        workdir = os.path.join(self.workdir, "ncu")
        prefix, args = [], []
        # The candidate runner's cache folders when it had them (a load_inline build is then reused).
        caches = self.candidate_caches
        if self.opt.profile_isolated:
            prefix, why_not = isolation.isolation_prefix()
            if why_not:
                return {"error": f"isolated profiling asked for, but {why_not}"}
            args, caches = self._isolation_args(workdir)
        return ncu.profile(
            ncu.ProfileRequest(
                candidate=self.candidate_copy,
                init_inputs=self.setup["init_inputs"],
                inputs=self.setup["verify_inputs"],
                init_seed=self.init_seed,
                kernel_names=self.kernel_names,
                workdir=workdir,
                device=self.opt.device,
                report_dir=self.opt.profile_dir,
                report_name=os.path.splitext(os.path.basename(self.candidate))[0],
                timeout=self.opt.profile_timeout,
                isolation_prefix=prefix,
                target_args=args,
                env=caches,
            )
        )

    @staticmethod
    def _measured_bytes(hw: dict) -> float | None:
        """ncu's DRAM bytes stand for the whole call only when every launch was profiled and the
        candidate's own kernels did (nearly) all of the GPU's work."""
        profile, census = hw.get("ncu") or {}, hw.get("census") or {}
        if profile.get("all_launches") and (census.get("own_share") or 0) >= 0.95:
            return profile.get("dram_bytes")
        return None

    def _time(self, side: str, calls: list, warmup: int, block: int, checksum_seed: int = 0, keep: int = 0):
        message = {
            "op": "time",
            "calls": calls,
            "warmup": warmup,
            "block": block,
            "checksum_seed": checksum_seed,
            "keep_last": keep,
        }
        runner = self.ref if side == "reference" else self.cand
        try:
            reply, wall = runner.request(message, self.opt.timeout)
        except RunnerFailure as failure:
            raise self._runner_stop(failure, side, "benchmark") from None
        if not reply["ok"]:
            if side == "reference":
                raise TaskError(f"{self.task}: the reference failed while timed: {reply.get('error')}")
            raise self._error_stop(reply, "benchmark")
        times = reply.get("times_ms")
        if not (
            isinstance(times, list)
            and len(times) == len(calls)
            and all(isinstance(t, (int, float)) and t >= 0 for t in times)
        ):
            raise Stop(REJECTED, "the candidate's runner reported malformed timings", stage="benchmark")
        if side == "candidate":
            self._check_patched(reply.get("patched"), "benchmark")
            if reply.get("threads_started", 0) > 0:
                raise Stop(REJECTED, "a thread was left running during timing", stage="benchmark")
        return reply, wall

    def _check_timed_outputs(self, ref: dict, cand: dict, n: int, keep: int) -> None:
        sums = cand.get("checksums")
        if not isinstance(sums, list) or len(sums) != n:
            raise Stop(REJECTED, "the candidate's runner reported malformed checksums", stage="benchmark")
        rel_norm = compare.Tolerance.for_output(self.output_dtype, self.tolerance).rel_norm
        for i, (want, got) in enumerate(zip(ref["checksums"], sums)):
            problem = compare.compare_checksums(want, got, rel_norm)
            if problem:
                raise Stop(
                    INCORRECT,
                    f"timed call {i + 1}: {problem} (outputs produced while timed must be correct too)",
                    stage="benchmark",
                )
        expected = protocol.load_tensors(ref["payload"])
        actual = self._load_candidate_tensors(cand.get("kept_outputs"), "benchmark")
        if not isinstance(actual, list) or len(actual) != len(expected):
            raise Stop(REJECTED, "the candidate's runner returned the wrong number of timed outputs", stage="benchmark")
        for want, got in zip(expected, actual):
            ok, reason, _ = compare.compare_outputs(want, got, self.tolerance)
            if not ok:
                raise Stop(INCORRECT, f"an output produced while timed is wrong: {reason}", stage="benchmark")

    def _check_host_clock(self, blocks: list, n: int) -> None:
        """The runner's times must add up with what the host's own clock saw.

        Outside its timed calls the candidate's runner does the same work as the
        reference's (staging, flush, checksums), so in each block the host's
        wall time minus the reported times should match the reference's. Time
        the host saw that the reported calls do not explain means the reports
        are too low: patched clocks, or work hidden from the timer. The median
        over blocks is judged, so that one scheduling hiccup on a busy machine
        does not condemn an honest kernel, while a liar is caught in every block.
        """
        # noise allowance: a share of the reported time and of the reference's overhead, a
        # little per call, a little per block (more on a CPU, where the cores are shared)
        share, per_call_ms, per_block_ms = (0.25, 0.02, 10.0) if self.on_cuda else (1.0, 5.0, 100.0)
        excess = []
        for reported, ref_overhead, cand_overhead in blocks:
            unexplained = cand_overhead - ref_overhead
            allowance = share * (reported + max(ref_overhead, 0.0)) + per_call_ms * n + per_block_ms
            excess.append((unexplained - allowance, unexplained, reported))
        worst_typical = sorted(excess)[len(excess) // 2]
        if worst_typical[0] > 0:
            raise Stop(
                REJECTED,
                f"the reported times do not add up: in a typical block the host's clock saw "
                f"{worst_typical[1]:.1f} ms more than the candidate's {worst_typical[2]:.1f} ms of timed calls "
                "explain (patched clock or hidden work)",
                stage="benchmark",
            )

    def _check_plausible(self, cand_times: list) -> None:
        """Reported times must be physical and not piled onto a few calls to move the median.

        The host's clock bounds the candidate's *total*; a runner that reports the
        right total but tiny times for most calls would still fake the median.
        Honest timings, flushed caches and all, have a mean close to their median.
        """
        median, mean = statistics.median(cand_times), statistics.fmean(cand_times)
        if median <= 1e-6:
            raise Stop(REJECTED, f"the reported times are not physical (median {median:g} ms)", stage="benchmark")
        limit = 2.0 if self.on_cuda else 3.0
        if mean > limit * median:
            raise Stop(
                REJECTED,
                f"the reported times are implausibly skewed (mean {mean:.4g} ms, median {median:.4g} ms): "
                "time was moved between calls",
                stage="benchmark",
            )

    def _check_floor(self, cand_ms: float) -> None:
        env = self.verdict.environment
        bandwidth = env.get("memory_bandwidth_bytes_per_s")
        nbytes = self.setup.get("bytes") or self.output_bytes  # at least the output must be written
        if not self.on_cuda or not bandwidth or not nbytes:
            self.verdict.warnings.append(
                "physical floor not checked: " + ("CPU device" if not self.on_cuda else "no bandwidth or byte count")
            )
            return
        floor_ms = nbytes / bandwidth * 1e3
        if cand_ms < 0.8 * floor_ms:
            raise Stop(
                REJECTED,
                f"{cand_ms:.4f} ms is below the physical floor of {floor_ms:.4f} ms "
                f"({nbytes / 1e6:.1f} MB at {bandwidth / 1e9:.0f} GB/s): the work was not all timed",
                stage="benchmark",
            )

    # -- runner plumbing ----------------------------------------------------------


def _iqr(values: list) -> float | None:
    if len(values) < 4:
        return None
    q = statistics.quantiles(values, n=4)
    return _sig(q[2] - q[0])


def _sig(x: float) -> float:
    """Six significant figures: enough for any timing, without float noise in the JSON."""
    return float(f"{x:.6g}")
