"""The torch.compile baseline's cache, cold and warm: what the second baseline costs a verdict.

For each task it evaluates the bundled honest kernel twice in fresh processes
against one fresh cache folder: cold (the reference is compiled, warmed up and
timed beside the candidate) and warm (the compiled reference's time comes from
the cache). It prints and writes each verdict's wall time, the compiled and
eager reference times and whether the compile baseline was cached, to
bench/results/baseline-cache-<device>-<date>.json and a Markdown table beside it.

    python bench/baseline_cache.py                                   # on a GPU machine
    python bench/baseline_cache.py --device cpu --tasks softmax_rows   # on the CPU (SMALL shapes)
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import tempfile

from eval_repeatability import REPO, commit, run_verdict

DEFAULT_TASKS = ["softmax_rows", "layernorm", "gemm_fp16", "attention_sdpa"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--size", default="auto", help="auto: full sizes on a GPU, SMALL on the CPU")
    parser.add_argument("--tasks", nargs="*", default=DEFAULT_TASKS)
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--out", default=os.path.join(REPO, "bench", "results"))
    args = parser.parse_args()
    rows, environment = [], {}
    with tempfile.TemporaryDirectory(prefix="baseline-cache-") as cache:
        env = {**os.environ, "FORGE_SANDBOX_CACHE": cache}
        for name in args.tasks:
            task = os.path.join(REPO, "tasks", f"{name}.py")
            kernel = os.path.join(REPO, "bench", "kernels", f"{name}.py")
            for phase in ("cold", "warm"):
                verdict, wall = run_verdict(task, kernel, "--device", args.device, "--size", args.size,
                                            timeout=args.timeout, env=env)  # fmt: skip
                environment = verdict.get("environment") or environment
                compiled = (verdict.get("baselines") or {}).get("compile") or {}
                row = {
                    "task": name,
                    "phase": phase,
                    "status": verdict.get("status"),
                    "wall_s": round(wall, 2),
                    "eager_ms": verdict.get("reference_ms"),
                    "compile_ms": compiled.get("ms"),
                    "cached": compiled.get("cached"),
                    "compile_reason": compiled.get("reason"),
                    "speedup": verdict.get("speedup"),
                    "speedup_vs_compile": verdict.get("speedup_vs_compile"),
                }
                rows.append(row)
                print(json.dumps(row), flush=True)
    device = environment.get("device_name", args.device)
    stamp = datetime.date.today().isoformat()
    os.makedirs(args.out, exist_ok=True)
    base = os.path.join(args.out, f"baseline-cache-{device.replace(' ', '_')}-{stamp}")
    record = {"device": device, "date": stamp, "commit": commit(), "environment": environment, "rows": rows}
    with open(base + ".json", "w") as f:
        json.dump(record, f, indent=1)
    lines = [f"# torch.compile baseline cache, cold and warm: {device}, {stamp}, commit {record['commit']}", "",
             "| task | phase | status | verdict s | eager ms | compile ms | cached |", "|---|---|---|---|---|---|---|"]  # fmt: skip
    for r in rows:
        lines.append(f"| {r['task']} | {r['phase']} | {r['status']} | {r['wall_s']} | {r['eager_ms']} | "
                     f"{r['compile_ms'] if r['compile_ms'] is not None else r['compile_reason']} | {r['cached']} |")  # fmt: skip
    with open(base + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {base}.json and .md", file=sys.stderr)


if __name__ == "__main__":
    main()
