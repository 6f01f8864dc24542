"""Running the evaluator from the control side."""

from __future__ import annotations

import os

from forge_sandbox import EvalOptions, Verdict, evaluate
from forge_sandbox.taskfile import TaskError


class EvaluationError(ValueError):
    """The evaluation could not start: a bad task or an unusable device. One line."""


def profile_dir() -> str:
    """Where Nsight Compute reports are kept, for the user to open in Nsight Compute."""
    from forge.config import forge_home

    return os.path.join(forge_home(), "profiles")


def check_device(device: str) -> None:
    if device == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise EvaluationError("no CUDA device is visible here; use --device cpu to run on the CPU")


def run_eval(
    task: str,
    candidate: str,
    *,
    device: str = "cuda",
    size: str = "auto",
    timeout: float = 600.0,
    trials: int = 5,
    profile: bool = False,
    compile_mode: str = "default",
) -> Verdict:
    """Evaluate one candidate; raise EvaluationError for problems that are not the candidate's.
    ``compile_mode`` "none" leaves out the torch.compile baseline."""
    check_device(device)
    options = EvalOptions(
        device=device,
        size=size,
        timeout=timeout,
        trials=trials,
        profile=profile,
        profile_dir=profile_dir(),
        compile_baseline=compile_mode != "none",
        compile_mode=compile_mode if compile_mode != "none" else "default",
    )
    try:
        return evaluate(task, candidate, options)
    except TaskError as exc:
        raise EvaluationError(str(exc)) from None


def compile_baseline(verdict: dict) -> dict:
    """The verdict's torch.compile baseline: ``{"ms", "iqr_ms", "mode", "cached", ...}`` when it was measured,
    ``{"ms": None, "reason", "mode"}`` when torch.compile could not run the reference, and ``{}`` for a
    verdict recorded before forge measured it."""
    return (verdict.get("baselines") or {}).get("compile") or {}


def torch_ops_text(torch_ops: dict) -> str:
    """The PyTorch operators a candidate's forward ran, most frequent first: ``aten.mm x2, aten.add x1``."""
    ranked = sorted(torch_ops.items(), key=lambda item: (-(item[1] or 0), str(item[0])))
    return ", ".join(f"{name} x{count}" for name, count in ranked)
