"""`forge bench`: optimize every task in a folder and report KernelBench's metrics."""

from __future__ import annotations

import math
import os
import time
from dataclasses import asdict, dataclass

from forge.config import OptimizeSettings
from forge.evaluation import compile_baseline
from forge.loop import OptimizeError, Optimizer
from forge.store import Store
from forge_sandbox.catalog import task_files

FAST_P = (0.0, 1.0, 1.5, 2.0)


@dataclass
class TaskResult:
    task: str
    run_id: str | None
    correct: bool
    speedup: float | None  # the best verified kernel's, over eager PyTorch
    cost_usd: float
    wall_s: float
    error: str = ""
    speedup_vs_compile: float | None = None  # the same kernel's, over the task's reference under torch.compile
    compile_missing: str = ""  # why a correct task has no torch.compile baseline


def _geomean(values: list[float]) -> float | None:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def metrics(results: list[TaskResult]) -> dict:
    """KernelBench's metrics, over eager PyTorch and over torch.compile: failures count in every denominator
    except the geometric mean's.

    The keys without a suffix are over eager PyTorch; those ending in ``_compile`` are over the task's
    reference under torch.compile. A correct task without a torch.compile baseline (torch.compile could not
    run its reference) counts as not faster in every ``fast_p_compile``, is left out of
    ``geomean_speedup_compile``, and is counted in ``compile_missing``.
    """
    n = len(results)
    correct = [r for r in results if r.correct]
    speedups = [r.speedup for r in correct if r.speedup]
    over_compile = [r.speedup_vs_compile for r in correct if r.speedup_vs_compile]
    out = {
        "tasks": n,
        "correct": len(correct),
        "correctness_rate": len(correct) / n if n else 0.0,
        "geomean_speedup": _geomean(speedups),
        "geomean_speedup_compile": _geomean(over_compile),
        "compile_missing": sum(1 for r in correct if r.speedup_vs_compile is None),
        "cost_per_task_usd": sum(r.cost_usd for r in results) / n if n else 0.0,
        "wall_s_per_task": sum(r.wall_s for r in results) / n if n else 0.0,
    }
    for p in FAST_P:
        out[f"fast_{p:g}"] = sum(1 for r in correct if r.speedup and r.speedup > p) / n if n else 0.0
        out[f"fast_{p:g}_compile"] = sum(1 for s in over_compile if s > p) / n if n else 0.0
    return out


def run_suite(
    store: Store, settings: OptimizeSettings, directory: str, display_factory
) -> tuple[list[TaskResult], dict]:
    results = []
    paths = task_files(directory)
    for path in paths:
        name = os.path.splitext(os.path.basename(path))[0]
        started = time.monotonic()
        display = display_factory()
        try:
            optimizer = Optimizer.start(store, settings, path, display)
            summary = optimizer.run()
            best = optimizer.best.verdict if optimizer.best else {}
            results.append(
                TaskResult(
                    name,
                    summary.run_id,
                    summary.best_speedup is not None,
                    summary.best_speedup,
                    summary.cost_usd,
                    round(time.monotonic() - started, 2),
                    speedup_vs_compile=best.get("speedup_vs_compile"),
                    compile_missing=_compile_missing(best),
                )
            )
        except OptimizeError as exc:  # a malformed task costs its row, not the suite
            results.append(TaskResult(name, None, False, None, 0.0, round(time.monotonic() - started, 2), str(exc)))
        except KeyboardInterrupt:  # the tasks done so far still count, and are reported
            results.append(
                TaskResult(name, None, False, None, 0.0, round(time.monotonic() - started, 2), "interrupted")
            )
            break
        finally:
            display.close()
    return results, metrics(results)


def _compile_missing(verdict: dict) -> str:
    """Why the best kernel has no speedup over torch.compile; "" when it has one or nothing passed."""
    if not verdict or verdict.get("speedup_vs_compile") is not None:
        return ""
    return compile_baseline(verdict).get("reason") or "no torch.compile baseline on record"


def results_json(results: list[TaskResult], summary: dict, settings: OptimizeSettings) -> dict:
    return {
        "metrics": summary,
        "tasks": [asdict(r) for r in results],
        "model": settings.coder.model,
        "backend": settings.backend,
        "device": settings.device,
    }
