"""Nsight Compute's cost per candidate, and a recorded report for the parser's fixtures.

For each task it evaluates the bundled honest kernel in fresh processes: plain,
with ``--profile``, and with ``--profile --profile-isolated`` (the experiment that
shows whether ncu's target runs in the candidate's namespaces on this machine);
it records the verdict times, the time ncu itself took (the goal: under 30 s per
candidate) and what it measured for the candidate's kernels. The first report that worked is exported as the CSV
pages that tests/test_ncu.py reads (raw.csv, details.csv, kernel_names.txt and
version.txt), ready to be committed under tests/fixtures/ncu/recorded/.

    python bench/profile_overhead.py --tasks softmax_rows gemm_fp16 layernorm   # on a GPU machine with ncu
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "sandbox"))
sys.path.insert(0, os.path.join(REPO, "bench"))

from eval_repeatability import commit, run_verdict  # noqa: E402

from forge_sandbox import ncu, static_check  # noqa: E402


def evaluate(task: str, kernel: str, profile_dir: str | None, timeout: float, *flags: str) -> dict:
    profile = ["--profile", "--profile-dir", profile_dir] if profile_dir else []
    return run_verdict(task, kernel, *flags, *profile, timeout=timeout)[0]


def export_fixture(report: str, kernel_source: str, out: str, device: str) -> str:
    tool = ncu.find_ncu()
    version = ncu.ncu_version(tool) or "unknown"
    folder = os.path.join(out, "ncu-fixture", re.sub(r"[^\w.-]+", "_", f"{version}-{device}"))
    os.makedirs(folder, exist_ok=True)
    for page in ("raw", "details"):
        text = subprocess.run(
            [tool, "-i", report, "--page", page, "--csv", "--print-units", "base", "--print-kernel-base", "function"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        with open(os.path.join(folder, f"{page}.csv"), "w") as f:
            f.write(text)
    with open(os.path.join(folder, "kernel_names.txt"), "w") as f:
        f.write("\n".join(static_check.check_source(kernel_source).kernel_names) + "\n")
    with open(os.path.join(folder, "version.txt"), "w") as f:
        f.write(subprocess.run([tool, "--version"], capture_output=True, text=True).stdout)
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", nargs="+", default=["softmax_rows", "gemm_fp16", "layernorm"])
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--out", default=os.path.join(REPO, "bench", "results"))
    args = parser.parse_args()
    reports = os.path.join(args.out, "ncu-reports")
    rows, device, fixture = [], "unknown", None
    for name in args.tasks:
        task = os.path.join(REPO, "tasks", f"{name}.py")
        kernel = os.path.join(REPO, "bench", "kernels", f"{name}.py")
        plain = evaluate(task, kernel, None, args.timeout)
        profiled = evaluate(task, kernel, reports, args.timeout)
        # The experiment that decides whether ncu's target can run in the candidate's namespaces.
        isolated = evaluate(task, kernel, reports, args.timeout, "--profile-isolated")
        isolated_hw = isolated.get("hardware") or {}
        device = (profiled.get("environment") or {}).get("device_name", device)
        hw = profiled.get("hardware") or {}
        result = hw.get("ncu") or {}
        row = {
            "task": name,
            "status": [plain["status"], profiled["status"]],
            "verdict_s": plain.get("duration_s"),
            "verdict_with_profile_s": profiled.get("duration_s"),
            "ncu_s": result.get("seconds"),
            "kernels": result.get("kernels"),
            "report": result.get("report"),
            "not_measured": [m for m in hw.get("not_measured", []) if m.startswith("Nsight")],
            "environment": {k: profiled.get("environment", {}).get(k) for k in ("isolation", "files")},
            "isolated_profile_s": (isolated_hw.get("ncu") or {}).get("seconds"),
            "isolated_not_measured": [m for m in isolated_hw.get("not_measured", []) if m.startswith("Nsight")],
        }
        rows.append(row)
        print(
            f"{name:24s} verdict {row['verdict_s']} s, with --profile {row['verdict_with_profile_s']} s, "
            f"ncu {row['ncu_s']} s  {'; '.join(row['not_measured'])}; isolated ncu {row['isolated_profile_s']} s "
            f"{'; '.join(row['isolated_not_measured'])}; {row['environment']}",
            flush=True,
        )
        if fixture is None and result.get("report"):
            with open(kernel) as f:
                fixture = export_fixture(result["report"], f.read(), args.out, device)
            print(f"fixture written to {fixture}")
    stamp = datetime.date.today().isoformat()
    path = os.path.join(args.out, f"profile-overhead-{device.replace(' ', '_')}-{stamp}.json")
    os.makedirs(args.out, exist_ok=True)
    with open(path, "w") as f:
        json.dump({"meta": {"date": stamp, "commit": commit(), "device": device}, "rows": rows}, f, indent=1)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
