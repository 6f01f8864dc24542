"""The optimization loop: task -> coder -> sandbox -> judge -> store, round after round.

This is the one place where the stages meet. Each round asks the coder for K
candidates (in parallel), evaluates each as it arrives (one at a time: one
device), keeps the best verified kernel so far (a slower or failed round is a
regression, and the next round starts again from the best), and asks the judge
for the one thing to do next. Every LLM call, candidate and verdict is written
to the store as it happens, and each finished round is a checkpoint that
``--resume`` continues from.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass

from forge import __version__
from forge.agents import Coder, Judge, describe_failure
from forge.config import OptimizeSettings, forge_home
from forge.llm import CallRecord, LLMClient
from forge.prompts import backend_rules, load_templates
from forge.store import Store, now
from forge_sandbox import EvalOptions, evaluate
from forge_sandbox.catalog import inspect_tasks, probe_device
from forge_sandbox.device_facts import describe as describe_device
from forge_sandbox.taskfile import TaskError, resolve_size

# Which failure to diagnose when a round has several: the one that got furthest.
FAILURE_RANK = {"incorrect": 5, "runtime_error": 4, "timeout": 3, "crashed": 3, "compile_error": 2, "rejected": 1}


class OptimizeError(ValueError):
    """The run cannot start or continue (bad task, unknown run); one line."""


@dataclass
class Best:
    candidate_id: int
    code: str
    verdict: dict

    @property
    def speedup(self) -> float:
        return self.verdict["speedup"]


@dataclass
class Attempt:
    round: int
    index: int
    status: str  # a verdict status, or "no_code" / "llm_error"
    detail: str = ""
    candidate_id: int | None = None
    code: str | None = None
    verdict: dict | None = None


@dataclass
class RunSummary:
    run_id: str
    status: str
    stop_reason: str
    rounds_done: int
    best_speedup: float | None
    best_path: str | None
    cost_usd: float
    unpriced_calls: int
    prompt_tokens: int
    completion_tokens: int
    wall_s: float
    best_speedup_vs_compile: float | None = None  # the best kernel's, over the task's reference under torch.compile

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


class Optimizer:
    def __init__(self, store: Store, settings: OptimizeSettings, display, run_id: str, task_path: str) -> None:
        self.store = store
        self.settings = settings
        self.display = display
        self.run_id = run_id
        self.task_path = task_path
        with open(task_path) as f:
            self.task_source = f.read()
        templates = load_templates()
        self.coder = Coder(LLMClient(settings.coder), templates["coder"], settings.temperature)
        self.judge = Judge(LLMClient(settings.judge), templates)
        self.rules = backend_rules(settings.backend)
        self.run_dir = os.path.join(forge_home(), "runs", run_id)
        os.makedirs(self.run_dir, exist_ok=True)
        self.resumed = False
        self.best: Best | None = None
        self.feedback: dict | None = None  # what the coder is told next round, besides the best kernel
        self.facts = ""

    # -- setup ----------------------------------------------------------------------------

    @classmethod
    def start(cls, store: Store, settings: OptimizeSettings, task_path: str, display) -> Optimizer:
        if not os.path.isfile(task_path):
            raise OptimizeError(f"{task_path}: no such task file")
        with open(task_path) as f:
            source = f.read()
        task_id = store.add_task(task_path, source)
        saved = dataclasses.asdict(settings)
        for side in ("coder", "judge"):
            saved[side].pop("api_key", None)  # never store secrets
        run_id = store.create_run(
            task_id=task_id,
            task_name=os.path.splitext(os.path.basename(task_path))[0],
            task_path=os.path.abspath(task_path),
            model=settings.coder.model,
            judge_model=settings.judge.model,
            base_url=settings.coder.base_url,
            backend=settings.backend,
            device=settings.device,
            size=settings.size,
            settings=json.dumps(saved),
            forge_version=__version__,
        )
        return cls(store, settings, display, run_id, task_path)

    @classmethod
    def resume(cls, store: Store, run_id: str, settings: OptimizeSettings, display) -> Optimizer:
        run = store.run(run_id)
        if run is None:
            raise OptimizeError(f"no run {run_id!r} (see forge runs)")
        if run["status"] == "finished":
            raise OptimizeError(f"run {run['id']} already finished ({run['stop_reason']})")
        task_path = run["task_path"]
        if not os.path.isfile(task_path):
            raise OptimizeError(f"{task_path}: the run's task file is gone")
        optimizer = cls(store, settings, display, run["id"], task_path)
        # The task as it was when the run started, whatever the file holds now.
        optimizer.task_source = store.db["tasks"].get(run["task_id"])["source"]
        optimizer.resumed = True
        rounds = store.rounds(run["id"])
        if rounds:
            last = rounds[-1]
            if last["best_candidate_id"] is not None:
                row = store.candidate(last["best_candidate_id"])
                evaluation = store.latest_evaluation(last["best_candidate_id"])
                optimizer.best = Best(row["id"], row["code"], json.loads(evaluation["verdict"]))
            optimizer.feedback = json.loads(last["feedback"]) if last["feedback"] else None
        store.update_run(run["id"], status="running")
        return optimizer

    # -- the loop ---------------------------------------------------------------------------

    def run(self) -> RunSummary:
        started = time.monotonic()
        run = self.store.run(self.run_id)
        active_before = run.get("active_s") or 0.0
        s = self.settings
        size = self._size()
        if not self.resumed:
            # A malformed task fails here, in one line, before any LLM call is paid for.
            (info,) = inspect_tasks([self.task_path], size=size, device=s.device, probe=True)
            if not info.ok:
                self.store.update_run(self.run_id, status="failed", stop_reason=info.error, finished_at=now())
                raise OptimizeError(info.error)
            env = info.environment
        else:
            env = probe_device(s.device)
        self.store.update_run(self.run_id, environment=json.dumps(env), size=size)
        self.facts = describe_device(env)
        self.display.started(self.run_id, run["task_name"], s, env)
        stop_reason = ""
        try:
            first = run["rounds_done"] + 1
            stale = self._stale_rounds()
            for round_ in range(first, s.rounds + 1):
                stop_reason = self._limit_reached(time.monotonic() - started + active_before)
                if stop_reason:
                    break
                attempts = self._round(round_, size)
                improved = self._keep_best(attempts)
                stale = 0 if improved else stale + 1
                last_round = round_ == s.rounds or stale >= s.patience
                feedback = None if last_round else self._judge(round_, attempts)
                self.feedback = feedback
                self.store.finish_round(
                    self.run_id,
                    round_,
                    self.best.candidate_id if self.best else None,
                    self.best.speedup if self.best else None,
                    improved,
                    feedback,
                )
                # active time is a checkpoint too, so that --max-time survives a kill -9
                self.store.update_run(self.run_id, active_s=active_before + time.monotonic() - started)
                self.display.round_done(round_, self.best.speedup if self.best else None, self.store.run(self.run_id))
                if stale >= s.patience:
                    stop_reason = f"no improvement in {s.patience} rounds"
                    break
            else:
                stop_reason = f"{s.rounds} rounds done"
        except KeyboardInterrupt:
            self.store.update_run(
                self.run_id, status="interrupted", active_s=active_before + time.monotonic() - started
            )
            raise
        best_path = self._write_best()
        self.store.update_run(
            self.run_id,
            status="finished",
            stop_reason=stop_reason,
            finished_at=now(),
            active_s=active_before + time.monotonic() - started,
        )
        return self._summary(best_path, time.monotonic() - started)

    def _size(self) -> str:
        return resolve_size(self.settings.size, self.settings.device, self.task_path)

    def _stale_rounds(self) -> int:
        stale = 0
        for row in self.store.rounds(self.run_id):
            stale = 0 if row["improved"] else stale + 1
        return stale

    def _limit_reached(self, elapsed: float) -> str:
        run = self.store.run(self.run_id)
        if self.settings.max_cost_usd is not None and run["cost_usd"] >= self.settings.max_cost_usd:
            return f"cost limit ${self.settings.max_cost_usd:g} reached"
        if self.settings.max_time_s is not None and elapsed >= self.settings.max_time_s:
            return f"time limit {self.settings.max_time_s:g} s reached"
        return ""

    def _round(self, round_: int, size: str) -> list[Attempt]:
        s = self.settings
        history = self._history()
        self.display.round_started(round_, s.candidates)
        attempts = []
        pool = ThreadPoolExecutor(max_workers=s.candidates)
        futures: dict = {}
        try:
            futures = {
                pool.submit(
                    self.coder.write,
                    task_source=self.task_source,
                    device_facts=self.facts,
                    backend_rules=self.rules,
                    history=history,
                ): k
                for k in range(1, s.candidates + 1)
            }
            # Evaluate each candidate as soon as it arrives, while the others are still being written.
            for future in as_completed(futures):
                k = futures[future]
                try:
                    record, code = future.result()
                except Exception as exc:  # an answer the SDK could not even parse: one failed attempt
                    record, code = (
                        CallRecord(model=s.coder.model, messages=[], error=f"{type(exc).__name__}: {exc}"),
                        None,
                    )
                del futures[future]
                call_id = self.store.log_call(self.run_id, round_, "coder", "generate", record)
                if code is None:
                    status = "llm_error" if record.text == "" else "no_code"
                    attempts.append(Attempt(round_, k, status, record.error or ""))
                    self.display.attempt(round_, k, status, record.error or "")
                    continue
                attempts.append(self._evaluate(round_, k, code, call_id, size))
        except KeyboardInterrupt:
            for future in [f for f in futures if f.done() and not f.cancelled()]:
                if future.exception() is None:  # paid for: keep it on record
                    self.store.log_call(self.run_id, round_, "coder", "generate", future.result()[0])
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown(wait=False)
        return sorted(attempts, key=lambda a: a.index)

    def _evaluate(self, round_: int, k: int, code: str, call_id: int, size: str) -> Attempt:
        parent = self.best.candidate_id if self.best else None
        candidate_id = self.store.add_candidate(self.run_id, round_, k, code, parent, call_id, self.settings.backend)
        path = os.path.join(self.run_dir, f"round{round_:02d}_{k}.py")
        with open(path, "w") as f:
            f.write(code)
        self.display.attempt(round_, k, "evaluating", "")
        options = EvalOptions(
            device=self.settings.device,
            size=size,
            timeout=self.settings.eval_timeout_s,
            profile=self.settings.profile,
            profile_dir=os.path.join(self.run_dir, "profiles"),
        )
        try:
            verdict = evaluate(self.task_path, path, options, task_source=self.task_source).to_dict()
        except TaskError as exc:
            raise OptimizeError(str(exc)) from None
        self.store.add_evaluation(candidate_id, verdict)
        detail = f"{verdict['speedup']:.3g}x" if verdict["status"] == "passed" else "; ".join(verdict["reasons"])[:200]
        self.display.attempt(round_, k, verdict["status"], detail)
        return Attempt(round_, k, verdict["status"], detail, candidate_id, code, verdict)

    def _keep_best(self, attempts: list[Attempt]) -> bool:
        """Keep the fastest verified kernel; anything slower or failing is a regression we revert."""
        passed = [a for a in attempts if a.status == "passed"]
        if not passed:
            return False
        top = max(passed, key=lambda a: a.verdict["speedup"])
        if self.best is None or top.verdict["speedup"] > self.best.speedup:
            self.best = Best(top.candidate_id, top.code, top.verdict)
            return True
        return False

    def _judge(self, round_: int, attempts: list[Attempt]) -> dict | None:
        """Ask the judge for the next step: optimize the best kernel, or repair this round's best failure."""
        failures = [a for a in attempts if a.verdict and a.status != "passed"]
        any_passed = any(a.status == "passed" for a in attempts)
        if any_passed and self.best is not None:
            mode, code, verdict = "optimize", self.best.code, self.best.verdict
        elif failures:
            worst = max(failures, key=lambda a: FAILURE_RANK.get(a.status, 0))
            mode, code, verdict = "repair", worst.code, worst.verdict
        else:
            # No code came back at all: tell the coder that, without spending a judge call.
            reasons = "; ".join(a.detail for a in attempts if a.detail)
            return {"mode": "no_code", "reasons": reasons}
        ask = self.judge.optimize if mode == "optimize" else self.judge.repair
        try:
            records = ask(task_source=self.task_source, candidate_source=code, verdict=verdict, device_facts=self.facts)
        except Exception as exc:  # a malformed answer the SDK could not parse: no advice, the run goes on
            records = [CallRecord(model=self.settings.judge.model, messages=[], error=f"{type(exc).__name__}: {exc}")]
        for record in records:
            self.store.log_call(self.run_id, round_, "judge", mode, record)
        advice = records[-1].parsed
        self.display.judged(round_, mode, advice, records[-1].error)
        feedback = {"mode": mode, "advice": advice}
        if mode == "repair":
            feedback.update(failed_code=code, failure=describe_failure(verdict))
        return feedback

    def _history(self) -> str:
        """What the coder hears about earlier rounds: the best kernel, and the judge's advice or the failure."""
        parts = []
        if self.best is not None:
            v = self.best.verdict
            parts.append(
                f"\n## The best verified kernel so far ({v['speedup']:.3g}x over eager PyTorch: "
                f"{v['candidate_ms']} ms vs {v['reference_ms']} ms)\nStart from it.\n```python\n{self.best.code}```"
            )
        fb = self.feedback or {}
        advice = fb.get("advice") or {}
        if fb.get("mode") == "optimize" and advice:
            parts.append(
                f"\n## The judge's analysis of it\nBottleneck: {advice['bottleneck']}\nEvidence: {advice['evidence']}\n"
                f"Make exactly this change next: {advice['next_optimization']}"
            )
        elif fb.get("mode") == "repair":
            parts.append(f"\n## Your last attempt failed\n```python\n{fb['failed_code']}```\n{fb['failure']}")
            if advice:
                parts.append(f"\n## The judge's diagnosis\n{advice['critical_issue']}\nFix: {advice['fix_hint']}")
        elif fb.get("mode") == "no_code":
            parts.append(f"\n## Your last answer could not be used\n{fb['reasons']}")
        return "\n".join(parts) + ("\n" if parts else "")

    def _write_best(self) -> str | None:
        if self.best is None:
            return None
        path = os.path.join(self.run_dir, "best.py")
        with open(path, "w") as f:
            f.write(self.best.code)
        return path

    def _summary(self, best_path: str | None, wall_s: float) -> RunSummary:
        run = self.store.run(self.run_id)
        return RunSummary(
            run_id=self.run_id,
            status=run["status"],
            stop_reason=run["stop_reason"] or "",
            rounds_done=run["rounds_done"],
            best_speedup=run["best_speedup"],
            best_path=best_path,
            cost_usd=run["cost_usd"],
            unpriced_calls=run["unpriced_calls"],
            prompt_tokens=run["prompt_tokens"],
            completion_tokens=run["completion_tokens"],
            wall_s=round(wall_s, 2),
            best_speedup_vs_compile=self.best.verdict.get("speedup_vs_compile") if self.best else None,
        )
