"""The `forge` command line end to end (click's CliRunner; the evaluator's runners are real processes)."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from conftest import CANDIDATES, HAS_GPU, REPO, TASKS
from forge.cli import main

VERDICT_KEYS = {"status", "reasons", "candidate_ms", "reference_ms", "speedup", "environment"}


def run(*args):
    return CliRunner().invoke(main, list(map(str, args)))


def test_eval_json_prints_exactly_one_object_and_exits_zero_when_passed():
    result = run(
        "eval", TASKS / "scale_add.py", CANDIDATES / "honest_triton.py", "--device", "cpu", "--size", "small", "--json"
    )
    assert result.exit_code == 0, result.output
    verdict = json.loads(result.stdout)  # the whole of stdout is one JSON object
    assert VERDICT_KEYS <= verdict.keys()
    assert verdict["status"] == "passed" and verdict["speedup"] > 0
    assert {"device_name", "torch", "cuda"} <= verdict["environment"].keys()


def test_eval_exits_nonzero_for_anything_but_passed():
    result = run(
        "eval",
        TASKS / "scale_add.py",
        CANDIDATES / "cheat_pytorch_only.py",
        "--device",
        "cpu",
        "--size",
        "small",
        "--json",
    )
    assert result.exit_code == 1
    assert json.loads(result.stdout)["status"] == "rejected"


def test_eval_human_summary():
    result = run("eval", TASKS / "scale_add.py", CANDIDATES / "honest_triton.py", "--device", "cpu", "--size", "small")
    assert result.exit_code == 0
    assert "passed" in result.output and re.search(r"speedup [\d.]+x", result.output)


def test_eval_accepts_a_bundled_task_by_name():
    result = run(
        "eval", "swiglu", REPO / "bench" / "kernels" / "swiglu.py", "--device", "cpu", "--size", "small", "--json"
    )
    assert result.exit_code == 0, result.output


def test_malformed_task_is_one_clear_line():
    result = run(
        "eval", TASKS / "bad_missing_model.py", CANDIDATES / "honest_triton.py", "--device", "cpu", "--size", "small"
    )
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "bad_missing_model.py" in lines[0] and "missing Model" in lines[0]


def test_unknown_task_name_is_one_clear_line():
    result = run("eval", "no_such_task", CANDIDATES / "honest_triton.py", "--device", "cpu")
    assert result.exit_code == 1 and "no bundled task of that name" in result.stderr


@pytest.mark.skipif(HAS_GPU, reason="needs a machine without a GPU")
def test_cuda_without_a_gpu_says_how_to_run_on_the_cpu():
    result = run("eval", TASKS / "scale_add.py", CANDIDATES / "honest_triton.py")
    assert result.exit_code == 1 and "--device cpu" in result.stderr


def test_python_dash_m_forge_is_the_forge_command():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "forge", "tasks"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "softmax_rows" in done.stdout


def test_tasks_lists_the_bundled_tasks():
    result = run("tasks", "--size", "small", "--json")
    assert result.exit_code == 0, result.output
    names = {t["name"] for t in json.loads(result.stdout)}
    assert {"softmax_rows", "gemm_fp16", "attention_sdpa", "conv2d_3x3"} <= names


def test_tasks_flags_malformed_files_and_exits_nonzero():
    result = run("tasks", TASKS, "--size", "small", "--lint")
    assert result.exit_code == 1
    assert "bad_missing_model" in result.output and "does not depend on the inputs" in result.output


def test_forge_eval_keeps_forge_home_out_of_the_candidates_reach(forge_home, tmp_path):
    # forge's store lives in FORGE_HOME: a candidate that could write there could forge a leaderboard.
    # The candidate's environment names nothing of forge's, so the folder is written into its source.
    forge_home.mkdir(parents=True, exist_ok=True)
    source = (CANDIDATES / "cheat_tamper_files.py").read_text()
    start, end = source.index("_targets = ["), source.index("for _folder in _targets:")
    candidate = tmp_path / "tamper.py"
    candidate.write_text(source[:start] + f"_targets = [{str(forge_home)!r}]\n" + source[end:])
    result = run("eval", TASKS / "scale_add.py", candidate, "--device", "cpu", "--json")
    verdict = json.loads(result.output)
    if not verdict["environment"].get("files", "").startswith("read-only"):
        pytest.skip(f"no read-only mounts here: {verdict['environment'].get('files')}")
    assert not (forge_home / "forge_tamper_probe.txt").exists(), "the candidate wrote into FORGE_HOME"
    assert verdict["status"] == "runtime_error", verdict["reasons"]
