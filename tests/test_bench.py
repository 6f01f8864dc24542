"""`forge bench`: KernelBench's metrics over a folder of tasks."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from conftest import CANDIDATES, TASKS
from fake_llm import FakeLLM, answer
from forge.cli import main
from forge.suite import TaskResult, metrics


def test_metrics_count_failures_in_the_denominators():
    results = [
        TaskResult("a", "r1", True, 2.5, 0.1, 10),
        TaskResult("b", "r2", True, 1.2, 0.1, 10),
        TaskResult("c", "r3", True, 0.5, 0.1, 10),
        TaskResult("d", "r4", False, None, 0.1, 10),
    ]
    m = metrics(results)
    assert m["correctness_rate"] == 0.75 and m["fast_0"] == 0.75
    assert m["fast_1"] == 0.5 and m["fast_1.5"] == 0.25 and m["fast_2"] == 0.25
    assert m["geomean_speedup"] == pytest.approx((2.5 * 1.2 * 0.5) ** (1 / 3))
    assert m["cost_per_task_usd"] == pytest.approx(0.1)


def test_bench_over_a_folder_prints_the_table_and_writes_json(tmp_path):
    folder = tmp_path / "level"
    folder.mkdir()
    shutil.copy(TASKS / "scale_add.py", folder / "scale_add.py")
    shutil.copy(TASKS / "bad_missing_model.py", folder / "broken.py")
    honest = (CANDIDATES / "honest_triton.py").read_text()
    out = tmp_path / "bench.json"
    with FakeLLM(coder=[answer(honest)]) as server:
        args = ["bench", str(folder), "--model", "m", "--base-url", server.base_url, "--device", "cpu"]
        result = CliRunner().invoke(main, args + ["--rounds", "1", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "fast_1" in result.output and "correct 1/2" in result.output
    data = json.loads(out.read_text())
    assert data["metrics"]["tasks"] == 2 and data["metrics"]["correct"] == 1
    broken = next(t for t in data["tasks"] if t["task"] == "broken")
    assert not broken["correct"] and "missing Model" in broken["error"]
    assert len(server.calls("coder")) == 1, "no LLM call is spent on a malformed task"
