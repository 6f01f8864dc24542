"""Timing the candidate against both baselines, so that nothing in the candidate's process decides.

The method of one block is :func:`timing.time_calls`, the same for every side:
the eager reference, the reference under torch.compile (unless its time is
cached) and the candidate. Around it, this module:

* interleaves the sides block by block, in a fresh random order each block,
  each block preceded by an untimed warm-up block;
* keeps one side quiet while another is timed: every process of the
  candidate is stopped (SIGSTOP) while a reference block runs, and must show
  no CPU time used meanwhile; on CUDA the reference first waits until no other
  process's work is on the GPU;
* bounds the candidate's reported times with the host's own clock: the host
  starts each call itself (timing.time_calls: it names the call's inputs) and
  its clock stops when the output's checksum arrives (on the CPU: when the
  runner stands stopped after the call, the host staging the inputs and
  reading the output itself, hosted_calls). The trusted reference's
  calls tell how much of that window is not the call (staging, checksum, the
  pipe); each call of the candidate's counts what its window leaves once that
  is taken off, never shorter than what the host's clock resolves for a block's
  typical call, whatever it reported. So patched clocks, hidden work, work
  moved into the checksum or between calls can only make its figure worse, and
  a block whose calls took far longer than reported (beyond how much the
  reference's overhead varies), or a call reported longer than its window, is
  rejected outright;
* on the CPU, the candidate may not keep more cores busy than the thread
  count both sides get (its CPU time over its busiest thread's, from /proc);
* takes each side's figure as the median per call over all timed calls;
* checks every output produced while timed (a checksum each, the last ones in
  full), and the operators PyTorch ran in one call per block that the host
  picked at random (op_census), so that a candidate honest while verified and
  PyTorch-backed while timed is caught;
* on the CPU, samples both runners' threads from outside while they are timed
  (cpu_samples) and holds the candidate's samples to op_census.judge_samples:
  PyTorch compute that its census did not record, or that the reference never
  runs, shows there whatever the candidate's process did to its census.
"""

from __future__ import annotations

import collections
import math
import random
import secrets
import statistics
import time
from dataclasses import dataclass, field

import torch

from forge_sandbox import census, compare, cpu_samples, hosted_calls, op_census, protocol, timing
from forge_sandbox.sides import ARCHIVE_OVERHEAD_BYTES, Malformed, Sides, expect, outputs_limit
from forge_sandbox.taskfile import TaskError
from forge_sandbox.verdict import INCORRECT, REJECTED, Stop, draw_seed

EAGER, COMPILED, CANDIDATE = "eager", "compiled", "candidate"
PROBE_TRUST = 20  # how much longer than the references' calls the candidate's may set the sampling period
QUIET_CPU_S = 0.02  # CPU time a stopped process may show (one clock tick and a rounding)
# Cores kept busy beyond the thread count that still pass. The counts are the threads' own, in nanoseconds
# (schedstat, or the runner's cpu group), and a per-process count in clock ticks, read without a group, is
# read two ticks short (ThreadTimes.since): every honest kernel measured here, bundled and fixtures, 18 on
# 2026-11-27, kept 1.000 cores busy.
# A helper thread doing 6% of the work (one started by a timer's notice) showed 1.077. The reference's own
# figure is reported, not allowed: torch.compile's threads in its runner raised it to 1.33 once.
CORES_SLACK = 0.05
# On one thread, the CPU time beside the busiest thread over its own that still passes (_beside_the_busiest):
# honest runners measured 0.0000 (four kernels, 2026-12-02); the timer's helper thread doing 17% of the work,
# 4.0% on a quiet machine and 2.6% beside two busy processes, where its cores read 1.05 or less.
BESIDE_THE_ONE_THREAD = 0.005
KEPT_OUTPUTS, KEPT_BYTES = 8, 64 * 2**20  # per timed block and side, compared in full
# Hosted: the places at which every call's output is compared element by element with the reference's for
# the same inputs, drawn by the host after the call; a checksum's margin alone let an approximation out of
# tolerance at 30% of its elements through on the calls not kept in full (a review, 2026-11-27).
SAMPLED_POSITIONS = 256
# Hosted: the outputs each runner holds through a block (the last ones, up to this many bytes, all of a
# block of small ones), so that none of their memory is free to come back as a later call's output.
HELD_BYTES = 256 * 2**20
# How much longer than the host's window around it a call's report may be: both clocks are the machine's
# CLOCK_MONOTONIC, read microseconds apart; a rounding and a clock read.
REPORT_SLACK_MS = 0.05
# How long the host polls for a hosted call's answer before it sleeps: a host asleep through a call of
# milliseconds wakes late (a tick or more here), which the reference's short calls do not show, so the
# candidate's longer calls would carry it unexplained.
SPIN_S = 0.1


@dataclass
class Block:
    """One timed block of one side, as the host saw it."""

    side: str
    times_ms: list[float]  # per call, as the runner reported
    windows_ms: list[float]  # per call, the host's clock from its word to the checksum
    checksums: list
    census_at: int
    reply: dict  # the runner's reply that ended the block
    wall_ms: float  # the whole block, on the host's clock
    spans: list = field(default_factory=list)  # per call, [start, end] of the forward (CLOCK_MONOTONIC ns)
    cpu_s: float = 0.0  # the runner's CPU time during the block (its processes, read from /proc)
    busiest_thread_s: float = 0.0  # the CPU time of its busiest thread meanwhile
    kept: list = field(default_factory=list)  # hosted: the last outputs, as the host read them at the block's end
    samples: list = field(default_factory=list)  # hosted: per call, its output's values at SAMPLED_POSITIONS places
    # Hosted, the trusted sides': per call, the window less the runner's loop from having the host's word to
    # answering it (its "loop" report): what the host and the kernel add, which no runner's loop can save
    outside_ms: list = field(default_factory=list)

    def untouched(self, values: list[float]) -> list[float]:
        """``values`` of the calls that ran outside the operator census."""
        return [t for i, t in enumerate(values) if i != self.census_at]


