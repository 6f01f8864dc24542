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


def pytest_collection_modifyitems(config, items):
    if HAS_GPU:
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session", autouse=True)
def _isolated_caches(tmp_path_factory):
    """Compiled extensions and Triton caches go to a per-session folder, not the user's."""
    root = tmp_path_factory.mktemp("caches")
    os.environ.setdefault("TORCH_EXTENSIONS_DIR", str(root / "torch_extensions"))
    os.environ.setdefault("TRITON_CACHE_DIR", str(root / "triton"))


@pytest.fixture(autouse=True)
def forge_home(tmp_path, monkeypatch):
    """Every test gets its own FORGE_HOME, and no LLM settings leak in from the environment."""
    home = tmp_path / "forge-home"
    monkeypatch.setenv("FORGE_HOME", str(home))
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "FORGE_MODEL"):
        monkeypatch.delenv(name, raising=False)
    return home


def cpu_eval(candidate: str, task: str = "scale_add", **options):
    """Evaluate tests/candidates/<candidate>.py against tests/tasks/<task>.py on the CPU at small size."""
    opts = {"device": "cpu", "size": "small", "timeout": 60.0, **options}
    return evaluate(str(TASKS / f"{task}.py"), str(CANDIDATES / f"{candidate}.py"), EvalOptions(**opts))


def gpu_eval(candidate: str, task: str = "scale_add", **options):
    opts = {"device": "cuda", "size": "default", "timeout": 300.0, **options}
    return evaluate(str(TASKS / f"{task}.py"), str(CANDIDATES / f"{candidate}.py"), EvalOptions(**opts))
