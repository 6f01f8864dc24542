"""Verification at a task's full size: where a verdict's time goes, and how much memory it takes.

At full size a configuration's verification moves hundreds of MB per trial between the reference's
process, the host and the candidate's (the first GPU run, 2026-11-26, never finished one verdict). For
each task it runs one verdict in a fresh process (`python -m forge_sandbox eval --size default`) and
prints its status, each stage's seconds, each configuration's trials and seconds, the wall time and
the largest peak memory of any process the verdict started (RUSAGE_CHILDREN's maxrss). Results go to
--out as JSON.

    python bench/verify_at_full_size.py --device cpu --tasks swiglu       # measurable on the CPU
    python bench/verify_at_full_size.py                                   # on a GPU machine
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import resource
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "bench"))

from eval_repeatability import commit, run_verdict  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--tasks", nargs="*", default=["swiglu"], help="bundled task names")
    parser.add_argument("--candidate", help="one candidate for every task (default: bench/kernels/<task>.py)")
    parser.add_argument("--timeout", type=float, default=1800.0)
    parser.add_argument("--out", default=os.path.join(REPO, "bench", "results"))
    args = parser.parse_args()
    rows = []
    for task in args.tasks:
        candidate = args.candidate or os.path.join(REPO, "bench", "kernels", f"{task}.py")
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        verdict, wall = run_verdict(os.path.join(REPO, "tasks", f"{task}.py"), candidate, "--device", args.device,
                                    "--size", "default", timeout=args.timeout, progress=True)  # fmt: skip
        peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        row = {
            "task": task,
            "candidate": os.path.relpath(candidate, REPO),
            "status": verdict.get("status"),
            "reasons": verdict.get("reasons", [])[:1],
            "wall_s": round(wall, 1),
            "stage_seconds": verdict.get("stage_seconds"),
            "configurations": [
                {k: r.get(k) for k in ("config", "trials", "seconds", "variants_dropped")}
                for r in verdict.get("correctness", [])
            ],
            # the largest of any process so far: a later task's figure is at least an earlier one's
            "peak_rss_gib": round(peak_kib / 2**20, 2) if peak_kib > before else None,
        }
        rows.append(row)
        configs = ", ".join(
            f"config {c['config']}: {c['trials']} trials in {c['seconds']} s" for c in row["configurations"]
        )
        print(f"{task}: {row['status']} in {row['wall_s']} s ({configs}); stages {row['stage_seconds']}; "
              f"largest process {row['peak_rss_gib']} GiB {' '.join(row['reasons'])[:200]}", flush=True)  # fmt: skip
    os.makedirs(args.out, exist_ok=True)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    path = os.path.join(args.out, f"verify-at-full-size-{args.device}-{stamp}.json")
    with open(path, "w") as f:
        json.dump({"device": args.device, "commit": commit(), "date": stamp, "rows": rows}, f, indent=1)
    print(f"written: {path}")


if __name__ == "__main__":
    main()
