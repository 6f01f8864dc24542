"""A full `forge optimize` on real hardware with a scripted model served from the same machine.

The GPU machines cannot reach an LLM, so the coder and the judge are played by
tests/fake_llm.py (an OpenAI-compatible server on 127.0.0.1, driven by the real
openai client). The coder's script: round 1 a kernel with a bug (wrong
answer), round 2 the bundled honest kernel, round 3 the same again. Everything
else is forge as a user runs it: `forge optimize` (evaluation, Nsight Compute
profiling, judge prompts, store), then `forge leaderboard`, `forge show`,
`forge export` and the exported module's selftest in a fresh process. Each
step's output and the judge's optimize prompt (the evidence it was shown) go
to --out.

    python bench/scripted_optimize.py --task softmax_rows --out bench/results   # on a GPU machine
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tests"))

from fake_llm import FakeLLM, answer, judge_answer  # noqa: E402


def forge(args: list[str], env: dict, out: str, name: str, timeout: float = 1800) -> subprocess.CompletedProcess:
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "forge.cli", *args], capture_output=True, text=True, env=env, cwd=REPO, timeout=timeout
    )
    seconds = time.perf_counter() - started
    with open(os.path.join(out, f"{name}.txt"), "w") as f:
        f.write(f"$ forge {' '.join(args)}\n# exit {proc.returncode}, {seconds:.1f} s\n{proc.stdout}\n{proc.stderr}")
    print(f"forge {args[0]}: exit {proc.returncode}, {seconds:.1f} s", flush=True)
    return proc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="softmax_rows")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--out", default=os.path.join(REPO, "bench", "results"))
    args = parser.parse_args()
    out = os.path.join(args.out, f"scripted-optimize-{args.task}")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(REPO, "bench", "kernels", f"{args.task}.py")) as f:
        honest = f.read()
    buggy = honest.replace("tl.exp(", "tl.exp2(", 1) if "tl.exp(" in honest else honest.replace("+", "-", 1)
    env = dict(os.environ)
    env["FORGE_HOME"] = os.path.join(out, "forge-home")
    env["PYTHONPATH"] = os.pathsep.join([REPO, os.path.join(REPO, "sandbox"), env.get("PYTHONPATH", "")])
    repair = {"critical_issue": "the output is wrong", "minimal_fix": "use tl.exp, not tl.exp2"}
    optimize = {"bottleneck": "memory", "evidence": "see ncu", "next_optimization": "keep it"}
    with FakeLLM(
        coder=[answer(buggy), answer(honest), answer(honest)], judge=[judge_answer(repair), judge_answer(optimize)]
    ) as llm:
        run = forge(
            ["optimize", args.task, "--model", "scripted", "--base-url", llm.base_url, "--device", args.device]
            + ["--rounds", "3", "--patience", "3", "--json"],
            env,
            out,
            "optimize",
        )
        judge_prompts = [m["content"] for body in llm.calls("judge") for m in body["messages"] if m["role"] == "user"]
    with open(os.path.join(out, "judge_prompts.txt"), "w") as f:
        f.write("\n\n=====\n\n".join(judge_prompts))
    summary = json.loads(run.stdout) if run.returncode == 0 and run.stdout.strip() else {}
    print(f"best speedup {summary.get('best_speedup')} after {summary.get('rounds_done')} rounds")
    board = forge(["leaderboard", "--json"], env, out, "leaderboard")
    rows = json.loads(board.stdout) if board.returncode == 0 and board.stdout.strip() else []
    if rows:
        forge(["show", str(rows[0]["candidate_id"])], env, out, "show")
    exported = os.path.join(out, f"{args.task}_export.py")
    forge(["export", args.task, "-o", exported], env, out, "export")
    if os.path.exists(exported):
        clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # forge is not importable there
        size = "default"
        if args.device == "cpu":
            clean["TRITON_INTERPRET"], size = "1", "small"
        code = (
            f"import importlib.util as u; s = u.spec_from_file_location('m', {exported!r}); "
            f"m = u.module_from_spec(s); s.loader.exec_module(m); print(m.selftest(size={size!r}))"
        )
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=out, env=clean)
        with open(os.path.join(out, "export_selftest.txt"), "w") as f:
            f.write(f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
        print(f"exported module selftest: exit {proc.returncode} {proc.stdout.strip()[-200:]}")
    print(f"results in {out}")


if __name__ == "__main__":
    main()
