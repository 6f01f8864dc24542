"""Reading the record: leaderboard, runs, one candidate's story, LLM calls."""

from __future__ import annotations

import difflib
import json

from forge.store import Store

LEADERBOARD_SQL = """
with ranked as (
  select
    r.task_id, r.task_name as task, e.device_name as device, e.torch_version as torch,
    e.speedup, e.speedup_vs_compile, e.candidate_ms, e.reference_ms, e.compile_ms,
    round(100 * e.own_share, 1) as own_share_pct, r.model, r.backend, r.rounds_done as rounds,
    r.cost_usd as cost_usd, c.id as candidate_id, r.id as run_id, e.created_at as evaluated_at,
    row_number() over (
      partition by r.task_id, e.device_name, e.torch_version order by e.speedup desc, e.id
    ) as rank
  from evaluations e
  join candidates c on c.id = e.candidate_id
  join runs r on r.id = c.run_id
  where e.status = 'passed' and e.speedup is not null
)
select task, device, torch, speedup, speedup_vs_compile, candidate_ms, reference_ms, compile_ms, own_share_pct,
       model, backend, rounds, cost_usd, candidate_id, run_id, task_id, evaluated_at
from ranked where rank = 1
"""

COST_PER_TASK_SQL = """
select r.task_name as task, count(distinct r.id) as runs, round(sum(c.cost_usd), 4) as cost_usd,
  sum(c.cost_usd is null and c.prompt_tokens is not null) as unpriced_calls, sum(c.prompt_tokens) as prompt_tokens,
  sum(c.completion_tokens) as completion_tokens, max(r.best_speedup) as best_speedup
from runs r left join llm_calls c on c.run_id = r.id
group by r.task_name order by cost_usd desc
"""


def leaderboard(store: Store, task: str | None = None, device: str | None = None) -> list[dict]:
    """The best verified speedup per task, per GPU model and torch version (never mixed in one ranking).

    Ranked by the speedup over eager PyTorch; each row also has the winner's speedup over the task's
    reference under torch.compile with that baseline's ``compile_ms`` (None where torch.compile could
    not run the reference), and ``own_share_pct``, the percentage of its forward's time spent in its own
    kernels (None where unknown)."""
    sql, params = f"select * from ({LEADERBOARD_SQL}) where 1 = 1", []
    if task:
        sql += " and task = ?"
        params.append(task)
    if device:
        sql += " and device like ?"
        params.append(f"%{device}%")
    sql += " order by task, device, torch"
    return [dict(row) for row in store.db.query(sql, params)]


def runs(store: Store, limit: int = 20) -> list[dict]:
    sql = """
      select id, task_name as task, model, backend, device, status, stop_reason, rounds_done as rounds,
             best_speedup, best_candidate_id, cost_usd, unpriced_calls, prompt_tokens, completion_tokens,
             started_at, finished_at
      from runs order by started_at desc, rowid desc limit ?
    """
    return [dict(row) for row in store.db.query(sql, [limit])]


def candidate_story(store: Store, candidate_id: int) -> dict | None:
    """A candidate: its source, the diff against its parent, its verdict, and what the judge said of it."""
    row = store.candidate(candidate_id)
    if row is None:
        return None
    parent = store.candidate(row["parent_id"]) if row["parent_id"] else None
    evaluation = store.latest_evaluation(candidate_id)
    verdict = json.loads(evaluation["verdict"]) if evaluation else None
    diff = ""
    if parent is not None:
        diff = "".join(
            difflib.unified_diff(
                parent["code"].splitlines(keepends=True),
                row["code"].splitlines(keepends=True),
                fromfile=f"candidate {parent['id']}",
                tofile=f"candidate {candidate_id}",
            )
        )
    feedback = None
    rounds = store.db["rounds"].rows_where("run_id = ? and round = ?", [row["run_id"], row["round"]])
    for r in rounds:
        feedback = json.loads(r["feedback"]) if r["feedback"] else None
    return {"candidate": row, "parent_id": row["parent_id"], "diff": diff, "verdict": verdict, "feedback": feedback}


def llm_calls(store: Store, run_id: str | None = None, model: str | None = None, limit: int = 20) -> list[dict]:
    sql = """
      select id, run_id, round, role, mode, model, prompt_tokens, completion_tokens, reasoning_tokens,
             cached_tokens, cost_usd, duration_s, error, created_at, response
      from llm_calls where 1 = 1
    """
    params: list = []
    if run_id:
        sql += " and run_id like ?"
        params.append(run_id + "%")
    if model:
        sql += " and model = ?"
        params.append(model)
    sql += " order by id desc limit ?"
    params.append(limit)
    return [dict(row) for row in store.db.query(sql, params)]


def datasette_metadata() -> dict:
    """Datasette metadata with canned queries; the leaderboard is the very query `forge leaderboard` runs."""
    return {
        "title": "forge: kernels, runs and LLM calls",
        "description": "Every run of forge optimize: candidates, verdicts, LLM calls, costs.",
        "databases": {
            "forge": {
                "queries": {
                    "leaderboard": {
                        "title": (
                            "Leaderboard: best verified speedup over eager PyTorch per task, GPU model and torch "
                            "version, with its speedup over torch.compile and its own kernels' share"
                        ),
                        "sql": LEADERBOARD_SQL.strip() + "\norder by task, device, torch",
                    },
                    "cost_per_task": {
                        "title": "Cost per task: LLM spend, tokens and runs",
                        "sql": COST_PER_TASK_SQL,
                    },
                    "failures": {
                        "title": "Why candidates failed, by status",
                        "sql": "select status, count(*) as n from evaluations group by status order by n desc",
                    },
                }
            }
        },
    }
