"""Shared fixtures: CPU evaluations of test tasks and candidates, GPU tests skipped without a GPU."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

from forge_sandbox import EvalOptions, evaluate

TESTS = Path(__file__).parent
TASKS = TESTS / "tasks"
CANDIDATES = TESTS / "candidates"
REPO = TESTS.parent

HAS_GPU = torch.cuda.is_available()


def pytest_runtest_logreport(report):
    """A failure's assertion lines as it happens, not only in the summary: a run cut short by a time
    limit (CI's) still says what failed and why."""
    if not report.failed or not hasattr(report, "longreprtext"):
        return
    lines = [line[1:].strip() for line in report.longreprtext.splitlines() if line.startswith("E ")]
    print(f"\nFAILED {report.nodeid} ({report.when}): {' | '.join(lines[:4])[:600]}", flush=True)


def pytest_collection_modifyitems(config, items):
    if HAS_GPU:
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def _run_folder(tmp_path_factory) -> Path:
    """The folder of this test run, which its pytest-xdist workers share (each has a base of its own
    in it)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session", autouse=True)
def _isolated_caches(tmp_path_factory):
    """Compiled extensions and Triton caches go to a folder of this run's, not the user's; its workers
    share it, as concurrent evaluations on one machine share forge's (the precompiled header is built
    once)."""
    root = _run_folder(tmp_path_factory) / "caches"
    root.mkdir(exist_ok=True)
    os.environ.setdefault("TORCH_EXTENSIONS_DIR", str(root / "torch_extensions"))
    os.environ.setdefault("TRITON_CACHE_DIR", str(root / "triton"))
    # Isolated candidates' caches, named as forge's default is: a candidate reads their paths in its
    # environment, and a fixture checks that nothing there names forge.
    os.environ.setdefault("FORGE_SANDBOX_CACHE", str(root / "kernel-sandbox"))


@pytest.fixture(autouse=True)
def forge_home(tmp_path, monkeypatch):
    """Every test gets its own FORGE_HOME, and no LLM settings leak in from the environment."""
    home = tmp_path / "forge-home"
    monkeypatch.setenv("FORGE_HOME", str(home))
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "FORGE_MODEL"):
        monkeypatch.delenv(name, raising=False)
    return home


def cpu_eval(candidate: str, task: str | Path = "scale_add", own_code: bool | None = None, **options):
    """Evaluate tests/candidates/<candidate>.py against tests/tasks/<task>.py (or the task file ``task``,
    a Path) on the CPU at small size.

    With the static check off, the runner's check of forge's own code in the candidate's process
    (own_code) is off too unless ``own_code``: those tests show the host's own defenses, which stand
    behind every check made in that process, and their fixtures rewrite the runner to reach them."""
    opts = {"device": "cpu", "size": "small", "timeout": 60.0, **options}
    opts["own_code_checks"] = own_code if own_code is not None else opts.get("static_checks", True)
    task_file = task if isinstance(task, Path) else TASKS / f"{task}.py"
    return evaluate(str(task_file), str(CANDIDATES / f"{candidate}.py"), EvalOptions(**opts))


def gpu_eval(candidate: str, task: str = "scale_add", **options):
    opts = {"device": "cuda", "size": "default", "timeout": 300.0, **options}
    return evaluate(str(TASKS / f"{task}.py"), str(CANDIDATES / f"{candidate}.py"), EvalOptions(**opts))


@pytest.fixture(scope="session")
def _finished_run_home(tmp_path_factory):
    """The scripted run of ``finished_run``, made once per session in a FORGE_HOME of its own."""
    import json

    from click.testing import CliRunner

    from fake_llm import FakeLLM, answer, judge_answer
    from forge.cli import main

    home = tmp_path_factory.mktemp("finished-run") / "forge-home"
    honest = (CANDIDATES / "honest_triton.py").read_text()
    slow = honest.replace("BLOCK = 1024", "BLOCK = 64")
    cheat = (CANDIDATES / "cheat_pytorch_only.py").read_text()
    advice = judge_answer({"bottleneck": "launches", "evidence": "64 programs", "next_optimization": "BLOCK=1024"})
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FORGE_HOME", str(home))
        for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "FORGE_MODEL"):
            patch.delenv(name, raising=False)
        with FakeLLM(coder=[answer(slow), answer(cheat), answer(honest)], judge=[advice]) as server:
            args = ["optimize", str(TASKS / "scale_add.py"), "--model", "gpt-4o-mini", "--base-url", server.base_url]
            result = CliRunner().invoke(main, args + ["--device", "cpu", "--rounds", "3", "--patience", "3", "--json"])
    assert result.exit_code == 0, result.output
    return home, json.loads(result.stdout.strip().splitlines()[-1])


@pytest.fixture
def finished_run(forge_home, _finished_run_home):
    """A scripted three-round `forge optimize` on the CPU: slow kernel, a cheat, then a faster kernel. Run
    once per session (some 40 s); each test gets a copy of the FORGE_HOME it left, as its own."""
    import shutil

    home, summary = _finished_run_home
    shutil.copytree(home, forge_home, dirs_exist_ok=True)
    return dict(summary)
