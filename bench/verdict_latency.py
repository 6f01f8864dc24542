"""Verdict latency per backend: how long forge takes to judge a candidate, cold and warm.

For one task (swiglu by default) it evaluates a Triton, a CUDA C++ (load_inline) and a CuPy
candidate, each in a fresh process, twice: first with empty compiler caches (cold: Triton's JIT,
nvcc through ninja, NVRTC), then again with the caches the first run left (warm). It records the
status, the verdict's own duration and the wall time of the whole command. Results go to
--out as JSON; the lines printed are the figures.

    python bench/verdict_latency.py                   # on a GPU machine
    python bench/verdict_latency.py --device cpu --backends triton   # dry run on the CPU
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "bench"))

from eval_repeatability import commit, run_verdict  # noqa: E402

CANDIDATES = {
    "triton": os.path.join(REPO, "bench", "kernels", "{task}.py"),
    "cuda": os.path.join(REPO, "bench", "backends", "{task}_cuda.py"),
    "cupy": os.path.join(REPO, "bench", "backends", "{task}_cupy.py"),
}


def evaluate(task: str, candidate: str, device: str, caches: str, timeout: float) -> dict:
    # Cold and warm are about these folders: every candidate's builds go to FORGE_SANDBOX_CACHE (the
    # compilers' own variables are never given to a candidate), and so does the torch.compile baseline,
    # which a cold verdict measures and a warm one reads from the cache (bench/baseline_cache.py).
    env = dict(os.environ)
    for name in ("FORGE_SANDBOX_CACHE", "TRITON_CACHE_DIR", "TORCH_EXTENSIONS_DIR", "CUPY_CACHE_DIR"):
        env[name] = os.path.join(caches, name.lower())
    verdict, wall = run_verdict(task, candidate, "--device", device, timeout=timeout, env=env)
    wall = round(wall, 2)
    if verdict["status"] == "error":
        return verdict | {"wall_s": wall}
    keep = ("status", "reasons", "speedup", "candidate_ms", "reference_ms", "duration_s")
    return {k: verdict.get(k) for k in keep} | {
        "wall_s": wall,
        "device": (verdict.get("environment") or {}).get("device_name"),
        "isolation": (verdict.get("environment") or {}).get("isolation"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="swiglu")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--backends", nargs="+", default=list(CANDIDATES))
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--out", default=os.path.join(REPO, "bench", "results"))
    args = parser.parse_args()
    task = os.path.join(REPO, "tasks", f"{args.task}.py")
    rows, device = [], args.device
    for backend in args.backends:
        candidate = CANDIDATES[backend].format(task=args.task)
        with tempfile.TemporaryDirectory(prefix=f"forge-latency-{backend}-") as caches:
            for phase in ("cold", "warm"):
                row = {
                    "backend": backend,
                    "phase": phase,
                    **evaluate(task, candidate, args.device, caches, args.timeout),
                }
                device = row.get("device") or device
                rows.append(row)
                print(
                    f"{backend:7s} {phase}: {row['status']:14s} verdict {row.get('duration_s')} s, "
                    f"wall {row['wall_s']} s, speedup {row.get('speedup')}  {'; '.join(row.get('reasons') or [])[:200]}",
                    flush=True,
                )
    stamp = datetime.date.today().isoformat()
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"verdict-latency-{str(device).replace(' ', '_')}-{stamp}.json")
    with open(path, "w") as f:
        meta = {"date": stamp, "commit": commit(), "device": device, "task": args.task}
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
