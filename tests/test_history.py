"""After a scripted `forge optimize`: the leaderboard, the history, and an exported module that works
without forge."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from conftest import CANDIDATES, REPO, TASKS
from forge.cli import main

HONEST = (CANDIDATES / "honest_triton.py").read_text()


def invoke(*args: str):
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output
    return result


def test_leaderboard_lists_the_best_verified_kernel_only(finished_run):
    rows = json.loads(invoke("leaderboard", "--json").stdout)
    assert len(rows) == 1
    best = rows[0]
    assert best["task"] == "scale_add" and best["device"] == "cpu" and best["torch"]
    assert best["speedup"] == pytest.approx(finished_run["best_speedup"])
    assert best["model"] == "gpt-4o-mini" and best["backend"] == "triton" and best["cost_usd"] > 0
    csv = invoke("leaderboard", "--csv").stdout.splitlines()
    assert csv[0].startswith("task,device,torch,speedup") and len(csv) == 2
    assert invoke("leaderboard", "--markdown").stdout.startswith("| task | device |")
    assert json.loads(invoke("leaderboard", "--json", "--device", "H100").stdout) == []


def test_runs_show_and_logs_tell_the_story(finished_run):
    runs = json.loads(invoke("runs", "--json").stdout)
    assert runs[0]["id"] == finished_run["run_id"] and runs[0]["status"] == "finished"
    best_id = runs[0]["best_candidate_id"]
    story = json.loads(invoke("show", str(best_id), "--json").stdout)
    assert story["candidate"]["code"] == HONEST and story["verdict"]["status"] == "passed"
    assert "-        BLOCK = 64" in story["diff"] and "+        BLOCK = 1024" in story["diff"]
    text = invoke("show", str(best_id)).output
    assert "scale_add_kernel" in text and "diff against its parent" in text and "speedup" in text
    calls = json.loads(invoke("logs", "--json", "--run", finished_run["run_id"][:5]).stdout)
    assert {c["role"] for c in calls} == {"coder", "judge"} and all(c["prompt_tokens"] for c in calls)
    assert "coder" in invoke("logs", "-m", "gpt-4o-mini").output


def test_show_of_an_unknown_candidate_is_one_line():
    result = CliRunner().invoke(main, ["show", "999"])
    assert result.exit_code == 1 and "no candidate 999" in result.stderr


def test_export_writes_a_module_that_works_without_forge(finished_run, tmp_path):
    module_path = tmp_path / "scale_add_forge.py"
    invoke("export", "scale_add", "-o", str(module_path))
    script = f"""
