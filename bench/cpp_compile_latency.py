"""A C++ candidate's compile stage with and without torch/extension.h precompiled (precompiled_header).

Each run evaluates a load_inline candidate in a fresh process (`python -m forge_sandbox eval`) with a
source of its own (a comment with a fresh number: no build of it is cached) and reads the verdict's
stage_seconds: "compile" (the candidate's import, its build among it) and "start" (where the host builds
a missing header). Three modes, all against one fresh cache folder: without the header
(FORGE_PRECOMPILED_HEADER=0), the first run with it (the header is built), and later runs with it.

    python bench/cpp_compile_latency.py                      # the CPU: a C++ softmax, SMALL shapes
    python bench/cpp_compile_latency.py --runs 3 --device cuda
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import secrets
import statistics
import tempfile

from eval_repeatability import REPO, commit, run_verdict

CANDIDATE = os.path.join(REPO, "tests", "candidates", "honest_cpp_softmax.py")
TASK = os.path.join(REPO, "tests", "tasks", "softmax_wide.py")


def one(source: str, folder: str, env: dict, device: str, timeout: float) -> dict:
    path = os.path.join(folder, f"cpp_candidate_{secrets.token_hex(4)}.py")
    with open(path, "w") as f:
        f.write(source + f"\n# run {secrets.token_hex(8)}\n")
    verdict, wall = run_verdict(TASK, path, "--device", device, timeout=timeout, env=env)
    stages = verdict.get("stage_seconds") or {}
    return {"status": verdict.get("status"), "compile_s": stages.get("compile"), "start_s": stages.get("start"),
            "wall_s": round(wall, 1)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--runs", type=int, default=2, help="runs per mode after the header's first")
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--out", default=os.path.join(REPO, "bench", "results"))
    args = parser.parse_args()
    with open(CANDIDATE) as f:
        source = f.read()
    rows = []
    with tempfile.TemporaryDirectory(prefix="cpp-compile-") as folder:
        env = {**os.environ, "FORGE_SANDBOX_CACHE": os.path.join(folder, "cache")}
        for mode, extra, runs in (("no header", {"FORGE_PRECOMPILED_HEADER": "0"}, args.runs),
                                  ("header built", {}, 1), ("header ready", {}, args.runs)):  # fmt: skip
            for _ in range(runs):
                row = {"mode": mode, **one(source, folder, {**env, **extra}, args.device, args.timeout)}
                rows.append(row)
                print(json.dumps(row), flush=True)
    summary = {}
    for mode in ("no header", "header built", "header ready"):
        figures = [r["compile_s"] for r in rows if r["mode"] == mode and r["compile_s"] is not None]
        summary[mode] = statistics.median(figures) if figures else None
    if summary["no header"] and summary["header ready"]:
        summary["ratio"] = round(summary["no header"] / summary["header ready"], 2)
    print("median compile stage (s):", json.dumps(summary))
    day = datetime.date.today().isoformat()
    out = os.path.join(args.out, f"cpp-compile-{args.device}-{day}.json")
    os.makedirs(args.out, exist_ok=True)
    with open(out, "w") as f:
        json.dump({"commit": commit(), "date": day, "device": args.device, "candidate": os.path.relpath(CANDIDATE, REPO),
                   "task": os.path.relpath(TASK, REPO), "runs": rows, "median_compile_s": summary}, f, indent=1)  # fmt: skip
    print("wrote", out)


if __name__ == "__main__":
    main()
