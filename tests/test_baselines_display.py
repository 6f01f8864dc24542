"""Both baselines, everywhere results are read: the store, the leaderboard, bench's metrics, the report, the
printed verdict and the judge's prompt show the speedup over eager PyTorch and over torch.compile, and the
share of the forward's time in the candidate's own kernels."""

from __future__ import annotations

import json
import shutil

import pytest
import sqlite_utils
from click.testing import CliRunner
from rich.console import Console

from conftest import CANDIDATES, TASKS, cpu_eval
from fake_llm import FakeLLM, answer, judge_answer
from forge.agents import Judge, describe_timings
from forge.cli import main
from forge.config import LLMSettings
from forge.history import datasette_metadata, leaderboard
from forge.llm import LLMClient
from forge.prompts import load_templates
from forge.render import print_bench, print_leaderboard, print_verdict
from forge.report import build_report
from forge.store import Store, m001_initial, now
from forge.suite import TaskResult, metrics
from forge_sandbox import Verdict

COMPILED = {"ms": 0.5, "iqr_ms": 0.01, "mode": "max-autotune-no-cudagraphs", "cached": True, "measured_at": "x"}
MISSING = {"ms": None, "reason": "torch.compile failed: Unsupported: data-dependent branch", "mode": "default"}


def passed_verdict(**fields) -> dict:
    """A passed verdict as the evaluator writes it: 0.25 ms against 1.0 ms eager and 0.5 ms compiled."""
    verdict = {
        "status": "passed",
        "reasons": [],
        "candidate_ms": 0.25,
        "reference_ms": 1.0,
        "speedup": 4.0,
        "speedup_vs_compile": 2.0,
        "candidate_iqr_ms": 0.002,
        "reference_iqr_ms": 0.01,
        "baselines": {"eager": {"ms": 1.0, "iqr_ms": 0.01}, "compile": dict(COMPILED)},
        "own_share": 0.8125,
        "torch_ops": {"aten.mm": 1, "aten.add": 2},
        "timing": {
            "method": "CUDA events, L2 flushed",
            "repeatability": {"speedup_min": 3.9, "speedup_max": 4.1, "speedup_cv": 0.012, "blocks": 7},
        },
        "environment": {"device_name": "NVIDIA H100 80GB HBM3", "torch": "2.13.0"},
        "candidate": "k.py",
    }
    verdict.update(fields)
    return verdict


def out_of(print_fn, *args) -> str:
    console = Console(record=True, width=250, color_system=None)
    print_fn(console, *args)
    return console.export_text()


# -- the store ------------------------------------------------------------------------------


def test_an_old_database_migrates_forward_and_keeps_its_rows(tmp_path):
    path = str(tmp_path / "forge.db")
    old = sqlite_utils.Database(path)  # as forge wrote it before the compile baseline: m001 alone
    m001_initial(old)
    old["_migrations"].insert({"name": "m001_initial", "applied_at": now()}, pk="name")
    old["tasks"].insert({"id": "t", "name": "scale_add", "path": "scale_add.py", "source": "", "created_at": now()})
    old["runs"].insert({"id": "r", "task_id": "t", "task_name": "scale_add", "model": "m", "started_at": now()})
    old["sources"].insert({"hash": "h", "code": "class ModelNew: pass"})
    old["candidates"].insert({"id": 1, "run_id": "r", "round": 1, "attempt": 1, "source_hash": "h"})
    before = {"status": "passed", "speedup": 3.0, "reference_ms": 0.9, "candidate_ms": 0.3}
    rows = [
        {"candidate_id": 1, "status": "passed", "speedup": 3.0, "verdict": json.dumps(before)},
        {"candidate_id": 1, "status": "passed", "speedup": 4.0, "verdict": json.dumps(passed_verdict())},
        {"candidate_id": 1, "status": "crashed", "verdict": '{"timing": NaN'},  # not JSON: left alone
    ]
    old["evaluations"].insert_all(rows)
    old.conn.close()

    store = Store(path)
    columns = [c.name for c in store.db["evaluations"].columns]
    assert columns[-3:] == ["compile_ms", "speedup_vs_compile", "own_share"]
    kept = list(
        store.db.query("select speedup, compile_ms, speedup_vs_compile, own_share from evaluations order by id")
    )
    assert [r["speedup"] for r in kept] == [3.0, 4.0, None], "every row survives"
    assert (kept[0]["compile_ms"], kept[0]["speedup_vs_compile"], kept[0]["own_share"]) == (None, None, None)
    assert (kept[1]["compile_ms"], kept[1]["speedup_vs_compile"], kept[1]["own_share"]) == (0.5, 2.0, 0.8125)
    assert [r["name"] for r in store.db["_migrations"].rows] == ["m001_initial", "m002_compile_baseline"]
    assert store.db["runs"].count == 1 and store.db["candidates"].count == 1


