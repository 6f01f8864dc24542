"""The schema is pinned: a change must come as a new, named migration."""

from __future__ import annotations

from forge.store import MIGRATIONS, Store

COLUMNS = {
    "tasks": ["id", "name", "path", "source", "created_at"],
    "runs": [
        "id", "task_id", "task_name", "task_path", "model", "judge_model", "base_url", "backend", "device", "size",
        "settings", "status", "stop_reason", "rounds_done", "best_candidate_id", "best_speedup", "active_s",
        "cost_usd", "unpriced_calls", "prompt_tokens", "completion_tokens", "environment", "forge_version",
        "started_at", "finished_at",
    ],
    "sources": ["hash", "code"],
    "llm_calls": [
        "id", "run_id", "round", "role", "mode", "model", "messages", "response", "parsed", "prompt_tokens",
        "completion_tokens", "reasoning_tokens", "cached_tokens", "cost_usd", "duration_s", "error", "created_at",
    ],
    "candidates": ["id", "run_id", "round", "attempt", "source_hash", "parent_id", "llm_call_id", "backend", "created_at"],
    "evaluations": [
        "id", "candidate_id", "status", "reasons", "candidate_ms", "reference_ms", "speedup", "device_name",
        "torch_version", "verdict", "created_at", "compile_ms", "speedup_vs_compile", "own_share",
    ],
    "rounds": ["run_id", "round", "best_candidate_id", "best_speedup", "improved", "feedback", "finished_at"],
}  # fmt: skip


def test_columns_are_pinned(tmp_path):
    store = Store(str(tmp_path / "forge.db"))
    for table, columns in COLUMNS.items():
        assert [c.name for c in store.db[table].columns] == columns, table


def test_migrations_apply_once_and_are_recorded(tmp_path):
    path = str(tmp_path / "forge.db")
    Store(path)
    store = Store(path)  # a second open applies nothing twice
    names = [row["name"] for row in store.db["_migrations"].rows]
    assert names == [fn.__name__ for fn in MIGRATIONS]


def test_sources_are_content_addressed(tmp_path):
    store = Store(str(tmp_path / "forge.db"))
    task = store.add_task("t.py", "class Model: pass")
    run = store.create_run(task_id=task, task_name="t", settings="{}")
    a = store.add_candidate(run, 1, 1, "same code", None, None, "triton")
    b = store.add_candidate(run, 2, 1, "same code", a, None, "triton")
    assert a != b and store.db["sources"].count == 1
    assert store.candidate(b)["code"] == "same code"
