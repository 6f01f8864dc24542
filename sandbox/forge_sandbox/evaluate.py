"""The evaluation pipeline: static check, compile, verify, benchmark, verdict.

Process model (see shared EVALUATOR-NOTES): this function is the host. It
never imports the candidate. A trusted *reference runner* builds the task's
``Model``, makes every input from seeds the host draws at random, and computes
the expected outputs; an untrusted *candidate runner* imports the candidate
(compiling it) and runs ``ModelNew`` on the same inputs. The host compares the
outputs, checks the timings against its own clock, and decides. Expected
outputs never exist in the candidate's process, and nothing the candidate
prints is read as a result.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass

import torch

from forge_sandbox import compare, hardware, isolation, protocol, static_check
from forge_sandbox.benchmark_stage import BenchmarkStage
from forge_sandbox.host import RunnerFailure, RunnerProcess, UnsafeFile, open_regular_file
from forge_sandbox.taskfile import TaskError, resolve_size
from forge_sandbox.verdict import (
    COMPILE_ERROR,
    CRASHED,
    INCORRECT,
    PASSED,
    REJECTED,
    RUNTIME_ERROR,
    TIMEOUT,
    Stop,
    Verdict,
    draw_seed,
)


@dataclass
class EvalOptions:
    device: str = "cuda"
    size: str = "auto"  # "default", "small" (the task's SMALL shapes) or "auto" (small on the CPU)
    timeout: float = 600.0  # seconds per stage: compile, each verification, each timed block
    trials: int = 5  # verification input sets per configuration
    pool: int = 3  # distinct input sets rotated (and rolled) during timing
    blocks: int | None = None  # interleaved timing blocks per side; default 5 on CUDA, 2 on CPU
    block_budget_s: float | None = None  # time budget per block; default 0.2 s CUDA, 0.1 s CPU
    static_checks: bool = True  # off only in tests that show the runtime defenses alone
    profile: bool = False  # Nsight Compute metrics of the candidate's own kernels (CUDA, once it passed)
    profile_dir: str | None = None  # where the .ncu-rep report is kept
    profile_timeout: float = 240.0  # seconds for the profiled run (ncu replays each kernel dozens of times)
    isolate: bool = True  # the candidate's runner in namespaces of its own (isolation.py), where available
    profile_isolated: bool = False  # run ncu's target in the candidate's namespaces too (unproven on GPUs)


def _workdir_root() -> str | None:
    # Outputs travel through files: keep them in memory where the OS allows.
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else None


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
    started = time.perf_counter()
    verdict = Verdict(status=PASSED, task=os.path.abspath(task_path), candidate=os.path.abspath(candidate_path))
    workdir = tempfile.mkdtemp(prefix="forge-eval-", dir=_workdir_root())
    runners: list[RunnerProcess] = []
    try:
        _Pipeline(task_path, candidate_path, options, verdict, workdir, runners, task_source).run()
    except Stop as stop:
        _stop_verdict(verdict, stop)
    except TaskError:
        raise
    except Exception as exc:  # data from the candidate's side that the host could not use
        reason = f"the evaluation could not use what the candidate's process sent ({type(exc).__name__}: {exc})"
        _stop_verdict(verdict, Stop(REJECTED, reason[:500], stage=verdict.stage or "unknown"))
    finally:
        for runner in runners:
            runner.close()
        shutil.rmtree(workdir, ignore_errors=True)
        verdict.duration_s = round(time.perf_counter() - started, 3)
    return verdict


def _stop_verdict(verdict: Verdict, stop: Stop) -> None:
    verdict.status = stop.status
    verdict.reasons = stop.reasons + verdict.reasons
    verdict.stage = stop.stage
    verdict.speedup = None


class _Pipeline(BenchmarkStage):
    def __init__(self, task_path, candidate_path, options, verdict, workdir, runners, task_source) -> None:
        self.task = os.path.abspath(task_path)
        self.task_source = task_source
        self.candidate = os.path.abspath(candidate_path)
        self.opt = options
        self.verdict = verdict
        self.workdir = workdir
        self.runners = runners
        self.on_cuda = options.device.startswith("cuda")
        self.no_isolation: str | None = None  # why the candidate runs without namespaces, when it does
        self.candidate_caches: dict = {}  # the compiler cache folders the candidate's runner was given

    # -- stages -----------------------------------------------------------------

    def run(self) -> None:
        if self.task_source is None:
            try:
                with open(self.task) as f:
                    self.task_source = f.read()
            except OSError as exc:
                raise TaskError(f"{self.task}: cannot read the task file ({exc.strerror})") from None
        source = self._read_candidate()
        self._static(source)
        # The runner loads this copy: exactly the source checked here, and inside its namespaces
        # the candidate's own folder is all of forge's folders it can see (isolation.py).
        own = os.path.join(self.workdir, "candidate")
        os.makedirs(own, exist_ok=True)
        self.candidate_copy = os.path.join(own, os.path.basename(self.candidate))
        with open(self.candidate_copy, "w") as f:
            f.write(source)
        self.ref = self._start("reference")
        self.cand = self._start("candidate", isolate=self.opt.isolate)
        self.verdict.environment = self._ask_ref({"op": "hello"})["environment"]
        self._check_isolation()
        # The candidate compiles while the reference prepares.
        self.cand.send({"op": "load_candidate", "candidate": self.candidate_copy})
        described = self._ask_ref(
            {"op": "describe", "task": self.task, "task_source": self.task_source, "size": self.opt.size}
        )
        self.tolerance = described.get("tolerance")
        loaded = self._receive_cand(stage="compile")
        self.verdict.compile_log = ptxas_lines(self.cand.log_tail(200_000))
        self.verdict.hardware["ptxas"] = hardware.ptxas_stats(self.verdict.compile_log)
        self._check_patched(loaded.get("patched"), "compile")
        configs = list(range(described["configs"]))
        # Extra shapes first, the base shape last: the runners then hold the base shape for timing.
        for config in configs[1:] + configs[:1]:
            self._verify(config)
        self._benchmark()

    def _read_candidate(self) -> str:
        try:
            with open(self.candidate) as f:
                return f.read()
        except OSError as exc:
            raise Stop(REJECTED, f"cannot read the candidate: {exc.strerror}", stage="static") from None
        except UnicodeDecodeError:
            raise Stop(REJECTED, "the candidate is not UTF-8 text", stage="static") from None

    def _static(self, source: str) -> None:
        report = static_check.check_source(source)
        if report.syntax_error:
            raise Stop(COMPILE_ERROR, f"syntax error: {report.syntax_error}", stage="static")
        self.verdict.backends = report.backends
        self.kernel_names = report.kernel_names
        self.verdict.static_findings = report.findings
        if report.findings and self.opt.static_checks:
            raise Stop(REJECTED, *report.findings, stage="static")

    def _verify(self, config: int) -> None:
        seeds = {
            "init_seed": draw_seed(),
            "verify_seeds": [draw_seed() for _ in range(self.opt.trials)],
            "pool_seeds": [draw_seed() for _ in range(self.opt.pool)],
        }
        setup = self._ask_ref(
            {
                "op": "setup_reference",
                "task": self.task,
                "task_source": self.task_source,
                "size": self.opt.size,
                "config": config,
                **seeds,
            }
        )
        expected = protocol.load_tensors(self._ask_ref({"op": "forward"})["payload"])
        self.setup = setup
        self.init_seed = seeds["init_seed"]
        if not isinstance(expected, list) or not all(type(e) is torch.Tensor for e in expected):
            raise TaskError(f"{self.task}: Model.forward must return a single torch.Tensor")
        self.output_dtype = expected[0].dtype
        self.output_bytes = expected[0].numel() * expected[0].element_size()
        self._ask_cand(
            {
                "op": "setup_candidate",
                "init_seed": seeds["init_seed"],
                **{k: setup[k] for k in ("init_inputs", "verify_inputs", "pool_inputs")},
            },
            stage="verify",
        )
        reply = self._ask_cand({"op": "forward"}, stage="verify")
        self._check_patched(reply.get("patched"), "verify")
        actual = self._load_candidate_tensors(reply.get("outputs"), "verify")
        trials = reply.get("trials") or []
        if not isinstance(actual, list) or len(actual) != len(expected) or len(trials) != len(expected):
            raise Stop(REJECTED, "the candidate's runner returned the wrong number of outputs", stage="verify")
        record = {"config": config, "overrides": setup.get("overrides", {}), "trials": len(expected)}
        self.verdict.correctness.append(record)
        for i, (want, got, trial) in enumerate(zip(expected, actual, trials)):
            self._check_trial(trial, i)
            ok, reason, stats = compare.compare_outputs(want, got, self.tolerance)
            for key, value in stats.items():
                record[key] = max(record.get(key, 0), value)
            if not ok:
                where = f"configuration {config} ({_describe_overrides(record['overrides'])}), trial {i + 1}"
                raise Stop(INCORRECT, f"{where}: {reason}", stage="verify")

    def _check_trial(self, trial: dict, index: int) -> None:
        if not isinstance(trial, dict):
            raise Stop(REJECTED, "malformed trial report", stage="verify")
        if trial.get("launches") == 0:
            raise Stop(
                REJECTED, "no custom kernel was launched during forward: the work was done by PyTorch", stage="verify"
            )
        if trial.get("threads_started", 0) > 0:
            raise Stop(REJECTED, "forward left a thread running: work outside the call is not allowed", stage="verify")
        if trial.get("inputs_changed"):
            raise Stop(
                REJECTED,
                f"forward modified its input(s) {trial['inputs_changed']}: inputs must stay unchanged",
                stage="verify",
            )
        if trial.get("exact_tensor") is False:
            raise Stop(INCORRECT, f"output is a {trial.get('output_type')}, not a plain torch.Tensor", stage="verify")
        if trial.get("storage_ok") is False:
            raise Stop(INCORRECT, "output's storage is smaller than its shape requires", stage="verify")

    def _start(self, role: str, isolate: bool = False) -> RunnerProcess:
        prefix, args, caches, own = [], [], {}, os.path.join(self.workdir, role)
        if isolate:
            prefix, self.no_isolation = isolation.isolation_prefix()
            if prefix:
                args, caches = self._isolation_args(own)
        env = {**os.environ, **caches} if caches else None
        runner = RunnerProcess(role, own, self.opt.device, env=env, prefix=prefix, extra_args=args)
        if role == "candidate":
            self.candidate_caches = caches  # the profiled run builds from the same caches
        self.runners.append(runner)
        return runner

    def _isolation_args(self, own: str) -> tuple[list[str], dict]:
        """The runner's --layout (``own`` its only writable forge folder; it reads the reference's saved
        inputs and its own source) and the cache folders its compilers use."""
        os.makedirs(own, exist_ok=True)
        with open(self.candidate_copy, "rb") as f:
            caches = isolation.cache_environment(hashlib.sha256(f.read()).hexdigest()[:16])
        readable = [os.path.join(self.workdir, "reference"), os.path.dirname(self.candidate_copy)]
        return ["--layout", json.dumps(isolation.layout(own, readable, caches))], caches

    def _check_isolation(self) -> None:
        """Say how the candidate is isolated; if CUDA does not work inside its namespaces, go without."""
        env = self.verdict.environment
        if not self.cand.isolated:
            why_not = self.no_isolation or "turned off"
            env["isolation"] = f"none: {why_not}"
            env["files"] = "not restricted: not isolated"
            if why_not != "turned off":
                self.verdict.warnings.append(f"the candidate ran without namespace isolation: {why_not}")
            return
        probe = self._ask_cand({"op": "hello", "probe": True}, stage="compile")
        env["files"] = str(probe.get("files"))
        if not env["files"].startswith("read-only"):
            self.verdict.warnings.append(f"the candidate's file system was not locked down: {env['files']}")
        if self.on_cuda and not probe.get("cuda"):
            self.cand.close()
            self.runners.remove(self.cand)
            self.cand = self._start("candidate")
            env["isolation"] = "none: CUDA was not usable inside the namespaces"
            env["files"] = "not restricted: not isolated"
            self.verdict.warnings.append("the candidate ran without namespace isolation: CUDA was not usable inside")
            return
        env["isolation"] = "user, PID, mount, network, IPC and UTS namespaces"

    def _ask_ref(self, message: dict) -> dict:
        try:
            reply, _ = self.ref.request(message, self.opt.timeout)
        except RunnerFailure as failure:
            raise self._runner_stop(failure, "reference", "reference") from None
        if not reply["ok"]:
            if reply.get("kind") == "task":
                raise TaskError(reply["error"])
            raise TaskError(f"{self.task}: the reference raised {reply.get('error')}")
        return reply

    def _ask_cand(self, message: dict, stage: str) -> dict:
        try:
            self.cand.send(message)
        except RunnerFailure as failure:
            raise self._runner_stop(failure, "candidate", stage) from None
        return self._receive_cand(stage)

    def _receive_cand(self, stage: str) -> dict:
        try:
            reply = self.cand.receive(self.opt.timeout)
        except RunnerFailure as failure:
            raise self._runner_stop(failure, "candidate", stage) from None
        if not reply["ok"]:
            raise self._error_stop(reply, stage)
        return reply

    def _error_stop(self, reply: dict, stage: str) -> Stop:
        kind = reply.get("kind")
        self.verdict.log_tail = self.cand.log_tail()
        if kind == "compile":
            # With a verbose build the compiler's output is in the log, not in the exception.
            self.verdict.compile_log = (str(reply.get("detail", "")) + "\n" + self.cand.log_tail(20_000)).strip()
            summary = _compiler_error_line(self.verdict.compile_log) or reply.get("error")
            return Stop(COMPILE_ERROR, f"compile failed: {summary}", stage=stage)
        if kind == "oom":
            return Stop(RUNTIME_ERROR, f"out of memory: {reply.get('error')}", stage=stage)
        where = {"compile": "while loading", "verify": "while verifying", "benchmark": "while timed"}.get(stage, stage)
        return Stop(RUNTIME_ERROR, f"raised {where}: {reply.get('error')}", _traceback_hint(reply), stage=stage)

    def _runner_stop(self, failure: RunnerFailure, side: str, stage: str) -> Stop:
        if side == "reference":
            # The candidate's process runs beside the reference's from the start and could
            # signal or starve it; a task whose reference dies on its own shows up in
            # `forge tasks --lint`, which runs no candidate.
            return Stop(
                CRASHED,
                f"the reference process failed while the candidate's was running ({failure.message}); "
                "if the task's reference crashes on its own, `forge tasks --lint` shows it",
                stage=stage,
            )
        self.verdict.log_tail = failure.log_tail
        if failure.kind == "timeout":
            return Stop(TIMEOUT, f"{stage}: {failure.message}; the process group was killed", stage=stage)
        if failure.kind == "protocol":
            return Stop(REJECTED, f"{stage}: {failure.message}", stage=stage)
        tail = _last_line(failure.log_tail)
        return Stop(CRASHED, f"{stage}: {failure.message}", f"last output: {tail}" if tail else "", stage=stage)

    def _load_candidate_tensors(self, path, stage: str):
        expected_dir = os.path.join(self.workdir, "candidate")
        if not isinstance(path, str) or os.path.dirname(os.path.abspath(path)) != expected_dir:
            raise Stop(REJECTED, "the candidate's runner named an output file outside its workdir", stage=stage)
        try:
            return protocol.load_tensors(_read_regular_file(path, MAX_OUTPUT_BYTES))
        except UnsafeFile as exc:
            raise Stop(REJECTED, f"the candidate's output file is unusable: {exc}", stage=stage) from None
        except Exception as exc:
            first = (str(exc).splitlines() or [""])[0][:200]
            raise Stop(
                INCORRECT, f"the outputs are not plain tensors (could not load them safely: {first})", stage=stage
            ) from None

    def _check_patched(self, patched, stage: str) -> None:
        if patched:
            raise Stop(REJECTED, f"timing primitives were replaced: {', '.join(map(str, patched))}", stage=stage)


MAX_OUTPUT_BYTES = 16 * 2**30


def _read_regular_file(path: str, limit: int) -> bytes:
    """Read a file the candidate's runner wrote, refusing FIFOs, links, devices and huge files."""
    fd = open_regular_file(path)
    try:
        size = os.fstat(fd).st_size
        if size > limit:
            raise UnsafeFile(f"{size} bytes is over the {limit} byte limit")
        chunks = []
        while chunk := os.read(fd, 1 << 24):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _last_line(text: str) -> str:
    lines = [line for line in (text or "").splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def ptxas_lines(log: str) -> str:
    """ptxas's report of each kernel (registers, spills, shared memory) from a build log."""
    keep = [line.rstrip() for line in log.splitlines() if line.startswith("ptxas") or "bytes stack frame" in line]
    return "\n".join(keep)


def _compiler_error_line(log: str) -> str:
    """The compiler's first error line (gcc/nvcc `file:line:col: error: ...`), without the path."""
    for line in log.splitlines():
        if "error" in line.lower() and ("error:" in line or "error " in line) and not line.startswith(("FAILED", "[")):
            return re.sub(r"^\S*/", "", line.strip())[:300]
    return ""


def _traceback_hint(reply: dict) -> str:
    lines = [
        line.strip()
        for line in str(reply.get("traceback", "")).splitlines()
        if line.strip().startswith("File ") and "forge_sandbox" not in line
    ]
    return f"at {lines[-1]}" if lines else ""


def _describe_overrides(overrides: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in overrides.items()) or "default shapes"