def test_recording_an_evaluation_fills_both_baselines_and_the_split(tmp_path):
    store, candidate = store_with_candidate(tmp_path)
    row = store.db["evaluations"].get(store.add_evaluation(candidate, passed_verdict()))
    assert (row["reference_ms"], row["compile_ms"]) == (1.0, 0.5)
    assert (row["speedup"], row["speedup_vs_compile"], row["own_share"]) == (4.0, 2.0, 0.8125)
    missing = passed_verdict(speedup_vs_compile=None, own_share=None)
    missing["baselines"]["compile"] = dict(MISSING)
    row = store.db["evaluations"].get(store.add_evaluation(candidate, missing))
    assert (row["compile_ms"], row["speedup_vs_compile"], row["own_share"]) == (None, None, None)


def store_with_candidate(tmp_path, model: str = "gpt-4o-mini") -> tuple[Store, int]:
    store = Store(str(tmp_path / "forge.db"))
    task = store.add_task("scale_add.py", "class Model: pass")
    run = store.create_run(task_id=task, task_name="scale_add", model=model, backend="triton", settings="{}")
    return store, store.add_candidate(run, 1, 1, "class ModelNew: pass", None, None, "triton")


# -- the leaderboard and the report ---------------------------------------------------------------


def test_the_leaderboard_ranks_over_eager_and_shows_torch_compile_and_the_own_share(tmp_path):
    store, first = store_with_candidate(tmp_path, model="<b>gpt</b>\x1b[2J")
    second = store.add_candidate(store.candidate(first)["run_id"], 2, 1, "v2", first, None, "triton")
    store.add_evaluation(first, passed_verdict())  # 4x over eager, 2x over torch.compile
    slower = passed_verdict(speedup=3.0, speedup_vs_compile=2.5, candidate_ms=0.333)
    slower["baselines"]["compile"]["ms"] = 0.8325
    store.add_evaluation(second, slower)  # faster over torch.compile, slower over eager: ranks second

    rows = leaderboard(store)
    assert len(rows) == 1
    best = rows[0]
    assert best["candidate_id"] == first and best["speedup"] == 4.0
    assert (best["speedup_vs_compile"], best["compile_ms"], best["own_share_pct"]) == (2.0, 0.5, 81.3)

    table = out_of(print_leaderboard, rows)
    assert "vs torch.compile" in table and "2x" in table and "81%" in table and "\x1b" not in table

    page = build_report(store)
    assert "speedup vs torch.compile" in page and "<td class='num'>2x</td>" in page and "81% of forward" in page
    assert "&lt;b&gt;gpt&lt;/b&gt;\\x1b[2J" in page and "<b>gpt</b>" not in page  # still escaped

    conn = store.db.conn  # the Datasette canned query is the same ranking, with the same columns
    cursor = conn.execute(datasette_metadata()["databases"]["forge"]["queries"]["leaderboard"]["sql"])
    names = [d[0] for d in cursor.description]
    canned = dict(zip(names, cursor.fetchone()))
    assert canned["speedup_vs_compile"] == 2.0 and canned["own_share_pct"] == 81.3


def test_a_winner_without_a_compile_baseline_shows_a_dash(tmp_path):
    store, candidate = store_with_candidate(tmp_path)
    missing = passed_verdict(speedup_vs_compile=None, own_share=None)
    missing["baselines"]["compile"] = dict(MISSING)
    store.add_evaluation(candidate, missing)
    row = leaderboard(store)[0]
    assert row["speedup_vs_compile"] is None and row["compile_ms"] is None and row["own_share_pct"] is None
    assert "4x" in out_of(print_leaderboard, [row])
    assert "<td class='num'>-</td>" in build_report(store)


