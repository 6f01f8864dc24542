"""`forge optimize` end to end: the real openai client against a scripted server on 127.0.0.1,
candidates evaluated on the CPU under the Triton interpreter, everything on record in SQLite."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from conftest import CANDIDATES, TASKS
from fake_llm import FakeLLM, answer, judge_answer
from forge.cli import main

TASK = TASKS / "scale_add.py"
HONEST = (CANDIDATES / "honest_triton.py").read_text()
SLOW = HONEST.replace("BLOCK = 1024", "BLOCK = 64")  # correct, 64 interpreted programs instead of 4
FAST = HONEST.replace("BLOCK = 1024", "BLOCK = 4096")  # correct, one program
BROKEN = HONEST.replace("def forward(self, x, y):", "def forward(self, x, y)")  # a syntax error
CHEAT = (CANDIDATES / "cheat_pytorch_fallback.py").read_text()
REPAIR = judge_answer({"critical_issue": "missing colon after def forward", "fix_hint": "add the colon"})
OPTIMIZE = judge_answer(
    {"bottleneck": "launch overhead", "evidence": "64 programs for 4096 elements", "next_optimization": "BLOCK=4096"}
)


def optimize(server: FakeLLM, *args: str):
    base = ["optimize", str(TASK), "--model", "gpt-4o-mini", "--base-url", server.base_url, "--device", "cpu"]
    result = CliRunner().invoke(main, base + ["--llm-timeout", "5", "--retries", "2", "--json", *args])
    summary = json.loads(result.stdout.strip().splitlines()[-1]) if result.stdout.strip() else None
    return result, summary


def db(home) -> sqlite3.Connection:
    conn = sqlite3.connect(home / "forge.db")
    conn.row_factory = sqlite3.Row
    return conn


def statuses(conn, run_id: str) -> list[str]:
    rows = conn.execute(
        "select e.status from evaluations e join candidates c on c.id = e.candidate_id where c.run_id = ? order by c.id",
        [run_id],
    )
    return [r[0] for r in rows]


def reasons(conn, run_id: str) -> list[str]:
    """Each evaluation's reasons, for a failed assertion on statuses to show."""
    rows = conn.execute(
        "select e.reasons from evaluations e join candidates c on c.id = e.candidate_id where c.run_id = ? order by c.id",
        [run_id],
    )
    return [r[0] for r in rows]


def test_compile_error_then_repair_then_correct_then_faster(forge_home):
    with FakeLLM(coder=[answer(BROKEN), answer(SLOW), answer(FAST)], judge=[REPAIR, OPTIMIZE]) as server:
        result, summary = optimize(server, "--rounds", "3")
    assert result.exit_code == 0, result.output
    conn = db(forge_home)
    run_id = summary["run_id"]
    assert statuses(conn, run_id) == ["compile_error", "passed", "passed"], reasons(conn, run_id)
    run = conn.execute("select * from runs where id = ?", [run_id]).fetchone()
    best = conn.execute("select * from candidates where id = ?", [run["best_candidate_id"]]).fetchone()
    assert best["round"] == 3, "the faster round-3 kernel is kept"
    assert best["parent_id"] is not None
    assert summary["best_path"] and open(summary["best_path"]).read() == FAST
    assert run["status"] == "finished" and run["rounds_done"] == 3
    # every call is on record, with tokens and a cost from the price table (gpt-4o-mini is priced)
    calls = conn.execute("select * from llm_calls where run_id = ? order by id", [run_id]).fetchall()
    assert [(c["role"], c["mode"]) for c in calls] == [
        ("coder", "generate"),
        ("judge", "repair"),
        ("coder", "generate"),
        ("judge", "optimize"),
        ("coder", "generate"),
    ]
    assert all(c["prompt_tokens"] and c["cost_usd"] > 0 for c in calls)
    assert run["cost_usd"] == pytest.approx(sum(c["cost_usd"] for c in calls))
    # the judge saw the compiler's complaint; the coder then got the judge's hint and the best kernel
    coder_prompts = [json.loads(c["messages"])[1]["content"] for c in calls if c["role"] == "coder"]
    assert "compile_error" in json.loads(calls[1]["messages"])[1]["content"]
    assert "add the colon" in coder_prompts[1]
    assert "best verified kernel so far" in coder_prompts[2] and "BLOCK=4096" in coder_prompts[2]
    # the device's facts are in the coder's prompt
    assert "device: cpu" in coder_prompts[0]