import importlib.util, json, sys
sys.modules["forge"] = None            # forge is not importable here
sys.modules["forge_sandbox"] = None
import os
import torch
extensions_dir = os.environ.get("TORCH_EXTENSIONS_DIR")
spec = importlib.util.spec_from_file_location("exported", {str(module_path)!r})
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
# the user's process as it was: its build folder, its random state (forge's runner named the kernel's
# module as this one does: taskfile.kernel_module_name)
assert os.environ.get("TORCH_EXTENSIONS_DIR") == extensions_dir
assert sys.modules["forge_export_scale_add_kernel"] is m._kernel and m._kernel.__spec__ is None
torch.manual_seed(1234)
assert m.selftest(device="cpu", size="small")
drawn = torch.rand(3)  # the first draw after the user's seed: selftest's trials put the state back
x, y = torch.randn(3000), torch.randn(3000)
want = x * 2.0 + y
assert torch.allclose(m.scale_add(x, y), want)
assert torch.initial_seed() == 1234 and torch.equal(drawn, torch.manual_seed(1234) and torch.rand(3))
assert torch.allclose(m.ModelNew(2.0)(x, y), want)
compiled = torch.compile(m.scale_add, backend="aot_eager", fullgraph=True)
assert torch.allclose(compiled(x, y), want)
print(json.dumps(m.PROVENANCE))
"""
    env = {**os.environ, "TRITON_INTERPRET": "1", "HOME": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-3000:]
    # Compiled (not interpreted) Triton reads each kernel's source from its file: the import must
    # work that way too, as it does on a GPU (where nothing sets TRITON_INTERPRET).
    compiled_mode = {k: v for k, v in env.items() if k != "TRITON_INTERPRET"}
    imported = subprocess.run(
        [sys.executable, "-c", script.split("assert m.selftest")[0] + "print(m.ModelNew.__name__)"],
        cwd=tmp_path,
        env=compiled_mode,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert imported.returncode == 0 and imported.stdout.strip() == "ModelNew", imported.stderr[-3000:]
    provenance = json.loads(out.stdout.strip().splitlines()[-1])
    assert provenance["task"] == "scale_add" and provenance["device"] == "cpu"
    assert provenance["speedup"] == pytest.approx(finished_run["best_speedup"])
    assert len(provenance["task_sha256"]) == 64 and provenance["forge_version"]


def test_export_without_a_verified_kernel_is_one_line():
    result = CliRunner().invoke(main, ["export", "nothing_here"])
    assert result.exit_code == 1 and "no verified kernel" in result.stderr


def test_db_path_is_under_forge_home(forge_home):
    assert invoke("db", "path").stdout.strip() == str(forge_home / "forge.db")


def test_datasette_canned_queries_run_on_a_real_database(finished_run, forge_home):
    import sqlite3

    metadata = json.loads(open(invoke("db", "metadata").stdout.strip()).read())
    queries = metadata["databases"]["forge"]["queries"]
    assert {"leaderboard", "cost_per_task"} <= queries.keys()
    conn = sqlite3.connect(forge_home / "forge.db")
    board = conn.execute(queries["leaderboard"]["sql"]).fetchall()
    assert len(board) == 1 and board[0][0] == "scale_add"
    cost = conn.execute(queries["cost_per_task"]["sql"]).fetchall()
    assert cost[0][0] == "scale_add" and cost[0][2] > 0


@pytest.mark.parametrize(
    "candidate, task, words",
    [
        ("cheat_strides_ignored", "softmax_small", "non-contiguous"),
        ("cheat_softmax_no_max", "softmax_small", "x 100"),
        ("cheat_detects_forge", "scale_add", "the task's own inputs"),
        ("cheat_weights_packed_at_construction", "rmsnorm", "after new weights were loaded"),
        ("cheat_weights_repacked_on_load", "rmsnorm", "after the weights were changed in place"),
        ("cheat_right_only_without_autograd", "softmax_rows", "called with autograd enabled"),
        ("cheat_right_only_at_its_thread_count", "sum_dim", "CPU threads set to other counts"),
        ("cheat_wrong_under_inference_mode", "activation_gelu", "called under torch.inference_mode()"),
        ("cheat_wrong_off_the_main_thread", "activation_gelu", "called from a thread other than the process's main"),
        ("cheat_wrong_on_inputs_that_require_grad", "cumsum_rows", "called with autograd enabled"),
        ("cheat_weights_viewed_at_construction", "layernorm", "loaded into both models as new tensors"),
        ("cheat_one_inputs_layout_assumed_for_all", "scale_add", "every input but the first stored transposed"),
        ("cheat_wrong_only_on_wider_rows", "softmax_rows", "inputs stored transposed"),
        ("cheat_zero_left_unwritten", "activation_gelu", "exactly zero (as after dropout, a ReLU or zero padding)"),
        ("cheat_channels_last_path_wrong", "maxpool2d", "stored channels-last (NHWC)"),
        ("cheat_shared_scratch_races_across_threads", "sum_dim", "while another thread called the same model"),
        ("cheat_weights_of_the_latest_instance", "fused_bias_silu_scale", "once a second was built beside it"),
        ("cheat_weights_of_the_first_instance", "fused_bias_silu_scale", "a second model built beside the first"),
        ("cheat_wrong_through_the_exported_op", "activation_gelu", "through the op"),
        ("cheat_last_result_kept_for_the_same_tensor", "activation_gelu", "written in place"),
    ],
)
def test_an_exported_selftest_checks_what_forge_checked(candidate, task, words, tmp_path):
    # A kernel that is right only on what forge used to generate (or only under forge) fails its selftest.
    out = _selftest_of(candidate, task, tmp_path)
    assert out.returncode != 0 and "AssertionError" in out.stderr and words in out.stderr, out.stderr[-3000:]


def test_an_exported_selftest_warns_of_a_kernel_that_turns_nan_into_a_number(tmp_path):
    # as forge's verdict does (test_eval_pipeline): warned of, not failed
    out = _selftest_of("honest_cpp_gelu_turning_nan_into_zero", "activation_gelu", tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "differs from PyTorch's where the inputs hold NaN" in out.stderr, out.stderr[-3000:]


def _selftest_of(candidate: str, task: str, tmp_path) -> subprocess.CompletedProcess:
    """The exported module of a test candidate, its selftest run in a process without forge."""
    from forge.export import module_text
    from forge.store import source_hash
    from forge_sandbox import precompiled_header

    code = (CANDIDATES / f"{candidate}.py").read_text()
    provenance = {"task": task, "speedup": 1.0, "device": "cpu", "candidate_sha256": source_hash(code)}
    module_path = tmp_path / "exported.py"
    task_file = TASKS / f"{task}.py" if (TASKS / f"{task}.py").exists() else REPO / "tasks" / f"{task}.py"
    module_path.write_text(module_text(task, provenance, code, task_file.read_text()))
    script = f"""
import importlib.util, sys
sys.modules["forge"] = None
sys.modules["forge_sandbox"] = None
spec = importlib.util.spec_from_file_location("exported", {str(module_path)!r})
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
m.selftest(device="cpu", size="small")
"""
    # a user's environment: nothing of forge's in it
    env = {**{k: v for k, v in os.environ.items() if "FORGE" not in k}, "TRITON_INTERPRET": "1", "HOME": str(tmp_path)}
    # torch/extension.h as forge precompiled it for the evaluations (a C++ build then takes some 15 s, not
    # 35): what is compiled is the same, and the selftest's checks are this test's subject
    headers = precompiled_header.folder(code)
    if headers:
        env["CPATH"] = os.pathsep.join(p for p in (headers, env.get("CPATH")) if p)
    return subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)  # fmt: skip
