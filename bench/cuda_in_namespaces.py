"""Where CUDA stops working inside the candidate's isolation (isolation.py), one piece at a time.

Each probe is a fresh process that initializes CUDA (one small kernel and a
synchronize) after some of the isolation has been applied: the namespaces one
by one, then the file-system restriction, the mount lock and the system call
filter, then all of `settle` as the runner applies it. They run side by side,
each under its own time limit, and the table says which worked, how long CUDA
took to start and the last line of each failure.

    python bench/cuda_in_namespaces.py --out bench/results    # on a GPU machine
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "sandbox"))

from forge_sandbox import isolation  # noqa: E402

CUDA = """
import time, torch
t = time.perf_counter()
torch.zeros(1, device="cuda").add_(1)
torch.cuda.synchronize()
print(f"cuda ok in {time.perf_counter() - t:.2f} s")
"""

# Isolation pieces applied in-process before CUDA starts (under the full namespace prefix).
PIECES = {
    "files": "isolation.restrict_files(own, [], readable, gpu=True)",
    "files+lock": "isolation.restrict_files(own, [], readable, gpu=True); isolation.lock_mounts()",
    "filter": "isolation.filter_system_calls()",
    "filter, local sockets": "isolation.filter_system_calls(local_sockets=True)",
    "settle": "print(isolation.settle(isolation.layout(own, readable, {}, gpu=True)))",
    "settle, local sockets": "print(isolation.settle(isolation.layout(own, readable, {}, gpu=True) | {'local_sockets': True}))",
    "settle, no filter": "print(isolation.settle(isolation.layout(own, readable, {}, gpu=True) | {'filter': False}))",
}


def probes() -> dict[str, list[str]]:
    unshare = "unshare"
    user = [unshare, "--user", "--map-root-user"]
    full, why_not = isolation.isolation_prefix()
    python = [sys.executable, "-c"]
    found = {
        "none": python + [CUDA],
        "user": user + python + [CUDA],
        "user+pid": user + ["--pid", "--fork", "--kill-child", "--mount-proc"] + python + [CUDA],
        "user+net": user + ["--net"] + python + [CUDA],
        "user+ipc": user + ["--ipc"] + python + [CUDA],
        "user+uts": user + ["--uts"] + python + [CUDA],
        "all namespaces": full + python + [CUDA] if full else ["false"],
    }
    sandbox = os.path.join(REPO, "sandbox")
    for name, piece in PIECES.items():
        setup = (
            f"import sys; sys.path.insert(0, {sandbox!r}); from forge_sandbox import isolation\n"
            f"own = {tempfile.mkdtemp(prefix='probe-')!r}; readable = [{sandbox!r}]\n{piece}\n"
        )
        found[f"all namespaces, {name}"] = (full or ["false"]) + python + [setup + CUDA]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--timeout", type=float, default=40.0)
    parser.add_argument("--out", default=os.path.join(REPO, "bench", "results"))
    args = parser.parse_args()
    started, procs = {}, {}
    for name, cmd in probes().items():
        started[name] = time.perf_counter()
        procs[name] = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    rows = []
    for name, proc in procs.items():
        left = max(1.0, args.timeout - (time.perf_counter() - started[name]))
        try:
            out, err = proc.communicate(timeout=left)
            status = "ok" if proc.returncode == 0 else f"exit {proc.returncode}"
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            status = f"no answer in {args.timeout:.0f} s"
        wall = time.perf_counter() - started[name]
        last = (err.strip().splitlines() or [""])[-1][:300]
        rows.append({"probe": name, "status": status, "wall_s": round(wall, 2), "stdout": out.strip()[-300:],
                     "last_error_line": last})  # fmt: skip
        print(f"{name:34} {status:22} {wall:6.1f} s  {out.strip()[-80:]!r}  {last!r}", flush=True)
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"cuda-in-namespaces-{datetime.date.today().isoformat()}.json")
    with open(path, "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
