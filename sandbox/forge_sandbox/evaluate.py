"""The evaluation pipeline: static check, compile, verify, benchmark, verdict.

Process model: this function is the host. It
never imports the candidate. A trusted *reference runner* builds the task's
``Model``, makes every input from seeds the host draws at random, and computes
the expected outputs; an untrusted *candidate runner* imports the candidate
(compiling it) and runs ``ModelNew`` on the same inputs (sides.py). The host
compares the outputs, judges which PyTorch operators the candidate used
(op_census.py), times both with its own clock as the last word (benchmark.py)
and decides. Expected outputs never exist in the candidate's process, and
nothing the candidate prints is read as a result.

A candidate's fault is a verdict; a bug of forge's own is an exception, never
a verdict (no catch-all turns one into ``rejected``).
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field

import torch

from forge_sandbox import (
    baselines,
    build_flags,
    compare,
    cpu_samples,
    evidence,
    hardware,
    host,
    isolation,
    native_code,
    op_census,
    protocol,
    static_check,
    variants,
)
from forge_sandbox.benchmark import CANDIDATE, COMPILED, EAGER, Benchmark, runner_evidence_problem
from forge_sandbox.sides import Malformed, RunnerOptions, Sides, expect, outputs_limit
from forge_sandbox.taskfile import TaskError, kernel_module_name, resolve_size
from forge_sandbox.verdict import COMPILE_ERROR, INCORRECT, PASSED, REJECTED, Stop, Verdict, draw_seed, shortened

# Each stage as it starts (`python -m forge_sandbox eval --verbose`): where a long evaluation is.
log = logging.getLogger("forge_sandbox")


@dataclass
class EvalOptions:
    device: str = "cuda"
    size: str = "auto"  # "default", "small" (the task's SMALL shapes) or "auto" (small on the CPU)
    timeout: float = 600.0  # seconds per stage: compile, each verification, each timed block
    trials: int = 5  # verification input sets per configuration, of the task's own inputs
    variants: bool = True  # also verify other layouts and value distributions (variants.py)
    pool: int = 3  # distinct input sets rotated (and rolled) during timing
    blocks: int | None = None  # interleaved timing blocks per side; default 5 on CUDA, 3 on the CPU
    block_budget_s: float | None = None  # time budget per block; default 0.2 s CUDA, 0.1 s CPU
    compile_baseline: bool = True  # time the reference under torch.compile too (cached per task and device)
    compile_mode: str = baselines.COMPILE_MODE
    threads: int | None = None  # torch's CPU threads on both sides; default 1 on the CPU, torch's own on CUDA
    static_checks: bool = True  # off only in tests that show the runtime defenses alone
    # forge's own code, or the installed libraries' functions, rebound in the candidate's process reject it
    # (own_code, process_settings.bindings): off only in tests that show the host's own defenses, which stand
    # behind every check made in that process
    own_code_checks: bool = True
    profile: bool = False  # Nsight Compute metrics of the candidate's own kernels (CUDA, once it passed)
    profile_dir: str | None = None  # where the .ncu-rep report is kept
    profile_timeout: float = 240.0  # seconds for the profiled run (ncu replays each kernel dozens of times)
    isolate: bool = True  # the candidate's runner in namespaces of its own (isolation.py), where available
    profile_isolated: bool = False  # run ncu's target in the candidate's namespaces too (unproven on GPUs)
    # Where CUDA does not start in the candidate's isolation, lift its pieces one at a time rather than
    # stop (evaluate._Pipeline._refuse_less_isolation): the operator's choice, never a default.
    less_isolation: bool = field(default_factory=lambda: os.environ.get("FORGE_LESS_ISOLATION") == "1")
    extra_env: dict = field(default_factory=dict)  # variables the candidate's process gets besides the kept ones
    memory_gb: float | None = None  # what the candidate's processes may keep resident; default half the machine's


# The verification outputs the candidate's runner keeps held, as returned, until its configuration's
# trials and later calls have run (HeldOutputs): a kernel that cycles through a ring of buffers of its own
# overwrites one of them. Memory on the candidate's device only; beyond it, the groups' own holding. On
# the CPU that device is the machine's memory, which the reference and the host share: there at most a
# sixteenth of it and a quarter of what the candidate may hold (_Pipeline.held_verify_bytes).
HELD_VERIFY_BYTES = 4 * 2**30
HELD_SAMPLES = 256  # positions read again per held output

_REUSED = (" (its output is the memory of another call's output: a caller that keeps one result while it "
           "computes the next finds the first overwritten)")  # fmt: skip


class HeldOutputs:
    """The host's side of the candidate's held outputs: which ones it holds (the runner's rule, on the
    same sizes: each in turn while the total stays within ``limit``) and, for each, where it was checked
    and its values at HELD_SAMPLES positions the host drew (the runner learns them only when asked)."""

    def __init__(self, limit: int) -> None:
        self.limit, self.bytes = limit, 0
        self.items: list[tuple[str, torch.Tensor, torch.Tensor]] = []
        self.generator = torch.Generator().manual_seed(draw_seed())

    def add(self, output: torch.Tensor, where: str) -> None:
        size = output.numel() * output.element_size()
        if self.bytes + size > self.limit:
            return
        self.bytes += size
        flat = output.reshape(-1)
        n = flat.numel()
        idx = torch.arange(n) if n <= HELD_SAMPLES else torch.randint(0, n, (HELD_SAMPLES,), generator=self.generator)
        self.items.append((where, idx, flat[idx].clone()))


# A kernel's source is kilobytes; the static check reads the candidate in the host's own process.
MAX_CANDIDATE_CHARS = 1 << 20

# The inputs and outputs of the verification trials made and checked at once (at least two trials):
# at a task's full size, all of a configuration's trials (34 with the variants) would need tens of GB
# on every side. The candidate holds a group's results until all of its trials have run (a kernel
# that writes every result into one buffer of its own shows it), so a larger group sees a longer ring
# of such buffers.
VERIFY_GROUP_BYTES = 2**30


def evaluate(
    task_path: str, candidate_path: str, options: EvalOptions | None = None, task_source: str | None = None
) -> Verdict:
    """Evaluate one candidate file against one task file; never raises for the candidate's faults.

    ``task_source`` is the task as the caller read it (a run reads it once);
    otherwise the file is read here, once, before any candidate code runs.
    Raises TaskError when the *task* is unusable (that is the user's input to
    fix, not a property of the candidate).
    """
    options = options or EvalOptions()
    options = dataclasses.replace(options, size=resolve_size(options.size, options.device, task_path))
    if options.threads is None:
        options = dataclasses.replace(options, threads=1 if options.device == "cpu" else 0)
    started = time.perf_counter()
    verdict = Verdict(status=PASSED, task=os.path.abspath(task_path), candidate=os.path.abspath(candidate_path))
    workdir = tempfile.mkdtemp(prefix="kev-")
    pipeline = _Pipeline(task_path, candidate_path, options, verdict, workdir, task_source)
    try:
        pipeline.run()
    except Stop as stop:
        _stop_verdict(verdict, stop)
    finally:
        pipeline.enter("close")
        pipeline.close()
        shutil.rmtree(workdir, ignore_errors=True)
        pipeline.enter(None)
        verdict.duration_s = round(time.perf_counter() - started, 3)
    return verdict


def _stop_verdict(verdict: Verdict, stop: Stop) -> None:
    verdict.status = stop.status
    verdict.reasons = stop.reasons + verdict.reasons
    verdict.stage = stop.stage
    verdict.speedup = verdict.speedup_vs_compile = None
    verdict.log_tail = stop.log_tail or verdict.log_tail
    verdict.compile_log = stop.compile_log or verdict.compile_log


# What FORGE_LESS_ISOLATION lets go, in this order, where CUDA does not start inside (_check_isolation).
_LESS_ISOLATION = ("local_sockets", "filter", "files", None)
_PIECE_NAMES = {
    "local_sockets": "the filter's refusal of connect and local datagram sockets",
    "filter": "the system call filter",
    "files": "the file restriction",
}


def _lifted_text(pieces: tuple[str, ...]) -> str:
    return " and ".join(_PIECE_NAMES[p] for p in pieces)


class _Pipeline:
    def __init__(self, task_path, candidate_path, options: EvalOptions, verdict: Verdict, workdir, task_source):
        self.task = os.path.abspath(task_path)
        self.task_source = task_source
        self.candidate = os.path.abspath(candidate_path)
        self.opt = options
        self.verdict = verdict
        self.workdir = workdir
        self.on_cuda = options.device.startswith("cuda")
        self.sides: Sides | None = None
        self.reference_ops: set[str] = set()  # every operator the reference dispatched in this evaluation
        self.reference_standard_ops: set[str] = set()  # ... on the standard trials' inputs (op_census.judge)
        self.kernel_names: list[str] = []
        self.tolerance: dict | None = None
        self.timed: evidence.TimedShape | None = None  # the base configuration, which is timed
        self.trusted_folders: list[str] | None = None  # where installed code lies (native_code), read once
        self.stage_name, self.stage_started = "start", time.perf_counter()

    def enter(self, stage: str | None) -> None:
        """Close the running stage's clock in the verdict's stage_seconds and start ``stage``'s."""
        now = time.perf_counter()
        seconds = self.verdict.stage_seconds
        seconds[self.stage_name] = round(seconds.get(self.stage_name, 0.0) + now - self.stage_started, 3)
        log.info("%s took %.1f s%s", self.stage_name, now - self.stage_started, f"; {stage}" if stage else "")
        self.stage_name, self.stage_started = stage, now

    def close(self) -> None:
        if self.sides is not None:
            self.sides.close()

    # -- stages -----------------------------------------------------------------------------

    def run(self) -> None:
        if self.task_source is None:
            try:
                with open(self.task) as f:
                    self.task_source = f.read()
            except OSError as exc:
                raise TaskError(f"{self.task}: cannot read the task file ({exc.strerror})") from None
        source = self._read_candidate()
        self._static(source)
        runner_options = RunnerOptions(self.opt.device, self.opt.timeout, self.opt.isolate, self.opt.threads or 0,
                                       dict(self.opt.extra_env), int((self.opt.memory_gb or 0) * 2**30))  # fmt: skip
        self.sides = sides = Sides(self.workdir, source, os.path.basename(self.candidate), runner_options)
        self.verdict.environment = sides.ask_ref({"op": "hello", "calibrate": self.on_cuda})["environment"]
        self.enter("isolation")
        self._check_isolation()
        self.verdict.environment.update(sides.limit_candidate())  # before any of the candidate's code
        if not self.on_cuda:
            why_not = sides.open_output_readers()  # before any of the candidate's code too
            if why_not:
                self.verdict.warnings.append(
                    f"the timed calls' inputs and outputs were handled in the runners' own processes: {why_not}"
                )
        if not self.on_cuda and not cpu_samples.available():
            sides.read_library_bases()  # the loader's own, before the candidate's code can add decoys
        # The candidate compiles while the reference prepares.
        self.enter("compile")
        sides.send_cand({"op": "load", "candidate": sides.candidate_copy,
                         "module": kernel_module_name(self.task)}, "compile")  # fmt: skip
        described = sides.ask_ref(
            {"op": "describe", "task": self.task, "task_source": self.task_source, "size": self.opt.size}
        )
        self.tolerance = described.get("tolerance")
        if self.opt.size == "small":
            # Red team round 16: a kernel with a fixed 2048-wide row buffer passed at the small shapes,
            # wrong at the task's own 16384 columns.
            self.verdict.warnings.append(
                "verified and timed at the task's SMALL shapes only: its own shapes were not run here, so a "
                "kernel right only at these sizes (a fixed-size buffer) is not caught; --size default runs them"
            )
        loaded = sides.receive_cand("compile")
        self.verdict.compile_log = evidence.ptxas_lines(sides.cand.log_tail(200_000))
        self.verdict.hardware["ptxas"] = hardware.ptxas_stats(self.verdict.compile_log)
        self._check_evidence(expect(loaded, "compile", patched=list), "compile")
        self._check_native_code("compile")
        self.enter("verify")
        configs = list(range(described["configs"]))
        # Extra shapes first, the base shape last: the runners then hold the base shape for timing.
        for config in configs[1:] + configs[:1]:
            if config == described.get("own_dtype_config"):
                self._verify_own_dtype(config)
            else:
                self._verify(config, with_variants=self.opt.variants)
        self._check_native_code("verify")
        self.enter("benchmark")
        self._benchmark()
        self._check_native_code("benchmark")
        self.enter("evidence")
        evidence.gather(sides, self.verdict, self.opt, self.timed, self.kernel_names)

    def _read_candidate(self) -> str:
        try:
            with open(self.candidate) as f:
                source = f.read(MAX_CANDIDATE_CHARS + 1)
        except OSError as exc:
            raise Stop(REJECTED, f"cannot read the candidate: {exc.strerror}", stage="static") from None
        except UnicodeDecodeError:
            raise Stop(REJECTED, "the candidate is not UTF-8 text", stage="static") from None
        if len(source) > MAX_CANDIDATE_CHARS:  # the static check reads it in the host's own process
            raise Stop(REJECTED, f"the candidate is longer than {MAX_CANDIDATE_CHARS >> 20} Mi characters",
                       stage="static")  # fmt: skip
        return source

    def _static(self, source: str) -> None:
        report = static_check.check_source(source)
        if report.syntax_error:
            raise Stop(COMPILE_ERROR, f"syntax error: {report.syntax_error}", stage="static")
        self.verdict.backends = report.backends
        self.kernel_names = report.kernel_names
        self.verdict.static_findings = report.findings
        if report.findings and self.opt.static_checks:
            raise Stop(REJECTED, *report.findings, stage="static")

    def _check_native_code(self, stage: str) -> None:
        """The static check's rules for native code, held to what the candidate's processes have built
        and loaded by now (native_code.py): its Python source may put that code together in ways no
        reading of it follows (decoded at run time, pasted by macros)."""
        if self.trusted_folders is None:
            self.trusted_folders = native_code.trusted_folders()
        caches = [self.sides.caches[name] for name in isolation.CACHE_VARIABLES if name in self.sides.caches]
        found = [f for f in native_code.findings(self.sides.cand.processes(), self.trusted_folders, caches)
                 if f not in self.verdict.static_findings]  # fmt: skip
        self.verdict.static_findings += found
        if found and self.opt.static_checks:
            raise Stop(REJECTED, *found, stage=stage)
        built = build_flags.refused_in_builds(self.sides.caches.get("TORCH_EXTENSIONS_DIR"))
        if built:
            # what ran in its sandbox would run with the user's rights once exported: static check or not
            raise Stop(REJECTED, f"its extension was built with flags that do more than compile: {'; '.join(built)}",
                       stage=stage)  # fmt: skip

    def _check_isolation(self) -> None:
        """Say how the candidate is isolated; if CUDA does not work inside its namespaces, go without."""
        sides, env = self.sides, self.verdict.environment
        if not sides.cand.isolated:
            why_not = sides.no_isolation or "turned off"
            env["isolation"] = f"none: {why_not}"
            env["files"] = "not restricted: not isolated"
            if why_not != "turned off":
                self.verdict.warnings.append(f"the candidate ran without namespace isolation: {why_not}")
            return
        probe = sides.hello_candidate()
        left_out: tuple[str, ...] = ()
        failures = []
        for lifted in _LESS_ISOLATION:
            if not self.on_cuda or probe.get("cuda") is True:
                break
            why = shortened(" ".join(str(probe.get("cuda")).split()), 300)
            failures.append(f"{'with ' + _lifted_text(left_out) + ' lifted' if left_out else 'fully isolated'}: {why}")
            self._refuse_less_isolation(lifted, why, failures)
            left_out += (lifted,)
            sides.restart_candidate(isolate=True, left_out=left_out)
            probe = sides.hello_candidate()
        env["files"] = str(probe.get("files"))
        if not env["files"].startswith("read-only"):
            self.verdict.warnings.append(f"the candidate's file system was not locked down: {env['files']}")
        env["isolation"] = "user, PID, mount, network, IPC and UTS namespaces" + (
            "" if "filter" in left_out else ", and a seccomp filter"
        )
        if failures:
            env["isolation_failures"] = failures
            self.verdict.warnings.append(
                f"the candidate ran with less isolation (FORGE_LESS_ISOLATION): CUDA did not start inside until "
                f"{_lifted_text(left_out)} went ({'; '.join(failures)})"
            )

    def _refuse_less_isolation(self, lifted: str | None, why: str, failures: list[str]) -> None:
        """Fail closed where CUDA does not start inside the candidate's isolation (forge's first GPU run,
        an H200: error 304 under the read-only /proc, now writable for its own processes on a GPU, and
        under the system call filter). Its pieces are lifted one at a time only where the operator
        allows it, only for the driver's "OS call failed" (any other error, a full GPU say, lifts
        nothing), and the file restriction never for a runner started by root (which could then write
        the kernel's settings and the system's files). The candidate's code has not run yet."""
        if not self.opt.less_isolation:
            raise TaskError(
                f"CUDA does not start inside the candidate's isolation on this machine ({why}); forge runs no "
                "candidate with less isolation unless told to: FORGE_LESS_ISOLATION=1 (or --less-isolation) "
                "lifts the pieces that stop it one at a time, --no-isolate runs it without namespaces"
            )
        if not any(mark in why for mark in ("304", "OS call failed", "OPERATING_SYSTEM")):
            raise TaskError(f"CUDA does not start inside the candidate's isolation on this machine ({why})")
        if lifted is None or (lifted == "files" and os.geteuid() == 0):
            raise TaskError(
                "CUDA does not start inside the candidate's isolation on this machine, with what may be lifted "
                f"lifted ({'; '.join(failures)}); --no-isolate runs it without namespaces"
            )

    def _check_evidence(self, reply: dict, stage: str) -> None:
        """What the candidate's runner saw in its own process (benchmark.runner_evidence_problem)."""
        problem = runner_evidence_problem(reply, self.opt.own_code_checks)
        if problem:
            raise Stop(REJECTED, problem, stage=stage)

    def _verify_own_dtype(self, config: int) -> None:
        """The small shapes at the task's own dtypes (taskfile.own_dtypes), with the other layouts and
        value distributions too (a kernel that keeps a strided fp16 input's strides only in its own
        dtype's path passed where they ran in float32 alone), unless the reference cannot run in them
        on this device: then the verdict says what went unverified."""
        try:
            self._verify(config, with_variants=self.opt.variants)
        except TaskError as exc:
            # Only a dtype the reference's operators lack on this device; any other failure (memory the
            # candidate holds, a broken task) is what it would be on any configuration.
            if not any(words in str(exc) for words in _DTYPE_UNSUPPORTED):
                raise
            self.verdict.warnings.append(
                f"not verified at the task's own dtype on {self.opt.device}: the reference cannot run there ({exc})"
            )

    def held_verify_bytes(self) -> int:
        """The bytes of verification outputs the candidate holds (HELD_VERIFY_BYTES)."""
        if self.on_cuda:
            return HELD_VERIFY_BYTES
        machine = host.machine_memory()
        bounds = [HELD_VERIFY_BYTES, self.sides.memory_limit() // 4] + ([machine // 16] if machine else [])
        return min(bounds)

    def _verify(self, config: int, with_variants: bool) -> None:
        """One configuration's trials (variants.trial_plan), a group at a time (VERIFY_GROUP_BYTES)."""
        sides = self.sides
        log.info("verify: configuration %d%s", config, " with variants" if with_variants else "")
        # the first: the task's own inputs; the base shape's layouts and distributions under autograd too
        plan = variants.trial_plan(max(1, self.opt.trials), with_variants, under_autograd=config == 0)
        started = time.perf_counter()
        init_seed = draw_seed()
        hold_bytes = self.held_verify_bytes()
        setup = sides.ask_ref(
            {
                "op": "setup",
                "task": self.task,
                "task_source": self.task_source,
                "size": self.opt.size,
                "config": config,
                "init_seed": init_seed,
                "variants": plan,
                "trial_seeds": [draw_seed() for _ in plan],
                "pool_seeds": [draw_seed() for _ in range(self.opt.pool)],
            }
        )
        sides.ask_cand(
            {"op": "setup", "init_seed": init_seed, "hold_bytes": hold_bytes,
             **{k: setup[k] for k in ("init_inputs", "pool_inputs")}},
            stage="verify",
        )  # fmt: skip
        record = {"config": config, "overrides": setup.get("overrides", {}), "trials": 0, "variants": [],
                  "variants_dropped": {}}  # fmt: skip
        held = HeldOutputs(hold_bytes)
        # A group's operators are judged against the reference's on the same inputs and on the standard
        # trials so far; one that it runs only on a later group's standard trial is judged again at the end.
        unsure: list[tuple] = []
        try:
            first = self._verify_groups(config, plan, record, held, unsure)
        except TaskError:  # a dtype the reference lacks (_verify_own_dtype): what was seen is judged still
            for ops in unsure:
                self._check_ops(*ops)
            raise
        for ops in unsure:
            self._check_ops(*ops)
        record["held_across_calls"] = self._recheck_held(held, deep=config == 0)
        record["seconds"] = round(time.perf_counter() - started, 3)
        if config == 0 and "carries_gradient" in record:
            self.verdict.warnings.append(
                "its output carries a gradient, which forge does not check: it verifies forward passes only"
                if record["carries_gradient"]
                else "forward only: its output carries no gradient where autograd is enabled and the inputs require "
                "grad (training would stop there); forge verifies forward passes, never gradients"
            )
        if config == 0 and first is not None:
            output, split = first
            self._verify_reloaded(record)
            self._verify_beside_another(record)
            self.timed = evidence.TimedShape(setup=setup, init_seed=init_seed, output_dtype=output.dtype,
                                             output_bytes=output.numel() * output.element_size(),
                                             overrides=record["overrides"],
                                             output_shape=tuple(output.shape))  # fmt: skip
            if not self.on_cuda and isinstance(split, dict):
                self.verdict.own_share = evidence.own_share_from_split(split)

    def _verify_groups(self, config: int, plan: list[str], record: dict, held: HeldOutputs, unsure: list) -> tuple:
        """The configuration's trials, a group at a time: each checked and compared, its output's values
        kept in ``held``; operators that may yet be allowed by a later group's in ``unsure``. Returns the
        first output and the candidate's split (the timed shape's)."""
        sides = self.sides
        start, checked, first = 0, 0, None
        while start < len(plan):
            forward = sides.ask_ref({"op": "forward", "start": start, "group_bytes": VERIFY_GROUP_BYTES})
            expected, spreads = protocol.load_tensors(forward["payload"])
            if not isinstance(expected, list) or not all(type(e) is torch.Tensor for e in expected):
                raise TaskError(f"{self.task}: Model.forward must return a single torch.Tensor")
            kept, next_start = forward["kept"], forward["next"]
            ref_ops, ref_elements = forward["ops"], forward["elements"]
            # the reference is trusted; these hold unless forge itself is wrong
            assert isinstance(next_start, int) and start < next_start <= len(plan), (start, next_start)
            assert all(start <= i < next_start for i in kept) and len(kept) == len(expected), kept
            if first is None:
                self.verdict.correctness.append(record)
            record["variants_dropped"].update({plan[int(i)]: why for i, why in forward["dropped"].items()})
            for i, counts in ref_ops.items():
                self.reference_ops.update(counts)
                if plan[int(i)] == variants.STANDARD:
                    self.reference_standard_ops.update(n for n, c in counts.items() if c > 0)
            # Each trial is called twice (candidate_runner.cmd_forward): as a user calls it, then under
            # the operator census, a dispatch mode that a kernel can see (one right only under it passed,
            # 2026-11-27). Both outputs are compared; the census's operators are judged.
            # An ENVELOPED trial's plain calls are many (at several thread counts, or made while another
            # thread calls the model, on each of its partners' inputs in turn); the least and greatest of
            # each element over them, per partner, follow the censused outputs (cmd_forward).
            group = [plan[i] for i in kept]
            enveloped = {j: variants.alongside_partners(group, j) if plan[i] == variants.ALONGSIDE else [j]
                         for j, i in enumerate(kept) if plan[i] in variants.ENVELOPED}  # fmt: skip
            partners = [p for j in enveloped for p in enveloped[j]]
            limit = outputs_limit(expected + expected + [expected[p] for p in partners for _ in range(2)])
            message = {"op": "forward", "verify_inputs": forward["verify_inputs"],
                       "kept": [i - start for i in kept], "variants": [plan[i] for i in kept],
                       "staged": [variants.in_staged_memory(plan, i) for i in kept],
                       "split": config == 0 and start == 0}  # fmt: skip
            reply, actual = self._ask_verify(message, limit, trials=list, censused_trials=list)
            trials, censused_trials = reply["trials"], reply["censused_trials"]
            n = len(expected)
            if len(actual) != 2 * n + 2 * len(partners) or len(trials) != n or len(censused_trials) != n:
                raise Malformed("verify", "the wrong number of outputs")
            pairs = iter(zip(actual[2 * n :: 2], actual[2 * n + 1 :: 2]))
            bounds = {j: [(p, *next(pairs)) for p in enveloped[j]] for j in enveloped}
            calls = zip(kept, expected, spreads, actual[:n], trials, actual[n:], censused_trials)
            for j, (i, want, spread, got, trial, censused_output, censused_trial) in enumerate(calls):
                checked += 1
                where = f"configuration {config} ({_describe_overrides(record['overrides'])}), trial {checked}"
                if plan[i] != variants.STANDARD:
                    where += f" ({variants.describe(plan[i])})"
                advisory = variants.inputs_of(plan[i]) in variants.ADVISORY
                self._check_trial(trial, where)
                self._compare_trial(want, got, spread, trial, where, record, advisory=advisory)
                for p, low, high in bounds.get(j, []):
                    on = (
                        ""
                        if p == j
                        else f", on the inputs of trial {checked - j + p} ({variants.describe(plan[kept[p]])})"
                    )
                    self._compare_envelope(expected[p], (low, high), spreads[p], trial, where + on, record, plan[i])
                if variants.grad_enabled(plan[i]) and type(got) is torch.Tensor and got.is_floating_point():
                    record["carries_gradient"] = (
                        record.get("carries_gradient", True) and trial.get("requires_grad") is True
                    )
                where_censused = f"{where}, called again under the operator census"
                self._check_trial(censused_trial, where_censused)
                self._compare_trial(want, censused_output, spread, censused_trial, where_censused, record,
                                    advisory=advisory)  # fmt: skip
                reference = op_census.Record(ref_ops.get(str(i), {}), ref_elements.get(str(i), {}))
                ops = (reply["ops"].get(str(j)), reply["elements"].get(str(j)), reference, where)
                if next_start < len(plan):
                    if self._judge_ops(*ops):
                        unsure.append(ops)
                else:
                    self._check_ops(*ops)
                held.add(got, where)
            record["trials"] = checked
            record["variants"] = sorted(set(record["variants"]) | {plan[i] for i in kept} - {variants.STANDARD})
            if first is None:
                first = (expected[0], reply.get("split"))
            start = next_start
        return first

    def _compare_trial(self, want, got, spread, trial: dict, where: str, record: dict,
                       tolerance: dict | None = None, advisory: bool = False) -> None:  # fmt: skip
        """Rejects an output that differs from the reference's; on an ``advisory`` trial's inputs
        (variants.ADVISORY) the evaluation's first such difference is a warning instead, and none is recorded
        among the errors."""
        ok, reason, stats = compare.compare_outputs(want, got, tolerance or self.tolerance, spread)
        if advisory:
            if not ok and not any(r.get("advisory_mismatch") for r in self.verdict.correctness):
                self.verdict.warnings.append(
                    f"{where}: {reason}. A kernel that does not carry NaN through as PyTorch does hides a diverging "
                    "model's NaN; forge does not reject it for that (its finite inputs are verified on their own)"
                )
            record["advisory_mismatch"] = record.get("advisory_mismatch", False) or not ok
            return
        for key, value in stats.items():
            record[key] = max(record.get(key, 0), value)
        if not ok:
            if trial.get("reused_storage") is True:
                reason += _REUSED
            raise Stop(INCORRECT, f"{where}: {reason}", stage="verify")

    def _compare_envelope(self, want, bounds: tuple, spread, trial: dict, where: str, record: dict,
                          variant: str) -> None:  # fmt: skip
        """An ENVELOPED trial's calls, all of them: the least and the greatest value of each element over
        them (variants.Envelope) within the tolerance of the reference's, as its first output is."""
        said, counts, tolerance = trial.get("alongside"), trial.get("thread_counts"), None
        if (
            variant == variants.ALONGSIDE
            and isinstance(said, dict)
            and all(type(said.get(k)) is int for k in ("calls", "companion_calls"))
        ):
            calls = said["calls"]
            record["alongside_calls"] = max(record.get("alongside_calls", 0), calls)
            over = f"its {calls} calls (the other thread finished {said['companion_calls']} meanwhile)"
        elif (
            variant == variants.OTHER_THREADS
            and isinstance(counts, list)
            and counts
            and all(type(k) is int for k in counts)
        ):
            calls = len(counts)
            over = f"its calls at {', '.join(map(str, counts))} threads"
            # Each count may sum in another order: each element's extreme over k honest outputs, each within
            # the relative error norm, is within sqrt(k) times it (element-wise, every output is held to
            # the tolerance itself; the first output, to all of it).
            if want.is_floating_point():
                norm = compare.Tolerance.for_output(want.dtype, self.tolerance).rel_norm * math.sqrt(calls)
                tolerance = {**(self.tolerance or {}), "rel_norm": norm}
        else:
            raise Malformed("verify", "a malformed report of a trial's repeated calls")
        low, high = bounds
        if type(low) is not torch.Tensor or type(high) is not torch.Tensor:
            reason = f"its {calls} calls returned outputs of different types, shapes or dtypes"
            raise Stop(INCORRECT, f"{where}: {reason}", stage="verify")
        for bound, name in ((low, "least"), (high, "greatest")):
            self._compare_trial(want, bound, spread, trial, f"{where}: the {name} value of each element over {over}",
                                record, tolerance)  # fmt: skip

    # How new weights reach ModelNew in each step (weights.py): the record's key and what the verdict says.
    WEIGHT_STEPS = (
        ("load", "reloaded", "after new weights were loaded into both models (load_state_dict, as a checkpoint is)",
         "once a checkpoint is loaded"),
        ("in_place", "changed_in_place",
         "after the weights were changed in place in both models (as a training step does, past load_state_dict)",
         "once its parameters change"),
        ("assign", "assigned",
         "after new weights were loaded into both models as new tensors (load_state_dict(assign=True), as "
         "meta-device and memory-mapped loading do), ModelNew's stored in other layouts (4-D and 5-D ones "
         "channels-last, others transposed, weights.stored_otherwise)",
         "once its parameters are replaced by new tensors"),
    )  # fmt: skip

    def _verify_reloaded(self, record: dict) -> None:
        """The configuration's first trial (the task's own inputs) again after each step that gives both
        models other weights (WEIGHT_STEPS, weights.py). Both keep the last weights for timing."""
        sides = self.sides
        for how, key, said, when in self.WEIGHT_STEPS:
            reloaded = sides.ask_ref({"op": "reload", "seed": draw_seed(), "checkpoint": how != "in_place"})
            moves = reloaded["moves"]
            if not moves:
                record[key] = reloaded.get("skipped") or "nothing to move"
                if reloaded.get("moved_badly"):
                    self.verdict.warnings.append(f"not checked again {said}: {record[key]}")
                return
            want, spread = protocol.load_tensors(reloaded["payload"])
            limit = outputs_limit([want])
            message = {"op": "reload", "how": how, "moves": moves, "checkpoint": reloaded.get("checkpoint")}
            reply, actual = self._ask_verify(message, 2 * limit, trial=dict, censused_trial=dict, unmatched=list,
                                             by_order=list)  # fmt: skip
            if len(actual) != 2:
                raise Malformed("verify", "the wrong number of outputs")
            where = f"configuration 0 ({_describe_overrides(record['overrides'])}), trial 1 again, {said}"
            self._check_trial(reply["trial"], where)
            self._check_trial(reply["censused_trial"], f"{where}, under the operator census")
            reference = op_census.Record(reloaded["ops"], reloaded["elements"])
            self._check_ops(reply["ops"], reply["elements"], reference, where)
            # the plain call first, as a user makes it; then the one under the census
            ok, reason, _ = compare.compare_outputs(want, actual[0], self.tolerance, spread)
            if ok:
                ok, reason, _ = compare.compare_outputs(want, actual[1], self.tolerance, spread)
                where += "" if ok else ", under the operator census"
            if not ok:
                ours = [name for move in moves for name in move["names"]]
                unmatched = [name for name in ours if name in reply["unmatched"]]  # the reference's names only
                ours = set(ours)
                by_order = [pair for pair in reply["by_order"] if isinstance(pair, list) and len(pair) == 2
                            and pair[0] in ours][:8]  # fmt: skip
                if unmatched:
                    reason += (f" (ModelNew holds no parameter or buffer with the value of {', '.join(unmatched)} "
                               "before this step, as is, reshaped or transposed: new weights do not reach its "
                               "kernels)")  # fmt: skip
                elif by_order:
                    pairs = ", ".join(f"{ref} -> {str(key)[:80]!r}" for ref, key in by_order)
                    reason += (f" (parameters that started equal were found in ModelNew by value, in order: {pairs}; "
                               "a ModelNew that keeps the reference's parameter names is matched by name)")  # fmt: skip
                else:
                    reason += (" (a kernel that computes with a copy of its weights made when the module was built "
                               f"or loaded, or with a view of their memory then, keeps computing with it {when}"
                               + ("; and one that reads a weight's memory as row-major, whatever its strides, "
                                  "computes with other values" if how == "assign" else "") + ")")  # fmt: skip
                raise Stop(INCORRECT, f"{where}: {reason}", stage="verify")
            record[key] = True

    def _verify_beside_another(self, record: dict) -> None:
        """The configuration's first trial on a second model of the same kind, built beside the first
        under another seed and given weights of its own (a checkpoint's, weights.py), then on the first
        model again: a network holds many modules of one kind, each with its own weights. forge built one
        model at a time, so a kernel that computed with the weights of another instance (a registry of the
        modules built, keyed by their sizes; a cache of packed weights shared by every instance of a
        shape) passed (a review, 2026-12-01: each layer of width 64 used the last one's bias)."""
        sides = self.sides
        init_seed = draw_seed()
        second = sides.ask_ref({"op": "another", "init_seed": init_seed, "seed": draw_seed()})
        (want_second, want_first), spreads = protocol.load_tensors(second["payload"])
        limit = outputs_limit([want_second, want_second, want_first, want_first])
        message = {"op": "another", "init_seed": init_seed, "moves": second["moves"],
                   "checkpoint": second.get("checkpoint")}  # fmt: skip
        reply, actual = self._ask_verify(message, limit, trials=list, censused_trials=list, unmatched=list,
                                         by_order=list)  # fmt: skip
        if len(actual) != 4 or len(reply["trials"]) != 2 or len(reply["censused_trials"]) != 2:
            raise Malformed("verify", "the wrong number of outputs")
        base = f"configuration 0 ({_describe_overrides(record['overrides'])}), trial 1 again"
        weights_said = "with weights of its own, loaded as a checkpoint" if second["moves"] else \
            f"with the weights it was built with ({second['skipped']})"  # fmt: skip
        places = (f"{base}, on a second ModelNew built beside the first ({weights_said})",
                  f"{base}, on the first ModelNew, once a second was built beside it")  # fmt: skip
        wants = (want_second, want_first)
        for k, where in enumerate(places):
            calls = ((reply["trials"][k], actual[2 * k], ""),
                     (reply["censused_trials"][k], actual[2 * k + 1], ", under the operator census"))  # fmt: skip
            for trial, got, said in calls:
                self._check_trial(trial, where + said)
                ok, reason, _ = compare.compare_outputs(wants[k], got, self.tolerance, spreads[k])
                if ok:
                    continue
                unmatched = [name for move in second["moves"] for name in move["names"]
                             if name in reply["unmatched"]]  # fmt: skip
                if k == 0 and unmatched:
                    reason += (f" (ModelNew holds no parameter or buffer with the value of {', '.join(unmatched)} "
                               "as it was built, as is, reshaped or transposed: a checkpoint's weights do not reach "
                               "its kernels)")  # fmt: skip
                else:
                    reason += (" (a kernel that keeps state shared by every instance of the module, such as a "
                               "registry of the modules built or a cache of weights keyed by their sizes, computes "
                               "one module's output with another's weights)")  # fmt: skip
                raise Stop(INCORRECT, f"{where + said}: {reason}", stage="verify")
            reference = op_census.Record(second["ops"][str(k)], second["elements"][str(k)])
            self._check_ops(reply["ops"].get(str(k)), reply["elements"].get(str(k)), reference, where)
        record["beside_another"] = True

    def _recheck_held(self, held: HeldOutputs, deep: bool) -> int:
        """The configuration's held outputs read again once all its trials and more calls have run
        (candidate_runner.cmd_later, cmd_recheck): each must still hold what it held when it was checked.
        The positions go to the candidate's process only after the later calls; ``deep`` (the base shape):
        as many of them as candidate_runner.RING_RESULTS asks, not HELD_RESULTS. Returns the calls made
        since the first output held (its trials' and the later ones)."""
        if not held.items:
            return 0
        later = expect(self.sides.ask_cand({"op": "later", "deep": deep}, "verify"), "verify", held=int, reused=list,
                       patched=list, calls=int)  # fmt: skip
        self._check_evidence(later, "verify")
        if later["held"] != len(held.items) or len(later["reused"]) != len(held.items):
            raise Malformed("verify", f"{later['held']} outputs held where the host counted {len(held.items)}")
        limit = sum(idx.numel() for _, idx, _ in held.items) * 16 + 2**20  # the values, and the archive's own
        message = {"op": "recheck", "positions": [idx.tolist() for _, idx, _ in held.items]}
        reply = expect(self.sides.ask_cand(message, "verify", limit), "verify", patched=list)
        self._check_evidence(reply, "verify")
        values = self.sides.candidate_tensors(reply, limit, "verify")
        if len(values) != len(held.items):
            raise Malformed("verify", "the wrong number of held outputs")
        for (where, _, before), now, reused in zip(held.items, values, later["reused"]):
            if type(now) is not torch.Tensor or not compare.bitwise_equal(before, now):
                reason = f"{where}: its output changed after it was returned, while later calls were made"
                raise Stop(INCORRECT, reason + (_REUSED if reused is True else ""), stage="verify")
        return len(held.items) + later["calls"]

    def _ask_verify(self, message: dict, limit: int, **fields) -> tuple[dict, list]:
        """One verification command to the candidate's runner: its checked reply and output tensors."""
        reply = expect(self.sides.ask_cand(message, "verify", limit), "verify", ops=dict, elements=dict,
                       patched=list, **fields)  # fmt: skip
        self._check_evidence(reply, "verify")
        return reply, self.sides.candidate_tensors(reply, limit, "verify")

    def _check_trial(self, trial, where: str) -> None:
        if not isinstance(trial, dict):
            raise Malformed("verify", "a malformed trial report")
        if trial.get("launches") == 0:
            raise Stop(
                REJECTED,
                f"{where}: no custom kernel was launched during forward: the work was done by PyTorch",
                stage="verify",
            )
        if trial.get("threads_started", 0) != 0:
            raise Stop(REJECTED, "forward left a thread running: work outside the call is not allowed", stage="verify")
        if trial.get("reseeded"):
            which = trial["reseeded"] if isinstance(trial["reseeded"], list) else []
            named = f" ({', '.join(map(str, which))})" if which else ""
            raise Stop(
                REJECTED,
                f"{where}: forward seeded the process's global random number generator{named}: every dropout mask "
                "and random draw of a process that imports it would repeat from call to call",
                stage="verify",
            )
        if trial.get("inputs_changed"):
            raise Stop(
                REJECTED,
                f"{where}: forward modified its input(s) {trial['inputs_changed']}: inputs must stay unchanged",
                stage="verify",
            )
        if trial.get("exact_tensor") is False:
            raise Stop(INCORRECT, f"output is a {trial.get('output_type')}, not a plain torch.Tensor", stage="verify")
        if trial.get("storage_ok") is False:
            raise Stop(INCORRECT, "output's storage is smaller than its shape requires", stage="verify")

    def _judge_ops(self, counts, elements, reference: op_census.Record, where: str) -> str:
        """'' when the PyTorch operators of one verification call are allowed against the reference's
        (op_census), else why not; the verdict's ``torch_ops`` count them either way."""
        record = op_census.Record(counts, elements)
        if not record.well_formed():
            raise Malformed("verify", "no operator census")
        for name, count in op_census.work(counts).items():
            self.verdict.torch_ops[name] = max(self.verdict.torch_ops.get(name, 0), count)
        return op_census.judge(record, reference, self.reference_standard_ops)

    def _check_ops(self, counts, elements, reference: op_census.Record, where: str) -> None:
        """The PyTorch operators of one verification call against the reference's (op_census)."""
        problem = self._judge_ops(counts, elements, reference, where)
        if problem:
            raise Stop(REJECTED, f"{where}: {problem}", stage="verify")

    def _benchmark(self) -> None:
        env, timed = self.verdict.environment, self.timed
        compile_key = cached = None
        if self.opt.compile_baseline:
            compile_key = baselines.key(self.task_source, timed.overrides, self.opt.size, env, self.opt.compile_mode)
            cached = baselines.load(compile_key)
        bench = Benchmark(
            self.sides,
            on_cuda=self.on_cuda,
            blocks=self.opt.blocks or (5 if self.on_cuda else 3),
            budget_s=self.opt.block_budget_s or (0.2 if self.on_cuda else 0.1),
            pool=self.opt.pool,
            pool_path=timed.setup["pool_inputs"],
            threads=self.opt.threads or 0,
            expected_dtype=timed.output_dtype,
            output_bytes=timed.output_bytes,
            output_shape=timed.output_shape,
            tolerance=self.tolerance,
            compile_mode=self.opt.compile_mode if compile_key and not cached else None,
            reference_ops=self.reference_ops,
            reference_standard_ops=self.reference_standard_ops,
            # numpy inside interpreted launches is the interpreter's where triton_front_end let them run;
            # when they ran is the runner's word, which the static check keeps out of the candidate's reach
            triton_interpreted=not self.on_cuda and "triton" in self.verdict.backends,
            own_code_checks=self.opt.own_code_checks,
        )
        log.info(
            "benchmark: %d blocks per side%s",
            bench.blocks,
            ", torch.compile baseline too" if compile_key and not cached else "",
        )
        figures = bench.run()
        v = self.verdict
        ms, iqr = figures["ms"], figures["iqr_ms"]
        v.reference_ms, v.candidate_ms = _sig(ms[EAGER]), _sig(ms[CANDIDATE])
        v.reference_iqr_ms, v.candidate_iqr_ms = _sig(iqr[EAGER]), _sig(iqr[CANDIDATE])
        v.speedup = _sig(ms[EAGER] / ms[CANDIDATE])
        v.baselines = {"eager": {"ms": v.reference_ms, "iqr_ms": v.reference_iqr_ms},
                       "compile": self._compile_baseline(figures, compile_key, cached)}  # fmt: skip
        if v.baselines["compile"].get("ms"):
            v.speedup_vs_compile = _sig(v.baselines["compile"]["ms"] / ms[CANDIDATE])
        v.timing = {
            "method": "cuda events, device-wide sync, L2 flushed"
            if self.on_cuda
            else (
                "host clock from resuming the runner to stopping it; inputs staged and outputs read by the host; "
                "cache flushed"
                if bench.hosted
                else "host clock, cache flushed"
            ),
            "figure": "median per call; each candidate block bounded below by the host's clock",
            "calls_per_block": figures["calls_per_block"],
            "blocks": bench.blocks,
            "interleaved": True,
            "pool": self.opt.pool,
            "threads": self.opt.threads or env.get("cpu_threads"),
            "host_clock": {k: x if isinstance(x, bool) else _sig(x) for k, x in figures["host_clock"].items()},
            "repeatability": {k: _sig(x) if isinstance(x, float) else x for k, x in figures["repeatability"].items()},
            "candidate_reported_ms": _sig(figures["candidate_reported_ms"]),
            "quiet_wait_ms": _sig(figures["quiet_wait_ms"]),
            "cores": figures["cores"],  # on the CPU: cores each side kept busy at once, its typical block
            "cpu_samples": figures["cpu_samples"],
            # the task's declared work at the timed shape, for roofline figures
            "flops": timed.setup.get("flops"),
            "bytes": timed.setup.get("bytes") or timed.output_bytes,
            "bytes_declared": bool(timed.setup.get("bytes")),
        }
        clock = figures["host_clock"]
        if clock["report_far_off"]:
            v.warnings.append(
                f"the candidate's own report explains {figures['candidate_reported_ms']:.3f} ms of each call where "
                f"the host's clock saw {clock['candidate_unexplained_ms']:.3f} ms more (a patched clock, hidden work "
                "or a loaded machine): its figure is the host's clock, whatever it reported"
            )
        if figures["candidate_reported_ms"] < clock["resolution_ms"]:
            v.warnings.append(
                f"the candidate's calls ({figures['candidate_reported_ms']:.4f} ms) are shorter than the host's "
                f"clock resolves here ({clock['resolution_ms']:.4f} ms): each counts as that long, so its speedup is "
                "a lower bound; time a larger shape for a finer figure"
            )
        if figures["cpu_samples"].get("own_share") is not None:
            v.own_share = figures["cpu_samples"]["own_share"]  # seen from outside: it replaces the runner's own split
        v.stage = "benchmark"

    def _compile_baseline(self, figures: dict, compile_key: str | None, cached: dict | None) -> dict:
        mode = self.opt.compile_mode
        if compile_key is None:
            return {"ms": None, "reason": "not requested", "mode": mode}
        if cached:
            # What the record keeps is how the compiled reference compared with the eager one in blocks
            # timed side by side; today's eager figure scales it. A machine that ran slower or faster
            # when the record was made (or a candidate that left it so) does not carry over.
            ms, eager_then = cached["ms"], cached["eager_ms"]  # baselines.load checked both
            return {"ms": _sig(ms / eager_then * figures["ms"][EAGER]) if eager_then else ms,
                    "iqr_ms": cached.get("iqr_ms"), "mode": mode, "cached": True,
                    "cached_ms": ms, "cached_eager_ms": eager_then,
                    "measured_at": cached.get("measured_at")}  # fmt: skip
        if COMPILED not in figures["ms"]:
            return {"ms": None, "reason": figures["compile_reason"] or "torch.compile failed", "mode": mode}
        record = {"ms": _sig(figures["ms"][COMPILED]), "iqr_ms": _sig(figures["iqr_ms"][COMPILED]), "mode": mode,
                  "eager_ms": _sig(figures["ms"][EAGER])}  # fmt: skip
        baselines.save(compile_key, record)
        return {**record, "cached": False}


# How PyTorch says that an operator has no kernel for a dtype on a device.
_DTYPE_UNSUPPORTED = ("not implemented for", "NotImplementedError", "not supported for", "Unsupported dtype")


def _describe_overrides(overrides: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in overrides.items()) or "default shapes"


def _sig(x: float | None) -> float | None:
    """Six significant figures: enough for any timing, without float noise in the JSON."""
    return None if x is None else float(f"{x:.6g}")
