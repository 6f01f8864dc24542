"""The host's window around each timed call on the CPU (hosted calls): what it costs and how fine it resolves.

Evaluates honest candidates N times each and prints, per run, how the runners were stopped after each
call (environment.stopping), the host's overhead per call (the reference's window less its call: resume,
two pipe messages and the stop), how much it varies (allowance), the resolution under which no call
counts shorter, the candidate's window beyond its own report (its overhead: near the reference's unless
something delays a resumed runner, as the host's own spinning thread pool once did for calls of
milliseconds) and the speedup; then the medians. The machine should be otherwise idle.
--without-held-freezing leaves out the frozen group the host holds meanwhile (runner_cgroups.hold_freezing),
to show what each of the candidate's stops cost without it.

    python bench/host_window.py --runs 3 [--without-held-freezing]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "sandbox"))

from forge_sandbox import runner_cgroups  # noqa: E402
from forge_sandbox.evaluate import EvalOptions, evaluate  # noqa: E402

CASES = [  # (candidate, task)
    ("honest_cpp_softmax", os.path.join(REPO, "tests", "tasks", "softmax_small.py")),
    ("honest_cpp_maxpool", os.path.join(REPO, "tasks", "maxpool2d.py")),
    ("honest_triton", os.path.join(REPO, "tests", "tasks", "scale_add.py")),  # interpreted: calls of ms
    ("honest_cpp_large_speedup", os.path.join(REPO, "tests", "tasks", "slow_running_max.py")),  # calls of 0.03 ms
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--without-held-freezing", action="store_true")
    args = parser.parse_args()
    if args.without_held_freezing:
        runner_cgroups.hold_freezing = lambda: None  # the evaluation runs in this process
    for candidate, task in CASES:
        rows = []
        for _ in range(args.runs):
            v = evaluate(task, os.path.join(REPO, "tests", "candidates", candidate + ".py"),
                         EvalOptions(device="cpu", size="small", timeout=300))  # fmt: skip
            clock = (v.timing or {}).get("host_clock") or {}
            beyond = clock.get("candidate_unexplained_ms")
            rows.append((v.status, v.speedup, clock.get("overhead_ms"), clock.get("allowance_ms"),
                         clock.get("resolution_ms"), beyond))  # fmt: skip
            print(f"{candidate}: {v.status} speedup {v.speedup} overhead {clock.get('overhead_ms')} ms allowance "
                  f"{clock.get('allowance_ms')} ms resolution {clock.get('resolution_ms')} ms; candidate's window beyond its "
                  f"{(v.timing or {}).get('candidate_reported_ms')} ms report {beyond} ms; stopping: "
                  f"{v.environment.get('stopping')}", flush=True)  # fmt: skip
        for k, name in ((1, "speedup"), (2, "overhead_ms"), (4, "resolution_ms"), (5, "candidate_beyond_report_ms")):
            values = [r[k] for r in rows if r[k] is not None]
            if values:
                print(f"  median {name}: {statistics.median(values):.4g}")


if __name__ == "__main__":
    main()
