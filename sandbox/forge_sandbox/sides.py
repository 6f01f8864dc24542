"""The host's two runners, the trusted reference and the untrusted candidate, and how what goes wrong
with either becomes a verdict.

Everything the candidate's runner sends is untrusted data: a reply that is not
what the host asked for ends the evaluation as ``rejected`` (:class:`Malformed`),
its failures become the matching status, and its outputs are read from the pipe
only up to the size of the reference's. A failure of the reference is the
task's (``TaskError``) unless the candidate's process was running beside it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import signal
import time
from dataclasses import dataclass

from forge_sandbox import cpu_samples, host, hosted_calls, isolation, precompiled_header, protocol, runner_cgroups
from forge_sandbox.host import ResourceWatch, RunnerFailure, RunnerProcess, default_memory_limit
from forge_sandbox.taskfile import TaskError
from forge_sandbox.verdict import COMPILE_ERROR, CRASHED, INCORRECT, REJECTED, RUNTIME_ERROR, TIMEOUT, Stop

# Room for torch.save's archive around the tensors' bytes, per output.
ARCHIVE_OVERHEAD_BYTES = 64 * 1024


class Malformed(Stop):
    """The candidate's runner sent something the host did not ask for: rejected, with what it was."""

    def __init__(self, stage: str, what: str) -> None:
        super().__init__(REJECTED, f"the candidate's runner sent {what}", stage=stage)


def expect(reply: dict, stage: str, **fields) -> dict:
    """Check that a candidate's reply has these fields with these types (a type or a tuple of them)."""
    for name, kind in fields.items():
        value = reply.get(name)
        if not isinstance(value, kind) or isinstance(value, bool) and kind in (int, float, (int, float)):
            raise Malformed(stage, f"a malformed reply ({name!r} is not {_kind_name(kind)})")
    return reply


def _kind_name(kind) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(k.__name__ for k in kinds)


def outputs_limit(expected: list) -> int:
    """The most bytes a candidate's outputs for these expected ones may take on the pipe: room for
    twice each output's size (a wider dtype is an ``incorrect`` verdict, not a protocol breach)."""
    return sum(2 * e.numel() * e.element_size() + ARCHIVE_OVERHEAD_BYTES for e in expected) + ARCHIVE_OVERHEAD_BYTES


@dataclass
class RunnerOptions:
    device: str
    timeout: float
    isolate: bool
    threads: int  # torch's CPU threads on both sides (0: torch's default)
    extra_env: dict  # variables for the candidate's process beyond the kept ones (host.child_environment)
    memory_limit: int = 0  # bytes the candidate's processes may keep resident (0: host.default_memory_limit)


# How long a runner may take to answer its first command, "hello": forge's own start (Python, torch, its
# modules), before any of the candidate's code, which a stage limit set short for the candidate's stages does
# not cut (on two cores busy with other evaluations it took 8-12 s, 2026-12-02: a hanging candidate's test,
# at 8 s a stage, was told the reference had failed).
RUNNER_START_S = 60.0


def _limit(message: dict, timeout: float) -> float:
    return max(timeout, RUNNER_START_S) if message.get("op") == "hello" else timeout


