"""Everything forge does, on record in one SQLite file (through sqlite-utils).

The schema only moves forward: each change is a named migration function,
applied once, in order, and recorded in the ``_migrations`` table. Never edit
a migration that has shipped; append a new one.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import uuid

import sqlite_utils


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def source_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


# -- migrations -----------------------------------------------------------------------

MIGRATIONS = []


def migration(fn):
    MIGRATIONS.append(fn)
    return fn


@migration
def m001_initial(db: sqlite_utils.Database) -> None:
    db["tasks"].create({"id": str, "name": str, "path": str, "source": str, "created_at": str}, pk="id")
    db["runs"].create(
        {
            "id": str,
            "task_id": str,
            "task_name": str,
            "task_path": str,
            "model": str,
            "judge_model": str,
            "base_url": str,
            "backend": str,
            "device": str,
            "size": str,
            "settings": str,  # JSON: rounds, candidates, patience, limits...
            "status": str,  # running | finished | interrupted | failed
            "stop_reason": str,
            "rounds_done": int,
            "best_candidate_id": int,
            "best_speedup": float,
            "active_s": float,  # seconds spent running, summed over resumes
            "cost_usd": float,
            "unpriced_calls": int,
            "prompt_tokens": int,
            "completion_tokens": int,
            "environment": str,  # JSON, from the device
            "forge_version": str,
            "started_at": str,
            "finished_at": str,
        },
        pk="id",
        foreign_keys=[("task_id", "tasks", "id")],
    )
    db["sources"].create({"hash": str, "code": str}, pk="hash")
    db["llm_calls"].create(
        {
            "id": int,
            "run_id": str,
            "round": int,
            "role": str,  # coder | judge
            "mode": str,  # generate | repair | optimize
            "model": str,
            "messages": str,  # JSON list of chat messages sent
            "response": str,
            "parsed": str,  # JSON: the judge's validated advice
            "prompt_tokens": int,
            "completion_tokens": int,
            "reasoning_tokens": int,
            "cached_tokens": int,
            "cost_usd": float,
            "duration_s": float,
            "error": str,
            "created_at": str,
        },
        pk="id",
        foreign_keys=[("run_id", "runs", "id")],
    )
    db["candidates"].create(
        {
            "id": int,
            "run_id": str,
            "round": int,
            "attempt": int,
            "source_hash": str,
            "parent_id": int,
            "llm_call_id": int,
            "backend": str,
            "created_at": str,
        },
        pk="id",
        foreign_keys=[("run_id", "runs", "id"), ("source_hash", "sources", "hash"), ("llm_call_id", "llm_calls", "id")],
    )
    db["evaluations"].create(
        {
            "id": int,
            "candidate_id": int,
            "status": str,
            "reasons": str,  # JSON list
            "candidate_ms": float,
            "reference_ms": float,
            "speedup": float,
            "device_name": str,
            "torch_version": str,
            "verdict": str,  # JSON: the whole verdict
            "created_at": str,
        },
        pk="id",
        foreign_keys=[("candidate_id", "candidates", "id")],
    )
    db["rounds"].create(
        {
            "run_id": str,
            "round": int,
            "best_candidate_id": int,
            "best_speedup": float,
            "improved": int,
            "feedback": str,  # JSON: what the judge told the coder for the next round
            "finished_at": str,
        },
        pk=("run_id", "round"),
        foreign_keys=[("run_id", "runs", "id")],
    )
    db["llm_calls"].create_index(["run_id"])
    db["candidates"].create_index(["run_id"])
    db["evaluations"].create_index(["candidate_id"])


@migration
def m002_compile_baseline(db: sqlite_utils.Database) -> None:
    """Each evaluation's second baseline and its split: the task's reference under torch.compile (ms, and
    the candidate's speedup over it) and the share of the forward's time in the candidate's own kernels.
    Rows from before are filled from their stored verdict where it has the figures (NULL otherwise)."""
    for column in ("compile_ms", "speedup_vs_compile", "own_share"):
        db["evaluations"].add_column(column, float)
    db.execute(
        """
        update evaluations set
          compile_ms = json_extract(verdict, '$.baselines.compile.ms'),
          speedup_vs_compile = json_extract(verdict, '$.speedup_vs_compile'),
          own_share = json_extract(verdict, '$.own_share')
        where json_valid(verdict)
        """
    )


def migrate(db: sqlite_utils.Database) -> None:
    applied = set()
    if db["_migrations"].exists():
        applied = {row["name"] for row in db["_migrations"].rows}
    for fn in MIGRATIONS:
        if fn.__name__ not in applied:
            with db.conn:
                fn(db)
                db["_migrations"].insert({"name": fn.__name__, "applied_at": now()}, pk="name")


# -- the store --------------------------------------------------------------------------


class Store:
    """forge's database: runs, LLM calls, candidates, evaluations, rounds."""

    def __init__(self, path: str) -> None:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        self.path = path
        self.db = sqlite_utils.Database(path)
        self.db.conn.execute("PRAGMA journal_mode=WAL")  # readers (datasette, forge logs) never block a run
        migrate(self.db)

    def add_task(self, path: str, source: str) -> str:
        task_id = source_hash(source)
        name = os.path.splitext(os.path.basename(path))[0]
        self.db["tasks"].insert(
            {"id": task_id, "name": name, "path": os.path.abspath(path), "source": source, "created_at": now()},
            pk="id",
            ignore=True,
        )
        return task_id

    def create_run(self, **fields) -> str:
        run_id = uuid.uuid4().hex[:12]
        row = {
            "id": run_id,
            "status": "running",
            "rounds_done": 0,
            "active_s": 0.0,
            "cost_usd": 0.0,
            "unpriced_calls": 0,
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "started_at": now(),
            **fields,
        }
        self.db["runs"].insert(row, pk="id")
        return run_id

    def run(self, run_id: str) -> dict | None:
        rows = list(self.db["runs"].rows_where("id = ? or id like ?", [run_id, run_id + "%"], limit=2))
        return rows[0] if len(rows) == 1 else None

    def update_run(self, run_id: str, **fields) -> None:
        self.db["runs"].update(run_id, fields)

    def log_call(self, run_id: str, round_: int, role: str, mode: str, result) -> int:
        """Record one LLM call (an ``llm.CallRecord``) and add its tokens and cost to the run."""
        row = {
            "run_id": run_id,
            "round": round_,
            "role": role,
            "mode": mode,
            "model": result.model,
            "messages": json.dumps(result.messages),
            "response": result.text,
            "parsed": json.dumps(result.parsed) if result.parsed is not None else None,
            "prompt_tokens": result.prompt_tokens,
            "completion_tokens": result.completion_tokens,
            "reasoning_tokens": result.reasoning_tokens,
            "cached_tokens": result.cached_tokens,
            "cost_usd": result.cost_usd,
            "duration_s": round(result.duration_s, 3),
            "error": result.error,
            "created_at": now(),
        }
        with self.db.conn:
            call_id = self.db["llm_calls"].insert(row).last_pk
            self.db.execute(
                "update runs set prompt_tokens = prompt_tokens + ?, completion_tokens = completion_tokens + ?, "
                "cost_usd = cost_usd + ?, unpriced_calls = unpriced_calls + ? where id = ?",
                [
                    result.prompt_tokens or 0,
                    result.completion_tokens or 0,
                    result.cost_usd or 0.0,
                    1 if result.cost_usd is None and result.prompt_tokens is not None else 0,
                    run_id,
                ],
            )
        return call_id

    def add_candidate(self, run_id: str, round_: int, attempt: int, code: str, parent_id, call_id, backend: str) -> int:
        digest = source_hash(code)
        with self.db.conn:
            self.db["sources"].insert({"hash": digest, "code": code}, pk="hash", ignore=True)
            return (
                self.db["candidates"]
                .insert(
                    {
                        "run_id": run_id,
                        "round": round_,
                        "attempt": attempt,
                        "source_hash": digest,
                        "parent_id": parent_id,
                        "llm_call_id": call_id,
                        "backend": backend,
                        "created_at": now(),
                    }
                )
                .last_pk
            )

    def add_evaluation(self, candidate_id: int, verdict: dict) -> int:
        env = verdict.get("environment") or {}
        compiled = (verdict.get("baselines") or {}).get("compile") or {}
        return (
            self.db["evaluations"]
            .insert(
                {
                    "candidate_id": candidate_id,
                    "status": verdict["status"],
                    "reasons": json.dumps(verdict.get("reasons", [])),
                    "candidate_ms": verdict.get("candidate_ms"),
                    "reference_ms": verdict.get("reference_ms"),
                    "speedup": verdict.get("speedup"),
                    "device_name": env.get("device_name"),
                    "torch_version": env.get("torch"),
                    "verdict": json.dumps(verdict),
                    "created_at": now(),
                    "compile_ms": compiled.get("ms"),
                    "speedup_vs_compile": verdict.get("speedup_vs_compile"),
                    "own_share": verdict.get("own_share"),
                }
            )
            .last_pk
        )

    def finish_round(self, run_id: str, round_: int, best_id, best_speedup, improved: bool, feedback) -> None:
        with self.db.conn:
            self.db["rounds"].insert(
                {
                    "run_id": run_id,
                    "round": round_,
                    "best_candidate_id": best_id,
                    "best_speedup": best_speedup,
                    "improved": int(improved),
                    "feedback": json.dumps(feedback) if feedback is not None else None,
                    "finished_at": now(),
                },
                replace=True,
            )
            self.db["runs"].update(
                run_id, {"rounds_done": round_, "best_candidate_id": best_id, "best_speedup": best_speedup}
            )

    def rounds(self, run_id: str) -> list[dict]:
        return list(self.db["rounds"].rows_where("run_id = ?", [run_id], order_by="round"))

    def candidate(self, candidate_id: int) -> dict | None:
        rows = list(
            self.db.query(
                "select c.*, s.code from candidates c join sources s on s.hash = c.source_hash where c.id = ?",
                [candidate_id],
            )
        )
        return rows[0] if rows else None

    def latest_evaluation(self, candidate_id: int) -> dict | None:
        rows = list(self.db["evaluations"].rows_where("candidate_id = ?", [candidate_id], order_by="id desc", limit=1))
        return rows[0] if rows else None

    def count(self, table: str, run_id: str) -> int:
        if table == "evaluations":
            sql = "select count(*) from evaluations e join candidates c on c.id = e.candidate_id where c.run_id = ?"
        else:
            sql = f"select count(*) from [{table}] where run_id = ?"
        return self.db.execute(sql, [run_id]).fetchone()[0]