def test_forge_leaderboard_json_csv_and_markdown_carry_the_new_columns(tmp_path, forge_home):
    from forge.config import db_path

    store = Store(db_path())
    task = store.add_task("scale_add.py", "class Model: pass")
    run = store.create_run(task_id=task, task_name="scale_add", model="m", backend="triton", settings="{}")
    store.add_evaluation(store.add_candidate(run, 1, 1, "code", None, None, "triton"), passed_verdict())
    runner = CliRunner()
    rows = json.loads(runner.invoke(main, ["leaderboard", "--json"]).stdout)
    assert rows[0]["speedup_vs_compile"] == 2.0 and rows[0]["compile_ms"] == 0.5 and rows[0]["own_share_pct"] == 81.3
    header = runner.invoke(main, ["leaderboard", "--csv"]).stdout.splitlines()[0].split(",")
    assert header[:9] == [
        "task", "device", "torch", "speedup", "speedup_vs_compile", "candidate_ms", "reference_ms", "compile_ms",
        "own_share_pct",
    ]  # fmt: skip
    markdown = runner.invoke(main, ["leaderboard", "--markdown"]).stdout
    assert "| speedup | speedup_vs_compile |" in markdown and "| 2.0 |" in markdown and "| 81.3 |" in markdown


def test_after_a_run_the_leaderboard_and_forge_show_have_both_baselines(finished_run):
    runner = CliRunner()
    best = json.loads(runner.invoke(main, ["leaderboard", "--json"]).stdout)[0]
    assert best["speedup"] > 0 and best["compile_ms"] > 0
    assert best["speedup_vs_compile"] == pytest.approx(best["compile_ms"] / best["candidate_ms"], rel=0.01)
    assert 0 <= best["own_share_pct"] <= 100
    assert finished_run["best_speedup_vs_compile"] == pytest.approx(best["speedup_vs_compile"])
    shown = runner.invoke(main, ["show", str(best["candidate_id"])]).output
    assert "over eager PyTorch" in shown and "over torch.compile (default)" in shown and "own kernels:" in shown


# -- forge bench ------------------------------------------------------------------------------------


def test_bench_metrics_over_both_baselines():
    results = [
        TaskResult("a", "r1", True, 2.5, 0.1, 10, speedup_vs_compile=1.6),
        TaskResult("b", "r2", True, 1.2, 0.1, 10, speedup_vs_compile=0.8),
        TaskResult("c", "r3", True, 3.0, 0.1, 10, compile_missing="torch.compile failed: Unsupported"),
        TaskResult("d", "r4", False, None, 0.1, 10),
    ]
    m = metrics(results)
    # over eager, as before: failures in every denominator
    assert m["fast_0"] == 0.75 and m["fast_1"] == 0.75 and m["fast_1.5"] == 0.5 and m["fast_2"] == 0.5
    assert m["geomean_speedup"] == pytest.approx((2.5 * 1.2 * 3.0) ** (1 / 3))
    # over torch.compile: the task without a compiled baseline is not faster, and is counted
    assert m["fast_0_compile"] == 0.5 and m["fast_1_compile"] == 0.25
    assert m["fast_1.5_compile"] == 0.25 and m["fast_2_compile"] == 0.0
    assert m["geomean_speedup_compile"] == pytest.approx((1.6 * 0.8) ** 0.5)
    assert m["compile_missing"] == 1

    printed = out_of(print_bench, results, m)
    assert "over torch.compile: fast_0 50% · fast_1 25%" in printed
    assert "1 correct task(s) have no torch.compile baseline" in printed and "Unsupported" in printed


def test_bench_metrics_with_no_compile_baseline_at_all():
    m = metrics([TaskResult("a", "r1", True, 2.0, 0.0, 1, compile_missing="not requested")])
    assert m["geomean_speedup"] == pytest.approx(2.0) and m["geomean_speedup_compile"] is None
    assert m["fast_0_compile"] == 0.0 and m["compile_missing"] == 1
    assert metrics([])["fast_1_compile"] == 0.0 and metrics([])["compile_missing"] == 0


