"""`python -m forge_sandbox eval TASK CANDIDATE`: the evaluator without forge's control side.

For GPU workers that carry only the CUDA stack (no click, rich, pydantic or
openai): prints the verdict as one JSON object; exit 0 only when it passed.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys

from forge_sandbox import EvalOptions, evaluate
from forge_sandbox.taskfile import TaskError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m forge_sandbox", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    ev = sub.add_parser("eval", help="evaluate CANDIDATE against TASK and print the verdict as JSON")
    ev.add_argument("task")
    ev.add_argument("candidate")
    ev.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    ev.add_argument("--size", default="auto", choices=["auto", "default", "small"])
    ev.add_argument("--timeout", type=float, default=600.0)
    ev.add_argument("--trials", type=int, default=5)
    ev.add_argument("--profile", action="store_true", help="profile the candidate's kernels with Nsight Compute")
    ev.add_argument("--profile-dir", default="forge-profiles", help="where the .ncu-rep report is kept")
    ev.add_argument("--no-isolate", action="store_true", help="run the candidate without namespaces of its own")
    ev.add_argument("--profile-isolated", action="store_true", help="run ncu's target in the namespaces too")
    ev.add_argument(
        "--less-isolation",
        action="store_true",
        help="where CUDA does not start in the candidate's isolation, lift its pieces one at a time (as FORGE_LESS_ISOLATION=1)",
    )
    ev.add_argument(
        "--compile-mode", default="default", help="torch.compile mode of the second baseline; none: leave it out"
    )
    ev.add_argument(
        "--threads", type=int, default=None, help="torch's CPU threads on both sides (default: 1 on the CPU)"
    )
    ev.add_argument("--verbose", action="store_true", help="say on stderr when each stage starts and what it took")
    args = parser.parse_args(argv)
    if args.verbose:
        logging.basicConfig(
            level=logging.INFO, stream=sys.stderr, format="[forge_sandbox %(relativeCreated).0f ms] %(message)s"
        )
    options = EvalOptions(
        device=args.device,
        size=args.size,
        timeout=args.timeout,
        trials=max(5, args.trials),
        profile=args.profile,
        profile_dir=os.path.abspath(args.profile_dir),
        isolate=not args.no_isolate,
        profile_isolated=args.profile_isolated,
        compile_baseline=args.compile_mode != "none",
        compile_mode="default" if args.compile_mode == "none" else args.compile_mode,
        threads=args.threads,
        # without the flag, EvalOptions' own default (FORGE_LESS_ISOLATION)
        **({"less_isolation": True} if args.less_isolation else {}),
    )
    try:
        verdict = evaluate(args.task, args.candidate, options)
    except TaskError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(verdict.to_dict()))
    return 0 if verdict.passed else 1


if __name__ == "__main__":
    sys.exit(main())
