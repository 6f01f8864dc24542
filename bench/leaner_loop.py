"""What a timing loop made leaner in the candidate's process gains on the CPU (hosted calls).

A review (2026-11-29, static and own-code checks off) rebound forge's hosted timing loop in the candidate's
process to a leaner one; the host took the reference's whole overhead (its stock loop's steps with it) off
the candidate's window, so what the leaner loop left out counted as kernel speed: 2.6-3.5x for a kernel
that makes 1.7-1.9x. The host now takes off only what lies outside a trusted runner's loop.

The same honest C++ causal attention, evaluated N times each, interleaved: as an honest candidate (forge's
loop), and with the review's leaner loops (``select``: a raw read and a pre-formatted answer; ``poll``: the
same, polling the pipe instead of sleeping on it). Prints each run's candidate figure, speedup and the host's
overhead, then the medians. The kernel is the same in all three, so a gap in the candidate's figure is what
its loop bought. Static and own-code checks are off for all three (they reject the leaner loops outright).

    python bench/leaner_loop.py --runs 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "sandbox"))

from forge_sandbox.evaluate import EvalOptions, evaluate  # noqa: E402

FIXTURE = os.path.join(REPO, "tests", "candidates", "cheat_harness_leaner_than_the_references.py")
TASK = os.path.join(REPO, "tests", "tasks", "naive_attention.py")


def variants(folder: str) -> dict[str, str]:
    """The fixture as each variant: the leaner loop not installed (honest), as written, polling."""
    with open(FIXTURE) as f:
        source = f.read()
    texts = {
        "honest": source.replace("\n_install()\n", "\n"),
        "select": source,
        "poll": source.replace('MODE = "select"', 'MODE = "spin"'),
    }
    paths = {}
    for name, text in texts.items():
        paths[name] = os.path.join(folder, f"attention_{name}.py")
        with open(paths[name], "w") as f:
            f.write(text.replace("rv_attn_select", f"rv_attn_bench_{name}"))  # an extension name apiece
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    options = EvalOptions(device="cpu", size="small", timeout=300, static_checks=False, own_code_checks=False)
    rows: dict[str, list[tuple[float, float, float]]] = {}
    with tempfile.TemporaryDirectory() as folder:
        paths = variants(folder)
        for run in range(args.runs):
            for name, path in paths.items():
                v = evaluate(TASK, path, options)
                overhead = ((v.timing or {}).get("host_clock") or {}).get("overhead_ms")
                print(f"run {run + 1} {name:6s}: {v.status} candidate {v.candidate_ms} ms speedup {v.speedup} "
                      f"host overhead {overhead} ms", flush=True)  # fmt: skip
                if v.status == "passed":
                    rows.setdefault(name, []).append((v.candidate_ms, v.speedup, overhead))
    honest = statistics.median(r[0] for r in rows.get("honest", [(float("nan"),)]))
    for name, values in rows.items():
        ms = statistics.median(r[0] for r in values)
        print(f"median {name:6s}: candidate {ms:.4f} ms ({1e3 * (ms - honest):+.1f} us against honest) speedup "
              f"{statistics.median(r[1] for r in values):.3f} (range {min(r[1] for r in values):.3f}-"
              f"{max(r[1] for r in values):.3f}) over {len(values)} runs")  # fmt: skip


if __name__ == "__main__":
    main()