def test_forge_bench_writes_the_speedup_over_torch_compile(tmp_path):
    folder = tmp_path / "level"
    folder.mkdir()
    shutil.copy(TASKS / "scale_add.py", folder / "scale_add.py")
    out = tmp_path / "bench.json"
    with FakeLLM(coder=[answer((CANDIDATES / "honest_triton.py").read_text())]) as server:
        args = ["bench", str(folder), "--model", "m", "--base-url", server.base_url, "--device", "cpu"]
        result = CliRunner().invoke(main, args + ["--rounds", "1", "--out", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    task = data["tasks"][0]
    assert task["correct"] and task["speedup_vs_compile"] > 0 and task["compile_missing"] == ""
    assert data["metrics"]["geomean_speedup_compile"] == pytest.approx(task["speedup_vs_compile"])
    assert data["metrics"]["compile_missing"] == 0 and "fast_1_compile" in data["metrics"]
    assert "over torch.compile:" in result.output


# -- the printed verdict and the judge ----------------------------------------------------------------


def test_the_printed_verdict_has_both_speedups_the_split_and_the_operators():
    text = out_of(print_verdict, Verdict(**passed_verdict()))
    assert "speedup 4.000x over eager PyTorch, 2.000x over torch.compile (max-autotune-no-cudagraphs)" in text
    assert "torch.compile 0.5000 ms" in text
    assert "own kernels: 81% of the forward's time" in text
    assert "PyTorch operators in the forward: aten.add x2, aten.mm x1" in text
    assert "from 3.9x to 4.1x across 7 timed blocks, CV 1.2%" in text


def test_the_printed_verdict_says_why_the_compile_baseline_is_missing():
    verdict = passed_verdict(speedup_vs_compile=None, own_share=None, torch_ops={})
    verdict["baselines"]["compile"] = dict(MISSING, reason="torch.compile failed: [bold]x[/]\x1b[31mred")
    text = out_of(print_verdict, Verdict(**verdict))
    assert "speedup 4.000x over eager PyTorch; no torch.compile baseline (default): " in text
    assert "torch.compile failed: [bold]x[/]\\x1b[31mred" in text, "the reason is printed as text, escapes visible"
    assert "\x1b" not in text and "own kernels" not in text and "PyTorch operators" not in text


def test_a_verdict_recorded_before_the_compile_baseline_still_prints():
    old = {k: v for k, v in passed_verdict().items() if k not in ("baselines", "speedup_vs_compile", "own_share")}
    text = out_of(print_verdict, Verdict(**old))
    assert "speedup 4.000x over eager PyTorch; timed with CUDA events" in text and "torch.compile" not in text


def test_the_judge_reads_both_baselines_the_split_and_the_operators():
    verdict = cpu_eval("honest_triton").to_dict()
    assert verdict["status"] == "passed", verdict["reasons"]
    advice = judge_answer({"bottleneck": "b", "evidence": "e", "next_optimization": "n"})
    with FakeLLM(coder=[], judge=[advice]) as server:
        settings = LLMSettings(model="m", base_url=server.base_url, api_key="not-needed")
        judge = Judge(LLMClient(settings), load_templates())
        judge.optimize(task_source="task", candidate_source="code", verdict=verdict, device_facts="cpu")
        prompt = server.calls("judge")[-1]["messages"][-1]["content"]
    compiled = verdict["baselines"]["compile"]
    assert f"torch.compile ({compiled['mode']}) of the reference {compiled['ms']} ms" in prompt
    assert f"speedup {verdict['speedup_vs_compile']}x over torch.compile" in prompt
    assert f"speedup {verdict['speedup']}x over eager PyTorch" in prompt
    assert "own kernels:" in prompt and "PyTorch operators the forward still runs: none" in prompt
    assert f"repeatability: speedup over eager from {verdict['timing']['repeatability']['speedup_min']}x" in prompt


def test_the_judge_hears_why_there_is_no_compile_baseline_and_which_operators_remain():
    verdict = passed_verdict(speedup_vs_compile=None)
    verdict["baselines"]["compile"] = dict(MISSING)
    text = describe_timings(verdict)
    assert "no torch.compile baseline (default): torch.compile failed: Unsupported" in text
    assert "PyTorch operators the forward still runs: aten.add x2, aten.mm x1" in text
    assert "own kernels: 81% of the forward's time" in text