def test_no_code_and_a_cheat_cost_one_attempt_each_and_are_never_kept(forge_home):
    script = [{"content": "I cannot help with that."}, answer(CHEAT), answer(SLOW)]
    with FakeLLM(coder=script, judge=[REPAIR]) as server:
        result, summary = optimize(server, "--rounds", "3")
    assert result.exit_code == 0, result.output
    conn = db(forge_home)
    assert statuses(conn, summary["run_id"]) == ["rejected", "passed"], reasons(conn, summary["run_id"])
    best = conn.execute(
        "select s.code from runs r join candidates c on c.id = r.best_candidate_id "
        "join sources s on s.hash = c.source_hash where r.id = ?",
        [summary["run_id"]],
    ).fetchone()
    assert best["code"] == SLOW
    first = conn.execute(
        "select error from llm_calls where run_id = ? order by id limit 1", [summary["run_id"]]
    ).fetchone()
    assert "no ```python block" in first["error"]


def test_rate_limits_and_server_errors_are_retried(forge_home):
    script = [{"status": 429}, {"status": 500}, answer(SLOW)]
    with FakeLLM(coder=script) as server:
        result, summary = optimize(server, "--rounds", "1")
        assert len(server.calls("coder")) == 3  # two retries inside one attempt
    assert result.exit_code == 0, result.output
    assert statuses(db(forge_home), summary["run_id"]) == ["passed"], reasons(db(forge_home), summary["run_id"])


def test_a_server_that_never_answers_costs_attempts_not_the_run(forge_home):
    with FakeLLM(coder=[{"delay": 8, "content": "late"}]) as server:
        result, summary = optimize(server, "--rounds", "2", "--llm-timeout", "1", "--retries", "0")
    assert result.exit_code == 1  # no verified kernel, but a clean finish
    assert summary["rounds_done"] == 2 and summary["best_speedup"] is None
    errors = [r["error"] for r in db(forge_home).execute("select error from llm_calls")]
    assert errors == ["timeout: no answer within 1 s"] * 2


def test_no_key_and_no_base_url_is_one_clear_line():
    result = CliRunner().invoke(main, ["optimize", str(TASK), "--model", "m", "--device", "cpu"])
    assert result.exit_code == 1
    assert "OPENAI_API_KEY" in result.stderr and "--base-url" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_resume_after_kill_loses_nothing(forge_home, tmp_path):
    # Round 2's coder call hangs, so the run is surely mid-round when it is killed.
    script = [answer(SLOW), {"delay": 30, "content": "never seen"}, answer(FAST), answer(FAST)]
    with FakeLLM(coder=script, judge=[OPTIMIZE]) as server:
        cmd = [sys.executable, "-m", "forge.cli", "optimize", str(TASK), "--model", "m", "--base-url", server.base_url]
        cmd += ["--device", "cpu", "--rounds", "3", "--llm-timeout", "60", "--retries", "0"]
        env = {**os.environ, "FORGE_HOME": str(forge_home)}
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        run_id = None
        while time.monotonic() < deadline:
            time.sleep(0.2)
            if (forge_home / "forge.db").exists() and len(server.calls("coder")) >= 2:
                run_id = db(forge_home).execute("select id from runs").fetchone()[0]
                break
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert run_id, "the run never reached round 2"
        conn = db(forge_home)
        before = conn.execute("select count(*) from llm_calls").fetchone()[0]
        assert conn.execute("select status from runs").fetchone()[0] == "running"
        assert conn.execute("select count(*) from rounds").fetchone()[0] == 1

        result = CliRunner().invoke(main, ["optimize", "--resume", run_id[:6], "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    conn = db(forge_home)
    run = conn.execute("select * from runs").fetchone()
    assert run["status"] == "finished" and run["rounds_done"] == 3
    assert conn.execute("select count(*) from llm_calls").fetchone()[0] > before  # old calls kept, new ones added
    assert [r[0] for r in conn.execute("select round from rounds order by round")] == [1, 2, 3]
    assert summary["best_speedup"] is not None


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))


def test_markup_in_llm_or_candidate_text_never_crashes_a_run(forge_home):
    raising = HONEST.replace("out = torch.empty_like(x)", 'raise RuntimeError("bad index in out[/] write")')
    hint = judge_answer({"critical_issue": "acc[/] is wrong [bold]", "fix_hint": "use acc[/] [red]"})
    with FakeLLM(coder=[answer(raising), answer(SLOW)], judge=[hint]) as server:
        result, summary = optimize(server, "--rounds", "2")
    assert result.exit_code == 0, result.output
    assert statuses(db(forge_home), summary["run_id"]) == ["runtime_error", "passed"], reasons(
        db(forge_home), summary["run_id"]
    )


def test_calls_to_a_model_without_a_price_are_counted_as_unpriced(forge_home):
    with FakeLLM(coder=[{"content": "no code here"}]) as server:
        base = ["optimize", str(TASK), "--model", "qwen-local", "--base-url", server.base_url, "--device", "cpu"]
        result = CliRunner().invoke(main, base + ["--rounds", "1", "--json"])
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["cost_usd"] == 0 and summary["unpriced_calls"] == 1