class Benchmark:
    def __init__(
        self,
        sides: Sides,
        *,
        on_cuda: bool,
        blocks: int,
        budget_s: float,
        pool: int,
        threads: int,
        expected_dtype: torch.dtype,
        output_bytes: int,
        tolerance: dict | None,
        compile_mode: str | None,
        reference_ops: set[str],
        reference_standard_ops: set[str] = frozenset(),
        triton_interpreted: bool = False,
        pool_path: str = "",
        output_shape: tuple = (),
        own_code_checks: bool = True,
    ) -> None:
        """``compile_mode``: time the reference under torch.compile in this mode (None: do not);
        ``triton_interpreted``: the candidate's Triton kernels run on numpy (the CPU's interpreter), so
        numpy's compute within the spans its runner reports its interpreted launches ran in is its own; ``pool_path``: the timing pool the
        reference saved, which the host stages from when it hosts the calls (hosted_calls: the CPU's,
        when both runners' memory is open to it); ``own_code_checks``: EvalOptions'."""
        self.sides = sides
        self.own_code_checks = own_code_checks
        self.hosted = False  # the host stages and reads each timed call (_run decides)
        self.pool_path = pool_path
        self.output_shape = list(output_shape)  # the reference's, which a hosted candidate output must have
        self.pool_inputs: list[list] = []  # hosted: the pool, on the host
        self.on_cuda = on_cuda
        self.blocks = blocks
        self.budget_s = budget_s
        self.pool = pool
        self.threads = threads
        self.expected_dtype = expected_dtype
        self.output_bytes = output_bytes
        self.tolerance = tolerance
        self.compile_mode = compile_mode
        self.reference_ops = reference_ops
        self.reference_standard_ops = reference_standard_ops
        self.compile_reason = ""  # why the compiled reference could not be timed
        # Where each hosted call's output is compared element by element (_sampled_positions): the host's
        # secret, never sent to a runner, so no kernel can be right at those places alone.
        self.position_secret = secrets.randbits(62)
        self.quiet_waits_ms: list[float] = []
        self.triton_interpreted = triton_interpreted
        # per kind of work, the largest share of the reference's volume the candidate's census recorded
        # in a timed call (op_census.census_shares)
        self.census_shares: dict[str, float] = {}
        # The outside view of the CPU (cpu_samples); on CUDA the device's own kernel census does this.
        self.sampling = "" if on_cuda else cpu_samples.available()
        self.profiles: cpu_samples.Profiles | None = None  # from the first timed block on (_attach_samplers)
        self.call_estimate_ms = 0.0  # the longest side's typical call, from the probe
        self.held = 1  # hosted: the outputs each runner holds through a timed block (_run sets it)

    # -- the run ------------------------------------------------------------------------------

    def run(self) -> dict:
        """Time every side; return the figures (see ``_figures``) or raise Stop."""
        host_threads = torch.get_num_threads()
        if not self.on_cuda:
            # The host's own PyTorch work (staging, checksums) on one thread: after a parallel op, the
            # pool's threads spin on the cores for milliseconds, and a runner resumed for its next call
            # waited for them (measured: +2-4 ms before a third of an interpreted Triton kernel's calls).
            torch.set_num_threads(1)
        try:
            return self._run()
        finally:
            torch.set_num_threads(host_threads)
            if self.profiles is not None:
                self.profiles.close()

    def _run(self) -> dict:
        sides = [EAGER, CANDIDATE]
        if self.compile_mode and self._compile():
            sides.insert(1, COMPILED)
        self.hosted = not self.on_cuda and bool(self.sides.readers)
        if self.hosted:
            self._share_inputs()
        for side in sides:
            self._time(side, self._schedule(1), warmup=True)
        n = self._calls_per_block(sides)
        if not self.on_cuda and not self.sampling:
            self._attach_samplers()
        timed: dict[str, list[Block]] = {side: [] for side in sides}
        # The last outputs of each block, held as the candidate returned them and compared in full: a
        # kernel that writes into a ring of buffers of its own shorter than this shows stale results.
        keep = min(n, KEPT_OUTPUTS, max(2, KEPT_BYTES // max(self.output_bytes, 1)))
        self.held = min(n, max(keep, HELD_BYTES // max(self.output_bytes, 1)))
        for _ in range(self.blocks):
            calls = self._schedule(n)
            # Never the first call: it makes the block's checksum weights (timing.Checksummer) inside the
            # host's window, PyTorch compute that would make the census's call look unlike the others.
            census_at = 1 + secrets.randbelow(n - 1) if n > 1 else 0
            seed = draw_seed()
            order = random.SystemRandom().sample(sides, len(sides))
            for side in order:
                self._time(side, self._schedule(2), warmup=True)  # inputs of its own: none a timed call gets
                # The compiled reference is not censused: under a dispatch mode dynamo would recompile it.
                census = -1 if side == COMPILED else census_at
                timed[side].append(self._time(side, calls, census_at=census, checksum_seed=seed, keep=keep))
            self._check_block(timed[EAGER][-1], timed[CANDIDATE][-1])
        figures = self._figures(timed, n)
        figures["cpu_samples"] = self._judge_samples()
        return figures

    def _attach_samplers(self) -> None:
        """Sample both runners from now on; the candidate is stopped meanwhile, so that no thread of it
        escapes: every later thread or process is inherited from one already sampled."""
        self.profiles = cpu_samples.Profiles(cpu_samples.period_for(self.call_estimate_ms))
        paused = self.sides.cand.pause()
        try:
            self.profiles.attach(EAGER, self.sides.ref.processes())
            self.profiles.attach(CANDIDATE, self.sides.cand.processes(), self.sides.first_bases)
        except OSError as exc:  # the kernel refused the ring buffers' pages (perf_event_mlock_kb)
            self.profiles.close()
            self.profiles = None
            self.sampling = f"the perf ring buffers were refused ({exc.strerror or exc})"
        finally:
            self.sides.cand.resume(paused)
        if self.profiles is not None and self.profiles.samplers[CANDIDATE].refused:
            raise Stop(
                REJECTED,
                f"the kernel refused the host's sampling of {len(self.profiles.samplers[CANDIDATE].refused)} of the "
                "candidate's threads while the reference's were sampled (a process made unreadable to its owner): "
                "work out of the host's sight is not allowed",
                stage="benchmark",
            )

    def _share_inputs(self) -> None:
        """Lay out each runner's timed inputs in the memory it shares with the host, and have it map them."""
        self.pool_inputs = protocol.load_tensors(self.pool_path)
        for role in ("reference", "candidate"):
            layout = self.sides.shared[role].place(self.pool_inputs[0])
            if role == "reference":
                self.sides.ask_ref({"op": "share", "layout": layout})
            else:
                self.sides.ask_cand({"op": "share", "layout": layout}, "benchmark")

    def _judge_samples(self) -> dict:
        """The rule on the candidate's sampled CPU time (op_census.judge_samples); the figures for the verdict."""
        if self.profiles is None:
            return {"measured": False, "reason": self.sampling or "CUDA: the device's kernel census applies"}
        ref, cand = self.profiles.phases[EAGER], self.profiles.phases[CANDIDATE]
        lost = self.profiles.lost[CANDIDATE]
        if lost:
            raise Stop(
                REJECTED,
                f"while timed: the host lost {lost} samples of the candidate's threads (their ring buffers were "
                "full): CPU time it cannot account for is not allowed",
                stage="benchmark",
            )
        unreadable = _samples_in(cand, cpu_samples.UNREADABLE)
        if unreadable > op_census.SLIVER_SAMPLES:
            raise Stop(
                REJECTED,
                f"while timed: {unreadable} of the host's samples of the candidate ran in a process whose memory map "
                "it could not read (gone before the block ended, or made unreadable): CPU time the host cannot "
                "attribute is not allowed",
                stage="benchmark",
            )
        # Code unmapped, or changed, between running and the host's reading of the map: whose it was, nobody
        # can say (red team round 8: PyTorch's code mapped in by a helper process for each call, and covered
        # with an inaccessible mapping before it answered; round 9: covered with data after each call).
        # The reference's rate of it is the noise.
        unsure = (cpu_samples.UNMAPPED, cpu_samples.REMAPPED, cpu_samples.UNVERIFIED)
        unmapped = sum(_samples_in(cand, name) for name in unsure)
        theirs = sum(_samples_in(ref, name) for name in unsure)
        allowed = max(op_census.SLIVER_SAMPLES, 2 * theirs / max(ref["calls"], 1) * cand["calls"])
        if unmapped > allowed:
            raise Stop(
                REJECTED,
                f"while timed: {unmapped} of the host's samples of the candidate ran in code that was unmapped, had "
                "other memory mapped over it, or could have changed (writable, copied on write, its file written "
                "or deleted) before the host read it: CPU time the host cannot attribute is not allowed",
                stage="benchmark",
            )
        if self.profiles.too_many_mappings(CANDIDATE):
            sampler = self.profiles.samplers[CANDIDATE]
            raise Stop(
                REJECTED,
                f"while timed: the candidate mapped memory over code {len(self.profiles.names[CANDIDATE].over_code)} "
                f"times (at most {cpu_samples.MAX_CODE_MAPPINGS}) and memory of any kind "
                f"{len(sampler.mapped) + sampler.mapped_beyond} times (at most {cpu_samples.MAX_MAPPINGS_KEPT}): code "
                "that comes and goes cannot be attributed",
                stage="benchmark",
            )
        kinds = {op_census.kind(name) for name in self.reference_ops}
        problem = op_census.judge_samples(ref, cand, self.census_shares, kinds, interpreted=self.triton_interpreted)
        if problem:
            raise Stop(REJECTED, f"while timed: {problem}", stage="benchmark")
        return {
            "measured": True,
            "period_us": self.profiles.period_ns / 1e3,
            "candidate_forward": sum(cand["forward"].values()),
            "candidate_around": sum(cand["around"].values()),
            "reference_forward": sum(ref["forward"].values()),
            "reference_lost": self.profiles.lost[EAGER],
            "own_share": op_census.own_share_from_samples(cand),
        }

    def _compile(self) -> bool:
        paused = self.sides.cand.pause()  # compiling is work, and the candidate's must not slow it
        try:
            reply = self.sides.ask_ref({"op": "compile", "mode": self.compile_mode})
        finally:
            self.sides.cand.resume(paused)
        if not reply.get("compiled"):
            self.compile_reason = str(reply.get("reason", "torch.compile failed"))
            return False
        return True

    def _schedule(self, n: int) -> list:
        """Per call: a pool entry, a roll and a jitter seed (timing.Staging), drawn on the host."""
        return [[secrets.randbelow(self.pool), 1 + secrets.randbelow(1 << 20), draw_seed()] for _ in range(n)]

    def _calls_per_block(self, sides: list[str]) -> int:
        """Calls per block from the time budget: the references' own times, and for the candidate
        only the host's clock (so that it cannot shrink the blocks by claiming to be slow)."""
        probe = self._schedule(5)
        ref = self._time(EAGER, probe, warmup=True)
        overhead = statistics.median(w - t for w, t in zip(ref.windows_ms, ref.times_ms))
        estimates = [statistics.median(ref.times_ms)]
        if COMPILED in sides:
            estimates.append(statistics.median(self._time(COMPILED, probe, warmup=True).times_ms))
        reference_ms = max(estimates)
        cand = self._time(CANDIDATE, probe, warmup=True)
        estimates.append(statistics.median(cand.windows_ms) - overhead)
        # The sampling period follows the calls' length, but a candidate slow only while probed must not
        # stretch it until its timed calls go unseen: at most PROBE_TRUST times the references' calls.
        longest = max(max(estimates), statistics.median(cand.windows_ms))
        self.call_estimate_ms = min(longest, PROBE_TRUST * reference_ms)
        # On the CPU at least 20 calls, so that the host's samples of a block are never too few to judge.
        lo, hi = (10, 1000) if self.on_cuda else (20, 50)
        return int(min(hi, max(lo, self.budget_s * 1e3 / max(max(estimates), 1e-3))))

    # -- one block ----------------------------------------------------------------------------

    def _time(self, side: str, calls: list, warmup: bool = False, census_at: int = -1, checksum_seed: int = 0,
              keep: int = 0) -> Block:  # fmt: skip
        message = {"op": "time", "calls": len(calls), "checksum_seed": checksum_seed,
                   "keep_last": 0 if warmup else keep, "hold_last": 1 if warmup else self.held, "which": side}  # fmt: skip
        cand = self.sides.cand
        # The candidate is sampled while timed; the reference also while warming up, so that the functions
        # it runs are known from more samples.
        sampled = self.profiles is not None and side != COMPILED and (side == EAGER or not warmup)
        if side == CANDIDATE:
            before = cand.thread_times()
            block = self._exchange(side, message, calls, census_at, sampled)
            block.cpu_s, block.busiest_thread_s = cand.thread_times().since(before)
            self._check_candidate_reply(block.reply)
            return block
        paused = cand.pause()
        try:
            if self.on_cuda:
                self._wait_quiet()
            before = self.sides.ref.thread_times() if side == EAGER and not self.on_cuda else None
            block = self._exchange(side, message, calls, census_at, sampled)
            if before is not None:  # reported beside the candidate's (_check_threads)
                block.cpu_s, block.busiest_thread_s = self.sides.ref.thread_times().since(before)
        finally:
            used = cand.resume(paused)
        if used > QUIET_CPU_S:
            raise Stop(
                REJECTED,
                f"the candidate's processes used {used * 1e3:.0f} ms of CPU while the reference was timed, "
                "though they were stopped: work outside its own calls is not allowed",
                stage="benchmark",
            )
        return block

    def _exchange(self, side: str, message: dict, calls: list, census_at: int, sampled: bool = False) -> Block:
        if self.hosted:
            return self._exchange_hosted(side, message, calls, census_at, sampled)
        return self._exchange_in_runner(side, message, calls, census_at, sampled)

    def _exchange_hosted(self, side: str, message: dict, calls: list, census_at: int, sampled: bool) -> Block:
        """The host's side of timing.time_hosted_calls (hosted_calls): with the runner stopped, it stages
        a call's inputs; its clock runs from resuming the runner to having stopped it again after the call
        answered; then it reads and sums the output. The last ``keep_last`` outputs are read again at the
        block's end, the runner still stopped."""
        sides, stage = self.sides, "benchmark"
        runner = sides.runner(side)
        shared, reader = sides.shared[runner.role], sides.readers[runner.role]
        checksummer = timing.Checksummer(message["checksum_seed"], torch.device("cpu"))
        limit = 2 * self.output_bytes + ARCHIVE_OVERHEAD_BYTES  # as outputs_limit allows on the pipe
        keep_from = len(calls) - message["keep_last"]
        times, windows, checksums, spans, host_windows, held, samples = [], [], [], [], [], [], []
        outside = []
        # Where the outputs the runner holds while a call runs lie (the last message["hold_last"]):
        # memory that call's output may not come from.
        holding: collections.deque = collections.deque(maxlen=message["hold_last"])
        if sampled:
            self.profiles.begin(side)
        block_start = time.perf_counter()
        sides.send_step(side, {**message, "hosted": True}, stage)
        if sides.read_step(side, stage).get("ready") != 0:
            raise Malformed(stage, "a step out of order before the first call")
        try:
            sides.halt(side, stage)
            for i, (slot, shift, seed) in enumerate(calls):
                shared.stage(i % 2, self.pool_inputs[slot], shift, seed, keep_copy=side == CANDIDATE)
                word = hosted_calls.call_word(i, i % 2, i == census_at)
                window, start_ns, end_ns = sides.timed_call(side, word, stage, SPIN_S)
                done = sides.read_step(side, stage)
                windows.append(window)
                host_windows.append((start_ns, end_ns))
                ms, span = _call_report(done, i, stage)
                if side != CANDIDATE:
                    outside.append(window - _loop_ms(done, i, stage))
                changed = shared.modified(i % 2) if side == CANDIDATE else []
                if changed:
                    raise Stop(
                        REJECTED,
                        f"while timed, call {i + 1}'s forward modified its input(s) {changed}: inputs must stay "
                        "unchanged",
                        stage="benchmark",
                    )
                out = self._read_output(side, reader, done.get("output"), limit)
                if side == CANDIDATE and out is not None:
                    self._check_fresh(reader.last_span, holding, i)
                checksums.append(checksummer(out))
                samples.append(self._sampled(out, message["checksum_seed"], i))
                if i >= keep_from:
                    held.append((done.get("output"), out))
                if sampled:
                    self.profiles.collect(side)  # outside the window: the host's clock has stopped
                times.append(ms)
                spans.append(span)
            # The candidate's outputs as it holds them now, after the block's later calls; the trusted
            # reference's as they were when made.
            kept = [self._read_output(side, reader, d, limit) if side == CANDIDATE else out for d, out in held]
        finally:
            runner.release()
        reply = sides.receive_step_reply(side, stage)
        wall = (time.perf_counter() - block_start) * 1e3
        spans.sort()
        if sampled:
            self.profiles.end(
                side, spans, runner.processes(), host_windows, census_at, self._interpreted_spans(side, reply)
            )
        return Block(side, times, windows, checksums, census_at, reply, wall, spans=spans, kept=kept,
                     samples=samples, outside_ms=outside)  # fmt: skip

    def _sampled(self, out, seed: int, i: int):
        """Call ``i``'s output at the places the host draws for that call of a block pair (the same on both
        sides), copied; None for an output that is not a tensor."""
        if not isinstance(out, torch.Tensor) or out.numel() == 0:
            return None
        flat = out.reshape(-1)
        generator = torch.Generator().manual_seed(hash((self.position_secret, seed, i)) & (2**62 - 1))
        return flat[torch.randint(0, flat.numel(), (SAMPLED_POSITIONS,), generator=generator)].clone()

    @staticmethod
    def _check_fresh(span: tuple[int, int], holding: collections.deque, i: int) -> None:
        """Call ``i``'s output (at ``span``) must not lie in the memory of an earlier call's that the
        runner still holds (so no allocator gave it out again): a ring of output buffers of the
        candidate's own, which spares the allocation the reference pays every call (red team round 11:
        1.55x for an honest 0.9x ReLU with a ring of four, longer than the outputs re-read at the end)."""
        start, end = span
        for j, (held_start, held_end) in holding:
            if start < held_end and held_start < end:
                raise Stop(
                    INCORRECT,
                    f"while timed, call {i + 1}'s output is the memory of call {j + 1}'s output, which is still "
                    "held: each call must return an output of its own",
                    stage="benchmark",
                )
        holding.append((i, span))

    def _read_output(self, side: str, reader: hosted_calls.OutputReader, description, limit: int):
        """A timed output, read by the host; the candidate's must have the reference's shape and dtype
        (the host sums it with weights of its size, which a stream of other sizes would multiply)."""
        if side == CANDIDATE and isinstance(description, dict) and description.get("ptr") is not None:
            want = [self.output_shape, str(self.expected_dtype).removeprefix("torch.")]
            got = [description.get("shape"), description.get("dtype")]
            if got != want:
                raise Stop(INCORRECT, f"a timed output of shape and dtype {repr(got)[:120]}, where the reference's are "
                           f"{want}", stage="benchmark")  # fmt: skip
        try:
            return reader.read(description, limit)
        except hosted_calls.OutputUnreadable as exc:
            if side != CANDIDATE:
                raise TaskError(f"the host could not read the reference's timed output: {exc}") from None
            raise Stop(INCORRECT, f"the candidate's runner described {exc}", stage="benchmark") from None

    def _exchange_in_runner(self, side: str, message: dict, calls: list, census_at: int, sampled: bool) -> Block:
        """The host's side of timing.time_calls: its word starts each call, the checksum ends it.
        ``sampled``: keep the host's samples of the side's threads (cpu_samples.Profiles)."""
        sides, stage = self.sides, "benchmark"
        times, windows, checksums, spans = [], [], [], []
        host_windows = []  # per call, [go, done] on the host's CLOCK_MONOTONIC: which call a sample was in
        if sampled:
            self.profiles.begin(side)
        block_start = time.perf_counter()
        sides.send_step(side, message, stage)
        for i, call in enumerate(calls):
            if sides.read_step(side, stage).get("ready") != i:
                raise Malformed(stage, f"a step out of order before call {i + 1}")
            start, start_ns = time.perf_counter(), time.monotonic_ns()
            sides.send_step(side, {"go": i, "call": call, "census": i == census_at}, stage)
            done = sides.read_step(side, stage)
            windows.append((time.perf_counter() - start) * 1e3)
            host_windows.append((start_ns, time.monotonic_ns()))
            ms, span = _call_report(done, i, stage)
            checksum = done.get("checksum")
            if not isinstance(checksum, list):
                raise Malformed(stage, f"a malformed report of call {i + 1}")
            if sampled:
                self.profiles.collect(side)  # outside the window: the host's clock has stopped
            times.append(ms)
            checksums.append(checksum)
            spans.append(span)
        reply = sides.receive_step_reply(side, stage)
        wall = (time.perf_counter() - block_start) * 1e3
        spans.sort()
        if sampled:
            self.profiles.end(
                side,
                spans,
                sides.runner(side).processes(),
                host_windows,
                census_at,
                self._interpreted_spans(side, reply),
            )
        return Block(side, times, windows, checksums, census_at, reply, wall, spans=spans)

    def _wait_quiet(self) -> None:
        quiet = self.sides.ask_ref({"op": "quiet", "timeout": 2.0})
        self.quiet_waits_ms.append(float(quiet.get("waited_ms", 0.0)))
        if not quiet.get("quiet"):
            raise Stop(
                REJECTED,
                "GPU work of the candidate's process was still running 2 s after it was stopped, when the "
                f"reference was to be timed (a GPU round trip took {quiet.get('round_trip_us')} us)",
                stage="benchmark",
            )

    def _interpreted_spans(self, side: str, reply: dict) -> list[tuple[int, int]]:
        """Where the candidate's runner says its interpreted Triton launches ran in this block
        ([start, end] ns, CLOCK_MONOTONIC), sorted; none on any other side, backend or device."""
        spans = reply.get("interpreted_spans") if side == CANDIDATE and self.triton_interpreted else None
        if not isinstance(spans, list):
            return []
        return sorted((s[0], s[1]) for s in spans[: census.MAX_INTERPRETED_SPANS]
                      if isinstance(s, list) and len(s) == 2 and all(type(t) is int for t in s) and s[0] <= s[1])  # fmt: skip

    def _check_candidate_reply(self, reply: dict) -> None:
        expect(reply, "benchmark", ops=dict, elements=dict, patched=list, interpreted_spans=list, settings_changed=list)
        problem = runner_evidence_problem(reply, self.own_code_checks)
        if problem:
            raise Stop(REJECTED, problem, stage="benchmark")
        if reply.get("threads_started", 0) != 0:
            raise Stop(REJECTED, "a thread was left running during timing", stage="benchmark")

    def _check_block(self, ref: Block, cand: Block) -> None:
        """Every output the candidate produced while timed, and the operators of the census call."""
        rel_norm = compare.Tolerance.for_output(self.expected_dtype, self.tolerance).rel_norm
        for i, (want, got) in enumerate(zip(ref.checksums, cand.checksums)):
            problem = compare.compare_checksums(want, got, rel_norm)
            if problem:
                raise Stop(INCORRECT, f"timed call {i + 1}: {problem} (outputs produced while timed must be correct too)",
                           stage="benchmark")  # fmt: skip
        for i, (want, got) in enumerate(zip(ref.samples, cand.samples)):
            if want is None or got is None or want.shape != got.shape:
                continue  # what the checksums and the kept outputs hold it to
            ok, reason, _ = compare.compare_outputs(want, got, self.tolerance)
            if not ok:
                raise Stop(INCORRECT, f"timed call {i + 1}, at {SAMPLED_POSITIONS} places the host drew after it: {reason} "
                           "(outputs produced while timed must be correct too)", stage="benchmark")  # fmt: skip
        if self.hosted:
            expected, actual = ref.kept, cand.kept
        else:
            expected = protocol.load_tensors(self.sides.ask_ref({"op": "kept"})["payload"])
            limit = outputs_limit([e for e in expected if isinstance(e, torch.Tensor)])
            actual = self.sides.candidate_tensors(
                self.sides.ask_cand({"op": "kept"}, "benchmark", limit), limit, "benchmark"
            )
        if len(actual) != len(expected):
            raise Malformed("benchmark", "the wrong number of timed outputs")
        for want, got in zip(expected, actual):
            ok, reason, _ = compare.compare_outputs(want, got, self.tolerance)
            if not ok:
                raise Stop(INCORRECT, f"an output produced while timed is wrong: {reason} (held as returned while "
                           "the block's later calls ran)", stage="benchmark")  # fmt: skip
        key = str(cand.census_at)
        reference = op_census.Record(ref.reply["ops"].get(key) or {}, ref.reply["elements"].get(key) or {})
        candidate = op_census.Record(cand.reply["ops"].get(key), cand.reply["elements"].get(key))
        if not candidate.well_formed():
            raise Malformed("benchmark", "no operator census of the call the host picked")
        self.reference_ops.update(reference.counts)
        shares = op_census.census_shares(candidate.counts, candidate.elements, reference.elements)
        for kind, share in shares.items():
            self.census_shares[kind] = max(self.census_shares.get(kind, 0.0), share)
        problem = op_census.judge(candidate, reference, self.reference_standard_ops)
        if problem:
            raise Stop(REJECTED, f"while timed: {problem}", stage="benchmark")

    # -- the figures --------------------------------------------------------------------------

    def _figures(self, timed: dict[str, list[Block]], n: int) -> dict:
        """Each side's median per call: the trusted references' as they report it, the candidate's as the
        host's clock saw it.

        The candidate's process reports each call's time, but nothing in that process decides: each
        of its calls counts what the host's window around it leaves once the trusted runners' typical
        overhead is taken off (on the CPU only what the host and the kernel add around a runner's loop,
        _overheads: the loop's own steps count with the call, so that one made leaner in the
        candidate's process saves nothing the figure leaves out), and no call counts shorter
        than the host's clock resolves for a block's typical call, or than the call's own report (a
        longer report only costs the candidate). Its reports are only checked: one
        above the host's window (no call outlasts the window around it) is rejected, and one far below
        it (a patched clock, hidden work) too on CUDA; on the CPU the latter is only told (see
        _check_host_clock). (Red team round 11: a block's median report against the
        median window let a report split into halves of 1000 ms and 0.01 ms, the census call among
        the long ones, count the short ones: 42x for an honest 0.9x kernel.)
        """
        trusted = [b for side in (EAGER, COMPILED) for b in timed.get(side, [])]
        overheads = sorted(o for b in trusted for o in _overheads(b))
        overhead = statistics.median(overheads)
        p90 = overheads[int(0.9 * (len(overheads) - 1))]
        allowance = 2 * (p90 - overhead) + (0.005 if self.on_cuda else 0.02)
        # What the host's clock resolves for a block's typical call: the eager reference's overhead per
        # call varies (robust sigma: IQR / 1.349), and a block's median of n calls pins it down to about
        # 1.25 sigma / sqrt(n); twice that. Below it only the candidate's process would say how long a
        # call took (a slowed clock, with forge's staging and checksum made cheaper in that process to
        # hide the call in the overhead the host takes off), so no call counts shorter.
        eager = [o for b in timed[EAGER] for o in _overheads(b)]
        sigma = iqr(eager) / 1.349 if len(eager) >= 4 else 0.0
        resolution = 2 * 1.2533 * sigma / math.sqrt(max(n, 1)) + (0.005 if self.on_cuda else 0.02)
        calls: dict[str, list[float]] = {side: [] for side in timed}
        per_block: dict[str, list[float]] = {side: [] for side in timed}
        unexplained = []  # per candidate block: the typical call's time that the report does not explain
        for side, blocks in timed.items():
            for block in blocks:
                values = block.times_ms
                if side == CANDIDATE:
                    # What the host's clock leaves for each call once the reference's typical overhead is
                    # taken off: what each call counts, whatever it reported.
                    seen = [w - overhead for w in block.windows_ms]
                    unexplained.append(statistics.median(seen) - statistics.median(values))
                    self._check_reports_within_windows(block)
                    # Never shorter than the call's own report either: where the reference's typical
                    # overhead overstates this call's (a loaded machine), the host's clock alone would
                    # credit the candidate with less time than its own process says the call took.
                    values = [max(w, t, resolution) for w, t in zip(seen, block.times_ms)]
                kept = block.untouched(values)
                calls[side] += kept
                per_block[side].append(statistics.median(kept))
        reported = [t for b in timed[CANDIDATE] for t in b.times_ms]
        if statistics.median(reported) <= 1e-6:
            raise Stop(
                REJECTED,
                f"the reported times are not physical (median {statistics.median(reported):g} ms per call)",
                stage="benchmark",
            )
        far_off = self._check_host_clock(unexplained, allowance, statistics.median(reported))
        cores = self._check_threads(timed[CANDIDATE], timed[EAGER])
        ratios = [e / c for e, c in zip(per_block[EAGER], per_block[CANDIDATE]) if c > 0]
        return {
            "ms": {side: statistics.median(c) for side, c in calls.items()},
            "iqr_ms": {side: iqr(c) for side, c in calls.items()},
            "calls_per_block": n,
            "host_clock": {
                "overhead_ms": overhead,
                "allowance_ms": allowance,
                "resolution_ms": resolution,
                "candidate_unexplained_ms": statistics.median(unexplained),
                "report_far_off": far_off,
            },  # fmt: skip
            "candidate_reported_ms": statistics.median(reported),
            "repeatability": {
                "speedup_min": min(ratios, default=None),
                "speedup_max": max(ratios, default=None),
                "speedup_cv": statistics.pstdev(ratios) / statistics.fmean(ratios) if ratios else None,
                "blocks": len(ratios),
            },
            "quiet_wait_ms": max(self.quiet_waits_ms, default=0.0),
            "cores": cores,
            "compile_reason": self.compile_reason,
        }

    def _check_host_clock(self, unexplained: list[float], allowance: float, reported: float) -> bool:
        """Whether, in a typical block, the host saw the typical call take far longer than reported:
        beyond what the reference's overhead varies by and half the reported time. On CUDA that rejects.
        On the CPU it is only told: the figure is the host's window whatever the report, so a patched
        clock gains nothing there, and a loaded machine makes an honest report look as far off (its
        runner waited for a core between the host resuming it and its call: an honest interpreted
        Triton kernel reported 2.4 ms of 4.8 ms beside another evaluation, 2026-11-29)."""
        typical = statistics.median(unexplained)
        if typical <= max(3 * allowance, 0.5 * reported):
            return False
        if self.on_cuda:
            raise Stop(
                REJECTED,
                f"the reported times do not add up: the host's clock saw the typical call take {typical:.3f} ms "
                f"more than the candidate's {reported:.3f} ms explain, beyond the {allowance:.3f} ms the "
                "reference's calls vary by (patched clock or hidden work)",
                stage="benchmark",
            )
        return True

    def _check_reports_within_windows(self, block: Block) -> None:
        """Reject a block in which the candidate reported a call longer than the host's window around it,
        which no honest runner can (its clock is the host's CLOCK_MONOTONIC, read inside the window)."""
        for i, (t, w) in enumerate(zip(block.times_ms, block.windows_ms)):
            if t > w + REPORT_SLACK_MS:
                raise Stop(
                    REJECTED,
                    f"the reported times do not add up: call {i + 1} of a block was reported to take {t:.3f} ms, "
                    f"longer than the host's clock saw around it ({w:.3f} ms): no call outlasts the window it "
                    "runs in (a forged report)",
                    stage="benchmark",
                )

    def _check_threads(self, blocks: list[Block], reference_blocks: list[Block]) -> dict:
        """On the CPU the candidate gets the reference's thread count; its CPU time, read from outside, shows it.
        Returns the cores each side kept busy in its typical block (empty on CUDA)."""
        if self.on_cuda or not self.threads:
            return {}
        typical, reference = _typical_cores(blocks), _typical_cores(reference_blocks)
        cores = {side: round(value, 3) if value is not None else None
                 for side, value in (("candidate", typical), ("reference", reference))}  # fmt: skip
        if typical is not None and typical > self.threads + CORES_SLACK:
            raise Stop(
                REJECTED,
                f"the candidate's processes used {typical:.1f} CPU cores while timed, but both sides get "
                f"{self.threads} thread(s): it was not measured on equal terms",
                stage="benchmark",
            )
        beside = _beside_the_busiest(blocks)
        cores["candidate_beside_busiest"] = round(beside, 4) if beside is not None else None
        if self.threads == 1 and beside is not None and beside > BESIDE_THE_ONE_THREAD:
            raise Stop(
                REJECTED,
                f"the candidate's processes spent {100 * beside:.1f}% as much CPU time beside their busiest thread "
                "as on it while timed, but both sides get 1 thread: work on a thread of its own was not measured "
                "on equal terms",
                stage="benchmark",
            )
        return cores


def _beside_the_busiest(blocks: list[Block]) -> float | None:
    """The CPU time the runner spent beside its busiest thread over that thread's, in all the blocks together.
    The cores kept busy at once (_typical_cores) fall toward one when the machine is loaded: a thread that
    waits for its helper, spinning, is busy the while, and a helper that waits for a core adds nothing at
    once. Its share of the work does not fall: on one thread, nothing runs beside it but a few runtime ticks."""
    timed = [b for b in blocks if b.wall_ms > 0]
    busiest = sum(b.busiest_thread_s for b in timed)
    if busiest <= 0:
        return None
    return sum(max(0.0, b.cpu_s - b.busiest_thread_s) for b in timed) / busiest


def _typical_cores(blocks: list[Block]) -> float | None:
    """Cores kept busy at once in the median block: all the runner's CPU time over its busiest thread's.
    Unlike CPU time over wall time, this does not shrink when other work on the machine takes a share of
    the cores. The total keeps the time of threads that exited (started and joined inside each call):
    counted against the busiest thread still alive, as if they had run beside it."""
    rates = sorted(b.cpu_s / max(b.busiest_thread_s, 0.1 * b.wall_ms / 1e3) for b in blocks if b.wall_ms > 0)
    return rates[len(rates) // 2] if rates else None


def compiled_reason(graphs) -> str:
    return (
        f"torch.compile compiled {graphs} graph(s) in the candidate's process: the work must be the candidate's "
        "own kernels, not PyTorch's compiler"
    )


def runner_evidence_problem(reply: dict, own_code_checks: bool = True) -> str:
    """What the candidate's runner saw in its own process (candidate_runner._evidence) that rejects it:
    replaced timing primitives, forge's own code or the installed libraries' rebound, graphs torch.compile
    compiled, files changed (file_writes), the process-wide settings changed (process_settings); ''.
    ``own_code_checks``: EvalOptions' (the checks of code by identity, off only in tests that show the
    host's own defenses)."""
    if reply.get("patched"):
        return f"timing primitives were replaced: {', '.join(map(str, reply['patched']))}"
    if own_code_checks and reply.get("own_code_rebound"):
        return (
            f"forge's own code in the candidate's process was rebound ({', '.join(map(str, reply['own_code_rebound']))}): "
            "the evaluator's runner is not for a kernel to change"
        )
    if own_code_checks and reply.get("library_rebound"):
        return (
            f"functions of the installed libraries, or their registries' entries, were rebound in the candidate's "
            f"process ({'; '.join(map(str, reply['library_rebound']))}): a kernel module must leave them as it found "
            "them, or every later call of the process that imports it goes through its code"
        )
    if reply.get("compiled_graphs"):
        return compiled_reason(reply["compiled_graphs"])
    files = reply.get("files_changed")
    if files:
        return (
            f"the candidate's code wrote, removed or changed files beyond its build caches and the temporary files "
            f"it made ({'; '.join(map(str, files))}): the process that imports it would do the same to the user's"
        )
    changed = reply.get("settings_changed")
    if changed:
        return (
            f"the process-wide settings changed in the candidate's process ({'; '.join(map(str, changed))}): "
            "a kernel module must leave them as it found them, or it changes the process that imports it (every "
            "computation, its speed, the files it makes, the programs it runs)"
        )
    return ""


def iqr(values: list) -> float | None:
    if len(values) < 4:
        return None
    q = statistics.quantiles(values, n=4)
    return q[2] - q[0]


def _call_report(done: dict, i: int, stage: str) -> tuple[float, list]:
    """Call ``i``'s reported time and span [start, end] (the runner's CLOCK_MONOTONIC), or Malformed."""
    ms, span = done.get("ms"), done.get("span")
    if done.get("done") != i or not _number(ms) or ms < 0:
        raise Malformed(stage, f"a malformed report of call {i + 1}")
    if not (isinstance(span, list) and len(span) == 2 and all(_number(t) for t in span)):
        raise Malformed(stage, f"a malformed span of call {i + 1}")
    return float(ms), span


def _overheads(block: Block) -> list[float]:
    """Per call of a trusted block, what the host's window holds besides the call: hosted (the CPU), only
    what the host and the kernel add around the runner's loop (Block.outside_ms), so that a candidate's
    own loop counts with its calls however lean it is; else the window less the reported call."""
    return block.outside_ms or [w - t for w, t in zip(block.windows_ms, block.times_ms)]


def _loop_ms(done: dict, i: int, stage: str) -> float:
    """How long a trusted runner's loop took from having call ``i``'s word to answering it (its "loop")."""
    loop = done.get("loop")
    if not (isinstance(loop, list) and len(loop) == 2 and all(_number(t) for t in loop) and loop[0] <= loop[1]):
        raise Malformed(stage, f"a malformed loop report of call {i + 1}")
    return (loop[1] - loop[0]) / 1e6


def _number(value) -> bool:
    """A finite number, as the runner's word: a bool is not one, nor is NaN (it compares false both ways)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _samples_in(profile: dict, library: str) -> int:
    """A side's samples (both phases) named for ``library`` (cpu_samples.UNREADABLE, UNMAPPED)."""
    return sum(n for phase in ("forward", "around") for (name, _), n in profile[phase].items() if name == library)
