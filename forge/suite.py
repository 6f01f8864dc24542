"""`forge bench`: optimize every task in a folder and report KernelBench's metrics."""

from __future__ import annotations

import math
import os
import time
from dataclasses import asdict, dataclass

from forge.config import OptimizeSettings
from forge.loop import OptimizeError, Optimizer
from forge.store import Store
from forge_sandbox.catalog import task_files

FAST_P = (0.0, 1.0, 1.5, 2.0)


@dataclass
class TaskResult:
    task: str
    run_id: str | None
    correct: bool
    speedup: float | None
    cost_usd: float
    wall_s: float
    error: str = ""


def metrics(results: list[TaskResult]) -> dict:
    """KernelBench's metrics: failures count in every denominator except the geometric mean's."""
    n = len(results)
    correct = [r for r in results if r.correct]
    speedups = [r.speedup for r in correct if r.speedup]
    out = {
        "tasks": n,
        "correct": len(correct),
        "correctness_rate": len(correct) / n if n else 0.0,
        "geomean_speedup": math.exp(sum(math.log(s) for s in speedups) / len(speedups)) if speedups else None,
        "cost_per_task_usd": sum(r.cost_usd for r in results) / n if n else 0.0,
        "wall_s_per_task": sum(r.wall_s for r in results) / n if n else 0.0,
    }
    for p in FAST_P:
        out[f"fast_{p:g}"] = sum(1 for r in correct if r.speedup and r.speedup > p) / n if n else 0.0
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
            results.append(
                TaskResult(
                    name,
                    summary.run_id,
                    summary.best_speedup is not None,
                    summary.best_speedup,
                    summary.cost_usd,
                    round(time.monotonic() - started, 2),
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


def results_json(results: list[TaskResult], summary: dict, settings: OptimizeSettings) -> dict:
    return {
        "metrics": summary,
        "tasks": [asdict(r) for r in results],
        "model": settings.coder.model,
        "backend": settings.backend,
        "device": settings.device,
    }