class Sides:
    """The reference runner and the candidate runner of one evaluation."""

    def __init__(self, workdir: str, candidate_source: str, candidate_name: str, options: RunnerOptions) -> None:
        self.workdir = workdir
        self.opt = options
        self.runners: list[RunnerProcess] = []
        self.resource_watches: list[ResourceWatch] = []
        self.groups: dict[str, runner_cgroups.RunnerGroup] = {}  # the candidate's, by controller (limit_candidate)
        self.ref_groups: dict[str, runner_cgroups.RunnerGroup] = {}  # the reference's freezer (_give_freezers)
        self.freezing_held: runner_cgroups.RunnerGroup | None = None  # runner_cgroups.hold_freezing
        self.first_bases: dict[int, dict[str, set[int]]] = {}  # read_library_bases
        self.cand_hello: dict | None = None  # hello_candidate
        self.no_isolation: str | None = None  # why the candidate runs without namespaces, when it does
        # The runner loads this copy: exactly the source the host checked.
        source_dir = os.path.join(workdir, "source")
        os.makedirs(source_dir, exist_ok=True)
        self.candidate_copy = os.path.join(source_dir, candidate_name)
        with open(self.candidate_copy, "w") as f:
            f.write(candidate_source)
        key = hashlib.sha256(candidate_source.encode()).hexdigest()[:16]
        self.caches = isolation.cache_environment(key)  # its compilers' caches, one set per source
        self.candidate_source = candidate_source
        self.headers: str | None = None  # torch/extension.h precompiled (_start_candidate)
        # On the CPU the host stages each timed call's inputs and reads its output (hosted_calls).
        self.shared: dict[str, hosted_calls.SharedInputs] = {}
        self.readers: dict[str, hosted_calls.OutputReader] = {}
        if options.device == "cpu":
            self.shared = {"reference": hosted_calls.SharedInputs(), "candidate": hosted_calls.SharedInputs()}
        self.oom_kills_before = host.oom_kills()  # the machine's count, to tell its OOM killer's work (runner_stop)
        self.ref = self._start_reference()
        # Not a limit: what the reference held, to weigh against the candidate's when the machine runs out.
        self.ref_watch = ResourceWatch(self.ref, None, None, every_s=0.2, processes=lambda: [self.ref.proc.pid])
        self.resource_watches.append(self.ref_watch)
        self.cand = self._start_candidate(options.isolate)

    # -- starting ---------------------------------------------------------------------------

    def _start_reference(self) -> RunnerProcess:
        env = {**isolation.reference_cache_environment(), **self._thread_environment()}
        # Inductor compiles in a pool of worker processes otherwise: they would stay in the reference's
        # process tree, and stopping them after each timed call would lengthen the reference's overhead,
        # which the host takes off the candidate's window (RunnerProcess.halt).
        env["TORCHINDUCTOR_COMPILE_THREADS"] = "1"
        with self._shared_fd("reference") as fd:
            return self._keep(RunnerProcess("reference", os.path.join(self.workdir, "reference"), self.opt.device,
                                            env=env, extra_args=self._thread_args(), shared_fd=fd))  # fmt: skip

    def _start_candidate(self, isolate: bool, left_out: tuple[str, ...] = ()) -> RunnerProcess:
        """``left_out``: pieces of the isolation lifted (isolation.settle: "local_sockets", "filter",
        "files"), where an operator allows it for a GPU whose driver does not start under them
        (evaluate._check_isolation)."""
        own = os.path.join(self.workdir, "candidate")
        prefix, args = [], []
        if isolate:
            prefix, self.no_isolation = isolation.isolation_prefix()
            if prefix:
                readable = [os.path.join(self.workdir, "reference"), os.path.dirname(self.candidate_copy)]
                # Only inside its namespaces with its files locked down, where it cannot rewrite what later
                # candidates compile in.
                if "files" not in left_out:
                    self.headers = self.headers or precompiled_header.folder(self.candidate_source)
                    readable += [self.headers] if self.headers else []
                gpu = self.opt.device.startswith("cuda")  # a CPU task's candidate gets no GPU device nodes
                layout = isolation.layout(own, readable, self.caches, gpu=gpu)
                layout |= {piece: piece == "local_sockets" for piece in left_out}
                args = ["--layout", json.dumps(layout)]
        env = {**self.caches, **self._thread_environment(), **self.opt.extra_env}
        if prefix and self.headers and "files" not in left_out:
            # first, before the host's own CPATH and the -isystem folders of torch's headers
            env["CPATH"] = os.pathsep.join(p for p in (self.headers, os.environ.get("CPATH")) if p)
        with self._shared_fd("candidate") as fd:
            runner = RunnerProcess("candidate", own, self.opt.device, env=env, prefix=prefix,
                                   extra_args=[*args, *self._thread_args()], shared_fd=fd,
                                   log_path=os.path.join(self.workdir, "candidate.log"))  # fmt: skip
        # What it writes where the host can see it (its caches, and its folder when not isolated) is
        # bounded while it runs; what is left after the evaluation is tidied (isolation.tidy_caches).
        watched = [v for k, v in self.caches.items() if k in isolation.CACHE_VARIABLES]
        watched += [] if runner.isolated and "files" not in left_out else [own]
        runner.watch = lambda: _over_budget(watched, runner.processes())
        self.cand_watch = ResourceWatch(runner, self.memory_limit(), runner_cgroups.MAX_TASKS)
        self.resource_watches.append(self.cand_watch)
        return self._keep(runner)

    def restart_candidate(self, isolate: bool, left_out: tuple[str, ...] = ()) -> None:
        """A fresh candidate runner, before any of the candidate's code: with less isolation (_start_candidate)."""
        self.cand_watch.stop()
        self.resource_watches.remove(self.cand_watch)
        self.cand.close()
        self.runners.remove(self.cand)
        self.cand = self._start_candidate(isolate, left_out)
        self.cand_hello = None  # the new runner has not said hello

    @contextlib.contextmanager
    def _shared_fd(self, side: str):
        """A descriptor of the side's shared memory for its runner to inherit (-1: none), closed here after."""
        fd = self.shared[side].inheritable_fd() if side in self.shared else -1
        try:
            yield fd
        finally:
            if fd >= 0:
                os.close(fd)

    def halt(self, side: str, stage: str) -> None:
        """Stop every process of a side's runner after a timed call (RunnerProcess.halt)."""
        runner = self.runner(side)
        try:
            runner.halt()
        except RunnerFailure as failure:
            raise self.runner_stop(failure, runner.role, stage) from None

    def open_output_readers(self) -> str:
        """Open both runners' memory for the host's reading of timed outputs (hosted_calls.OutputReader),
        before any of the candidate's code runs: the candidate's worker is named by its hello. Returns
        why not, when the host may not read them ('' when it may)."""
        self._name_worker()
        try:
            self.readers = {"reference": hosted_calls.OutputReader(self.ref.proc.pid),
                            "candidate": hosted_calls.OutputReader(self.cand.worker)}  # fmt: skip
        except OSError as exc:
            self.readers = {}
            return f"the host may not read its runners' memory ({exc.strerror})"
        return ""

    def _name_worker(self) -> None:
        """Name the candidate runner's worker and forge's processes beside it (RunnerProcess.worker_pid)
        from its hello, which comes before any of the candidate's code."""
        own_pid = self.hello_candidate().get("pid")
        if type(own_pid) is not int:
            raise Malformed("compile", "a hello without its process ID")
        try:
            self.cand.worker_pid(own_pid)
        except RunnerFailure as failure:
            raise self.runner_stop(failure, "candidate", "compile") from None

    def _keep(self, runner: RunnerProcess) -> RunnerProcess:
        self.runners.append(runner)
        return runner

    def _thread_args(self) -> list[str]:
        return ["--threads", str(self.opt.threads)] if self.opt.threads else []

    def _thread_environment(self) -> dict:
        if not self.opt.threads:
            return {}
        n = str(self.opt.threads)
        return {"OMP_NUM_THREADS": n, "MKL_NUM_THREADS": n, "OPENBLAS_NUM_THREADS": n}

    def memory_limit(self) -> int:
        return self.opt.memory_limit or default_memory_limit()

    def limit_candidate(self) -> dict[str, str]:
        """Bound the candidate runner's threads and processes, and charge its memory to a group of its
        own (runner_cgroups), before any of its code runs; says how each is bounded, for the verdict's
        environment ("tasks", "memory")."""
        bounds = {"pids": runner_cgroups.MAX_TASKS, "memory": self.memory_limit() + runner_cgroups.HARD_LIMIT_MARGIN}
        self._name_worker()
        groups, why_not = runner_cgroups.make_bounds(bounds, self.cand.own_processes())
        self.groups.update(groups)
        how = {c: f"a {c} cgroup" if not why_not[c] else f"counted by the host ({why_not[c]})" for c in bounds}
        if "memory" in self.groups:
            self.cand_watch.charged = self.groups["memory"].charged
        elif "candidate" in self.shared:
            self.cand_watch.unmapped = self.shared["candidate"].beyond_the_inputs
        return {
            "tasks": f"at most {runner_cgroups.MAX_TASKS} threads and processes ({how['pids']})",
            "memory": f"at most {self.memory_limit() / 2**30:.1f} GiB held ({how['memory']})",
            "cpu_time": self._count_cpu(),
            "stopping": self._give_freezers(),
        }

    def _count_cpu(self) -> str:
        """A group whose CPU time the host reads for the candidate's (host.ThreadTimes): every task it
        ever held counts, a child the kernel reaped itself too. Says how the candidate's CPU time is read."""
        group = next((g for g in self.groups.values() if g.v2), None)  # a task is in one v2 group only
        if group is None:
            group, why_not = runner_cgroups.make("cpuacct", 0)
            why_not = why_not or group.enter(self.cand.own_processes())
            if why_not:
                return f"from /proc, per thread and process ({why_not})"
            self.groups["cpuacct"] = group
        self.cand.cpu_group = group
        return "from a cpu cgroup and /proc, per thread and process"

    def _give_freezers(self) -> str:
        """A freezer group for each runner (RunnerProcess.halt), or for neither: stopping costs both sides
        alike. Only for an isolated candidate: one with the host's rights could write its group's state
        (or move a helper out of it), where signals still reach everything it starts. Says how their
        processes are stopped after each timed call."""
        if not self.cand.isolated:
            return "signals down each runner's process tree (no freezer: the candidate is not isolated)"
        made = {}
        for role, runner, groups in (("candidate", self.cand, self.groups), ("reference", self.ref, self.ref_groups)):
            group = next((g for g in groups.values() if g.v2), None)  # a task is in one v2 group only
            if group is None:
                group, why_not = runner_cgroups.make("freezer", 0)
                why_not = why_not or group.enter(runner.own_processes())
                if why_not:
                    return f"signals down each runner's process tree (no freezer for the {role}'s: {why_not})"
                groups["freezer"] = group
            made[role] = group
        self.cand.freezer, self.ref.freezer = made["candidate"], made["reference"]
        self.freezing_held = runner_cgroups.hold_freezing()  # so that stopping costs both sides alike
        return "a freezer cgroup for each runner"

    def read_library_bases(self) -> None:
        """Where the candidate runner's installed libraries are loaded, read before any of its code runs
        (cpu_samples.load_bases_of), for the host's naming of its CPU samples. Its answer to "hello"
        says it has imported what it imports before a candidate (torch, numpy and their libraries)."""
        self.hello_candidate()
        self.first_bases = cpu_samples.load_bases_of(self.cand.processes())

    def hello_candidate(self) -> dict:
        """The candidate runner's answer to "hello" (how its files are restricted, whether CUDA works
        there), asked once: it comes before any of the candidate's code."""
        if self.cand_hello is None:
            self.cand_hello = self.ask_cand({"op": "hello"}, stage="compile")
        return self.cand_hello

    def bounds_reached(self) -> str:
        """What a failure's reason adds when the candidate reached a bound its groups keep: the kernel
        refused it threads or processes, or killed one of its processes at the memory group's limit."""
        refused = self.groups["pids"].refused() if "pids" in self.groups else 0
        killed = self.groups["memory"].killed_for_memory() if "memory" in self.groups else 0
        notes = []
        if refused:
            notes.append(f"it reached its bound of {runner_cgroups.MAX_TASKS} threads and processes: the kernel "
                         f"refused {refused} more")  # fmt: skip
        if killed:
            notes.append(f"the kernel killed {killed} of its processes at its memory limit of "
                         f"{self.memory_limit() / 2**30:.1f} GiB (and 1 GiB more)")  # fmt: skip
        return f" ({'; '.join(notes)})" if notes else ""

    def close(self) -> None:
        for watch in self.resource_watches:
            watch.stop()
        for runner in self.runners:
            runner.close()
        # The freezers first: a group's tasks die only thawed, and the others' close waits for them.
        groups = {id(g): g for g in [*self.groups.values(), *self.ref_groups.values()]}  # v2: one for all
        if self.freezing_held is not None:
            groups[id(self.freezing_held)] = self.freezing_held
        for group in sorted(groups.values(), key=lambda g: g.controller != "freezer"):
            group.close()
        for resource in [*self.readers.values(), *self.shared.values()]:
            resource.close()
        isolation.tidy_caches(self.caches)

    # -- talking ------------------------------------------------------------------------------

    def ask_ref(self, message: dict) -> dict:
        reply, _ = self.request_ref(message)
        return reply

    def request_ref(self, message: dict) -> tuple[dict, float]:
        """A reference command, with the host's wall time for it; its failures are the task's."""
        try:
            reply, wall = self.ref.request(message, _limit(message, self.opt.timeout))
        except RunnerFailure as failure:
            raise self.runner_stop(failure, "reference", "reference") from None
        if not reply["ok"]:
            if reply.get("kind") == "task":
                raise TaskError(reply["error"])
            raise TaskError(f"the task's reference raised {reply.get('error')} ({message.get('op')})")
        return reply, wall

    def ask_cand(self, message: dict, stage: str, payload_limit: int = 0) -> dict:
        reply, _ = self.request_cand(message, stage, payload_limit)
        return reply

    def request_cand(self, message: dict, stage: str, payload_limit: int = 0) -> tuple[dict, float]:
        try:
            reply, wall = self.cand.request(message, _limit(message, self.opt.timeout), payload_limit)
        except RunnerFailure as failure:
            raise self.runner_stop(failure, "candidate", stage) from None
        if not reply["ok"]:
            raise self.error_stop(reply, stage)
        return reply, wall

    def send_cand(self, message: dict, stage: str) -> None:
        try:
            self.cand.send(message)
        except RunnerFailure as failure:
            raise self.runner_stop(failure, "candidate", stage) from None

    def receive_cand(self, stage: str) -> dict:
        try:
            reply = self.cand.receive(self.opt.timeout)
        except RunnerFailure as failure:
            raise self.runner_stop(failure, "candidate", stage) from None
        if not reply["ok"]:
            raise self.error_stop(reply, stage)
        return reply

    # -- the steps of a timed block ---------------------------------------------------------------

    def runner(self, side: str) -> RunnerProcess:
        return self.cand if side == "candidate" else self.ref

    def send_step(self, side: str, message: dict, stage: str) -> None:
        try:
            self.runner(side).send(message)
        except RunnerFailure as failure:
            raise self.runner_stop(failure, side, stage) from None

    def timed_call(self, side: str, word: bytes, stage: str, spin_s: float) -> tuple[float, int, int]:
        """One hosted timed call (hosted_calls) on the host's clock, the runner stopped before and after:
        its word written while it is still stopped, then it is resumed, its answer awaited (and left
        unparsed: ``read_step`` after) and every process of it stopped again before the clock stops.
        Returns the window in ms and its start and end (CLOCK_MONOTONIC ns).

        Inside: a resume, the word's read, the runner's loop around its call, the answer's write and a
        stop; nothing of the host's beyond those (the answer is parsed after). Written after the resume,
        the word would find a runner asleep waiting for it, to be woken once more inside the window,
        which a runner that polled for it was spared (a review of 2026-11-29: forge's loop rebound in
        the candidate's process to a leaner one)."""
        runner = self.runner(side)
        try:
            runner.check_quiet()
            start, start_ns = time.perf_counter(), time.monotonic_ns()
            runner.send_word(word)
            runner.release()
            runner.wait_message(self.opt.timeout, spin_s)
            runner.halt()
            end, end_ns = time.perf_counter(), time.monotonic_ns()
        except RunnerFailure as failure:
            raise self.runner_stop(failure, side, stage) from None
        return (end - start) * 1e3, start_ns, end_ns

    def read_step(self, side: str, stage: str, spin_s: float = 0.0) -> dict:
        """The next step message of a timed block; a reply instead (the runner failed) ends it."""
        try:
            message = self.runner(side).read_message(self.opt.timeout, spin_s)
        except RunnerFailure as failure:
            raise self.runner_stop(failure, side, stage) from None
        if "ok" in message:
            if side != "candidate":
                raise TaskError(f"the task's reference failed while timed: {message.get('error')}")
            if not message["ok"]:
                raise self.error_stop(message, stage)
            raise Malformed(stage, "a reply in the middle of a timed block")
        return message

    def receive_step_reply(self, side: str, stage: str) -> dict:
        """The reply that ends a timed block."""
        if side == "candidate":
            return self.receive_cand(stage)
        try:
            reply = self.ref.receive(self.opt.timeout)
        except RunnerFailure as failure:
            raise self.runner_stop(failure, "reference", stage) from None
        if not reply["ok"]:
            raise TaskError(f"the task's reference failed while timed: {reply.get('error')}")
        return reply

    def candidate_tensors(self, reply: dict, limit: int, stage: str) -> list:
        """The tensors that followed a candidate's reply, or the verdict's reason why not."""
        data = reply.get("payload")
        if not isinstance(data, bytes):
            raise Malformed(stage, "no outputs")
        try:
            tensors = protocol.load_untrusted_tensors(data, limit)
        except protocol.UnsafeArchive as exc:
            raise Stop(INCORRECT, f"the outputs could not be read: {exc}", stage=stage) from None
        except Exception as exc:
            first = (str(exc).splitlines() or [""])[0][:200]
            raise Stop(
                INCORRECT, f"the outputs are not plain tensors (could not load them safely: {first})", stage=stage
            ) from None
        if not isinstance(tensors, list):
            raise Malformed(stage, "outputs that are not a list")
        return tensors

    # -- failures as verdicts -------------------------------------------------------------------

    def _killed_for_the_machines_memory(self, failure: RunnerFailure) -> bool:
        """The reference died of SIGKILL, not by the host's hand, after the kernel's OOM killer ran."""
        now = host.oom_kills()
        killed = failure.kind == "crashed" and self.ref.proc.returncode == -signal.SIGKILL
        return killed and None not in (now, self.oom_kills_before) and now > self.oom_kills_before

    def _machine_out_of_memory(self, stage: str) -> Stop | TaskError:
        """The machine ran out of memory and its OOM killer took the reference. The candidate's processes
        are held to their own limit (ResourceWatch), so this is the task's size for this machine unless
        the candidate held at least as much as the reference did: then its verdict says so."""
        gib = 2**30
        total = host.machine_memory()
        held = (f"the reference's processes held up to {self.ref_watch.peak / gib:.1f} GiB and the candidate's "
                f"{self.cand_watch.peak / gib:.1f} GiB" + (f", of the machine's {total / gib:.1f} GiB" if total else ""))  # fmt: skip
        if self.cand_watch.peak < self.ref_watch.peak:
            return TaskError(
                f"the machine ran out of memory and the kernel's OOM killer ended the task's reference ({held}): "
                "the task at this size needs more free memory than this machine has (try --size small)"
            )
        return Stop(CRASHED, f"{stage}: the machine ran out of memory while the candidate's processes held as much "
                    f"as the reference's, and the kernel's OOM killer ended the reference ({held})", stage=stage)  # fmt: skip

    def error_stop(self, reply: dict, stage: str) -> Stop:
        """The candidate's own exception, as the matching status."""
        kind = reply.get("kind")
        log_tail = self.cand.log_tail()
        if kind == "compile":
            # With a verbose build the compiler's output is in the log, not in the exception.
            compile_log = (str(reply.get("detail", "")) + "\n" + self.cand.log_tail(20_000)).strip()
            summary = _compiler_error_line(compile_log) or reply.get("error")
            return Stop(COMPILE_ERROR, f"compile failed: {summary}", stage=stage, log_tail=log_tail,
                        compile_log=compile_log)  # fmt: skip
        if kind == "oom":
            return Stop(RUNTIME_ERROR, f"out of memory: {reply.get('error')}", stage=stage, log_tail=log_tail)
        where = {"compile": "while loading", "verify": "while verifying", "benchmark": "while timed"}.get(stage, stage)
        threads = reply.get("threads_running")
        if type(threads) is int and threads > 0:  # the runner's word: a bool is not a count
            where += f" with {threads} thread(s) of its own running"
        return Stop(RUNTIME_ERROR, f"raised {where}: {reply.get('error')}{self.bounds_reached()}", _traceback_hint(reply),
                    stage=stage, log_tail=log_tail)  # fmt: skip

    def runner_stop(self, failure: RunnerFailure, side: str, stage: str) -> Stop | TaskError:
        if side == "reference":
            if self._killed_for_the_machines_memory(failure):
                return self._machine_out_of_memory(stage)
            # The candidate's process runs beside the reference's from the start and could
            # signal or starve it; a task whose reference dies on its own shows up in
            # `forge tasks --lint`, which runs no candidate.
            return Stop(
                CRASHED,
                f"the reference process failed while the candidate's was running ({failure.message}); "
                "if the task's reference crashes on its own, `forge tasks --lint` shows it",
                stage=stage,
            )
        tail = failure.log_tail
        if failure.kind == "timeout":
            return Stop(TIMEOUT, f"{stage}: {failure.message}; the process group was killed{self.bounds_reached()}",
                        stage=stage, log_tail=tail)  # fmt: skip
        if failure.kind == "oversized":
            return Stop(INCORRECT, f"{stage}: {failure.message}", stage=stage, log_tail=tail)
        if failure.kind in ("protocol", "limit"):
            return Stop(REJECTED, f"{stage}: {failure.message}", stage=stage, log_tail=tail)
        over = self._killed_over_its_memory_limit()
        if over:
            return Stop(REJECTED, f"{stage}: {over}", stage=stage, log_tail=tail)
        last = _last_line(tail)
        return Stop(CRASHED, f"{stage}: {failure.message}{self.bounds_reached()}", f"last output: {last}" if last else "",
                    stage=stage, log_tail=tail)  # fmt: skip

    def _killed_over_its_memory_limit(self) -> str:
        """Why the crashed candidate runner was killed for its memory ('' if it was not): the kernel killed
        one of its processes at the group's hard limit, or the group was charged beyond the limit. The
        host's watch reads every 50 ms and the hard limit lies 1 GiB above the limit: an allocation that
        crosses both between two readings on a loaded machine is killed by the kernel, and that kill was a
        crash in the verdict (CI, 2026-11-29)."""
        if "memory" not in self.groups:
            return ""
        group, limit = self.groups["memory"], self.memory_limit() / 2**30
        peak = group.peak() / 2**30
        if not group.killed_for_memory() and peak <= limit:
            return ""
        held = (f"{peak:.1f} GiB of memory at their peak, more than the {limit:.1f} GiB allowed" if peak > limit
                else f"more than the {limit:.1f} GiB of memory allowed")  # fmt: skip
        return f"its processes held {held}{self.bounds_reached()}"


def _over_budget(folders: list[str], pids: list[int]) -> str:
    """Why the candidate must die for what it wrote where the host sees it ('' while within budget): the
    files under its folders, and those its processes hold open unlinked there."""
    used = isolation.bytes_under(folders) + isolation.bytes_held_unlinked(pids, folders)
    if used > isolation.WRITE_BUDGET_BYTES:
        return (
            f"it wrote {used / 2**20:.0f} MiB into its caches and folder (files it holds open unlinked too), more than the "
            f"{isolation.WRITE_BUDGET_BYTES / 2**20:.0f} MiB allowed; the process group was killed"
        )
    return ""


def _last_line(text: str) -> str:
    lines = [line for line in (text or "").splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


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
