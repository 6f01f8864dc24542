"""Timing repeatability: evaluate the honest kernel of every bundled task N times, each in a fresh process.

For each task it records eager PyTorch ms, candidate ms and speedup (medians
over the runs) and the coefficient of variation of each across the runs (the
goal is <= 2% on a GPU), plus the wall time of each verdict. Results go to
bench/results/repeatability-<device>-<date>.json and a Markdown table beside it.

    python bench/eval_repeatability.py                    # on a GPU machine
    python bench/eval_repeatability.py --device cpu --runs 2 --tasks swiglu   # dry run on the CPU
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cv(values: list[float]) -> float | None:
    if len(values) < 2 or statistics.mean(values) == 0:
        return None
    return statistics.stdev(values) / statistics.mean(values)


def commit() -> str:
    try:
        return subprocess.check_output(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, text=True).strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def run_verdict(
    task: str, candidate: str, *flags: str, timeout: float, env: dict | None = None, progress: bool = False
) -> tuple[dict, float]:
    """`python -m forge_sandbox eval` in a fresh process, as a GPU worker runs it: the verdict (or an
    error record when there is none) and the command's wall time in seconds. The bench scripts share it.
    ``progress``: each stage's start and seconds go to stderr as they happen (``--verbose``), so that a
    run stopped at its time limit still says where its time went."""
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (os.path.join(REPO, "sandbox"), env.get("PYTHONPATH")) if p)
    cmd = [sys.executable, "-m", "forge_sandbox", "eval", task, candidate, *flags, *(["--verbose"] if progress else [])]
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=None if progress else subprocess.PIPE, text=True,
                          cwd=REPO, env=env, timeout=timeout)  # fmt: skip
    wall = time.perf_counter() - start
    if proc.returncode == 2 or not proc.stdout.strip():
        return {"status": "error", "reasons": [(proc.stderr or "").strip()[-500:] or "see its output above"]}, wall
    return json.loads(proc.stdout), wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--size", default="auto", help="auto: full sizes on a GPU, SMALL on the CPU")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tasks", nargs="*", help="task names (default: every bundled task)")
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--out", default=os.path.join(REPO, "bench", "results"))
    args = parser.parse_args()
    sys.path.insert(0, os.path.join(REPO, "sandbox"))
    names = args.tasks or sorted(
        f[:-3] for f in os.listdir(os.path.join(REPO, "tasks")) if f.endswith(".py") and not f.startswith("_")
    )
    rows, environment = [], {}
    for name in names:
        task = os.path.join(REPO, "tasks", f"{name}.py")
        kernel = os.path.join(REPO, "bench", "kernels", f"{name}.py")
        runs = []
        for _ in range(args.runs):
            verdict, wall = run_verdict(
                task, kernel, "--device", args.device, "--size", args.size, timeout=args.timeout
            )
            environment = verdict.get("environment") or environment
            runs.append(
                {k: verdict.get(k) for k in ("status", "reasons", "reference_ms", "candidate_ms", "speedup")}
                | {"wall_s": round(wall, 2)}
            )
        passed = [r for r in runs if r["status"] == "passed"]
        row = {"task": name, "runs": runs, "passed": len(passed)}
        for key in ("reference_ms", "candidate_ms", "speedup"):
            values = [r[key] for r in passed]
            row[key] = statistics.median(values) if values else None
            row[f"{key}_cv"] = cv(values)
        row["verdict_wall_s"] = statistics.median(r["wall_s"] for r in runs)
        rows.append(row)
        print(_line(row), flush=True)
    stamp = datetime.date.today().isoformat()
    device = environment.get("device_name", args.device)
    meta = {
        "date": stamp,
        "commit": commit(),
        "device": device,
        "environment": environment,
        "runs": args.runs,
        "size": args.size,
    }
    os.makedirs(args.out, exist_ok=True)
    base = os.path.join(args.out, f"repeatability-{device.replace(' ', '_')}-{stamp}")
    with open(base + ".json", "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
    with open(base + ".md", "w") as f:
        f.write(
            f"# Timing repeatability\n\n{device}, {stamp}, commit {meta['commit']}, {args.runs} runs per task, size {args.size}\n\n"
        )
        f.write(
            "| task | passed | eager ms | candidate ms | speedup | CV eager | CV candidate | CV speedup | s per verdict |\n|---|---|---|---|---|---|---|---|---|\n"
        )
        for row in rows:
            f.write(_markdown_row(row))
    print(f"wrote {base}.json and .md")


def _fmt(x, pct=False) -> str:
    if x is None:
        return "-"
    return f"{100 * x:.2f}%" if pct else f"{x:.4g}"


def _line(row: dict) -> str:
    return (
        f"{row['task']:24s} passed {row['passed']}  eager {_fmt(row['reference_ms'])} ms  cand {_fmt(row['candidate_ms'])} ms  "
        f"speedup {_fmt(row['speedup'])}  CV cand {_fmt(row['candidate_ms_cv'], True)}  CV speedup {_fmt(row['speedup_cv'], True)}"
    )


def _markdown_row(row: dict) -> str:
    cells = [
        row["task"],
        f"{row['passed']}/{len(row['runs'])}",
        _fmt(row["reference_ms"]),
        _fmt(row["candidate_ms"]),
        _fmt(row["speedup"]),
        _fmt(row["reference_ms_cv"], True),
        _fmt(row["candidate_ms_cv"], True),
        _fmt(row["speedup_cv"], True),
        _fmt(row["verdict_wall_s"]),
    ]
    return "| " + " | ".join(cells) + " |\n"


if __name__ == "__main__":
    main()
