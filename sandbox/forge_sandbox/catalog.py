"""Describing and linting task files, each loaded in a runner process (never in the host)."""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field

from forge_sandbox.host import RunnerFailure, RunnerProcess


@dataclass
class TaskInfo:
    path: str
    name: str
    ok: bool
    error: str = ""
    doc: str = ""
    inputs: list[str] = field(default_factory=list)
    configs: int = 0
    flops: float | None = None
    bytes: float | None = None
    warnings: list[str] = field(default_factory=list)
    environment: dict = field(default_factory=dict)  # the device's facts, when asked for (probe=True)


def task_files(directory: str) -> list[str]:
    """Task files in a directory: every *.py except private ones, sorted by name."""
    return sorted(
        os.path.join(directory, name)
        for name in os.listdir(directory)
        if name.endswith(".py") and not name.startswith(("_", "."))
    )


def inspect_tasks(
    paths: list[str],
    size: str = "default",
    lint: bool = False,
    device: str = "cpu",
    timeout: float = 120.0,
    probe: bool = False,
) -> list[TaskInfo]:
    """Load each task in a runner; a task that crashes or hangs costs that runner, not the listing.

    With ``probe``, each good task's record also carries the device's facts, read by the
    same runner (one process start instead of two, before a run's first round).
    """
    workdir = tempfile.mkdtemp(prefix="forge-tasks-")
    runner = None
    results = []
    try:
        for path in paths:
            name = os.path.splitext(os.path.basename(path))[0]
            if runner is None:
                runner = RunnerProcess("reference", workdir, device)
            try:
                reply, _ = runner.request(
                    {"op": "inspect", "task": os.path.abspath(path), "size": size, "lint": lint}, timeout
                )
            except RunnerFailure as failure:
                runner.close()
                runner = None
                results.append(TaskInfo(path, name, False, error=f"{path}: loading it {failure.message}"))
                continue
            if not reply["ok"]:
                error = reply["error"] if reply.get("kind") == "task" else f"{path}: {reply.get('error')}"
                results.append(TaskInfo(path, name, False, error=error))
                continue
            fields = {k: reply[k] for k in ("doc", "inputs", "configs", "flops", "bytes", "warnings")}
            if probe:
                try:
                    fields["environment"] = runner.request({"op": "hello"}, timeout)[0]["environment"]
                except (RunnerFailure, KeyError) as failure:
                    results.append(TaskInfo(path, name, False, error=f"probing the device failed: {failure}"))
                    continue
            results.append(TaskInfo(path, name, True, **fields))
    finally:
        if runner is not None:
            runner.close()
        shutil.rmtree(workdir, ignore_errors=True)
    return results


def probe_device(device: str, timeout: float = 120.0) -> dict:
    """The device's facts and the software versions, read in a runner (the host never touches CUDA)."""
    workdir = tempfile.mkdtemp(prefix="forge-probe-")
    runner = RunnerProcess("reference", workdir, device)
    try:
        reply, _ = runner.request({"op": "hello"}, timeout)
        return reply["environment"]
    finally:
        runner.close()
        shutil.rmtree(workdir, ignore_errors=True)
