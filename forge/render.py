"""Readable terminal output for verdicts and task listings (rich).

Candidate and LLM text reaches the terminal only through `printable` (control characters shown, never
sent) and never as rich markup: each function makes its data printable on the way in, and tables take
their cells through `plain_row`."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from forge.evaluation import compile_baseline, torch_ops_text
from forge.printable import printable, printable_data
from forge_sandbox import Verdict
from forge_sandbox.hardware import describe as describe_hardware
from forge_sandbox.ncu_metrics import describe as describe_ncu

_STATUS_STYLE = {"passed": "bold green", "incorrect": "bold red", "rejected": "bold red"}


def _number(value: float | None, fmt: str) -> str:
    return "-" if value is None else fmt.format(value)


def _ms(value: float | None, iqr: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.4f} ms" + (f" (IQR {iqr:.4f})" if iqr is not None else "")


def print_verdict(console: Console, v: Verdict) -> None:
    v = Verdict(**printable_data(v.to_dict()))  # reasons, warnings, hardware and ncu text come from the candidate
    style = _STATUS_STYLE.get(v.status, "bold yellow")
    console.print(f"[{style}]{escape(v.status)}[/]  {escape(v.candidate)}", highlight=False)
    for reason in v.reasons:
        console.print(f"  - {reason}", markup=False)
    if v.status == "passed":
        print_speedups(console, v)
        for line in describe_hardware(v.hardware)[:2]:  # the roofline and the census
            if not line.startswith(("ptxas", "not measured", "ncu")):
                console.print(f"  {line}", highlight=False, markup=False)
        print_profile(console, v.hardware)
    for warning in v.warnings:
        console.print(f"  [dim]note: {escape(warning)}[/]", markup=True)
    env = {key: escape(str(value)) for key, value in v.environment.items()}
    if env:
        console.print(
            f"  [dim]{env.get('device_name')} · torch {env.get('torch')} · CUDA {env.get('cuda')} · triton {env.get('triton')} · {v.duration_s} s[/]"
        )


def print_speedups(console: Console, v: Verdict) -> None:
    """A passed verdict's times and its speedup over both baselines, with the split of its forward's time.

    `v` has been made printable: the compile mode and reason and the operator names come from the verdict."""
    compiled = compile_baseline(v.to_dict())
    times = f"  candidate {_ms(v.candidate_ms, v.candidate_iqr_ms)}   eager PyTorch {_ms(v.reference_ms, v.reference_iqr_ms)}"
    if compiled.get("ms") is not None:
        times += f"   torch.compile {_ms(compiled['ms'], compiled.get('iqr_ms'))}"
    console.print(times, highlight=False)
    line = f"  speedup [bold]{v.speedup:.3f}x[/] over eager PyTorch"
    mode = escape(str(compiled.get("mode") or "default"))
    if v.speedup_vs_compile is not None:
        line += f", [bold]{v.speedup_vs_compile:.3f}x[/] over torch.compile ({mode})"
    elif compiled:
        line += f"; no torch.compile baseline ({mode}): {escape(str(compiled.get('reason') or 'not measured'))}"
    console.print(line + f"; timed with {escape(str(v.timing.get('method', 'an unknown method')))}", highlight=False)
    spread = v.timing.get("repeatability") or {}
    if spread.get("speedup_min") is not None and spread.get("speedup_max") is not None:
        cv = f", CV {100 * spread['speedup_cv']:.1f}%" if spread.get("speedup_cv") is not None else ""
        console.print(
            f"  speedup over eager from {spread['speedup_min']:.3g}x to {spread['speedup_max']:.3g}x "
            f"across {spread.get('blocks')} timed blocks{cv}",
            highlight=False,
        )
    if v.own_share is not None:
        console.print(f"  own kernels: {100 * v.own_share:.0f}% of the forward's time", highlight=False)
    if v.torch_ops:
        console.print(
            f"  PyTorch operators in the forward: {torch_ops_text(v.torch_ops)}", highlight=False, markup=False
        )


def print_tasks(console: Console, infos) -> None:
    table = Table(show_header=True, header_style="bold")
    for column in ("task", "inputs", "GFLOP", "MB", "about"):
        table.add_column(column, overflow="fold", no_wrap=column == "task")
    for info in infos:
        if info.ok:
            gflop = f"{info.flops / 1e9:.3g}" if info.flops else "-"
            mb = f"{info.bytes / 1e6:.3g}" if info.bytes else "-"
            plain_row(table, info.name, ", ".join(info.inputs), gflop, mb, info.doc)
    console.print(table)
    # Problems go on lines of their own, unwrapped, so that they can be read and grepped whole.
    for info in infos:
        if not info.ok:
            console.print(f"[red]error[/] {escape(printable(info.error))}", soft_wrap=True, highlight=False)
        for warning in info.warnings:
            console.print(
                f"[yellow]warning[/] {escape(printable(info.name))}: {escape(printable(warning))}",
                soft_wrap=True,
                highlight=False,
            )


def print_summary(console: Console, s) -> None:
    if s.best_speedup is not None:
        compiled = f", {s.best_speedup_vs_compile:.3g}x over torch.compile" if s.best_speedup_vs_compile else ""
        console.print(
            f"[bold green]best verified kernel: {s.best_speedup:.3g}x[/] over eager PyTorch{compiled} -> "
            f"{escape(printable(str(s.best_path)))}",
            highlight=False,
        )
    else:
        console.print("[bold red]no verified kernel[/] in this run", highlight=False)
    cost = f"${s.cost_usd:.4f}" + (f" (+ {s.unpriced_calls} calls of unknown price)" if s.unpriced_calls else "")
    console.print(
        f"run {s.run_id}: {s.rounds_done} rounds, stopped: {escape(printable(s.stop_reason))}; tokens {s.prompt_tokens} in / "
        f"{s.completion_tokens} out; cost {cost}; {s.wall_s} s",
        highlight=False,
    )


def print_bench(console: Console, results, metrics: dict) -> None:
    table = Table(show_header=True, header_style="bold")
    for column in ("task", "correct", "vs eager", "vs torch.compile", "cost USD", "wall s", "run"):
        table.add_column(column)
    for r in results:
        if r.speedup_vs_compile:
            over_compile = f"{r.speedup_vs_compile:.3g}x"
        else:
            over_compile = f"- ({r.compile_missing})" if r.compile_missing else "-"
        plain_row(
            table,
            r.task,
            "yes" if r.correct else ("error: " + r.error if r.error else "no"),
            f"{r.speedup:.3g}x" if r.speedup else "-",
            over_compile,
            f"{r.cost_usd:.4f}",
            f"{r.wall_s:.1f}",
            r.run_id or "-",
        )
    console.print(table)
    console.print(
        f"correct {metrics['correct']}/{metrics['tasks']} ({metrics['correctness_rate']:.0%}) · "
        f"${metrics['cost_per_task_usd']:.4f} and {metrics['wall_s_per_task']:.1f} s per task",
        highlight=False,
    )
    for label, suffix in (("over eager PyTorch", ""), ("over torch.compile", "_compile")):
        geo = metrics[f"geomean_speedup{suffix}"]
        fast = " · ".join(f"fast_{p} {metrics[f'fast_{p}{suffix}']:.0%}" for p in ("0", "1", "1.5", "2"))
        console.print(f"{label}: {fast} · geomean speedup (correct) {f'{geo:.3g}x' if geo else '-'}", highlight=False)
    if metrics["compile_missing"]:
        console.print(
            f"{metrics['compile_missing']} correct task(s) have no torch.compile baseline: "
            "counted as not faster than torch.compile, left out of its geomean",
            highlight=False,
        )


def print_leaderboard(console: Console, rows: list[dict]) -> None:
    if not rows:
        console.print("no verified kernels yet: run forge optimize", highlight=False)
        return
    table = Table(show_header=True, header_style="bold")
    for column in (
        "task",
        "device",
        "torch",
        "vs eager",
        "vs torch.compile",
        "kernel ms",
        "eager ms",
        "compiled ms",
        "own %",
        "model",
        "backend",
        "rounds",
        "run cost",
        "candidate",
    ):
        table.add_column(column)
    for r in rows:
        plain_row(
            table,
            r["task"],
            str(r["device"]),
            str(r["torch"]),
            f"{r['speedup']:.3g}x",
            _number(r["speedup_vs_compile"], "{:.3g}x"),
            f"{r['candidate_ms']:.4g}",
            f"{r['reference_ms']:.4g}",
            _number(r["compile_ms"], "{:.4g}"),
            _number(r["own_share_pct"], "{:.0f}%"),
            r["model"],
            r["backend"],
            str(r["rounds"]),
            f"${r['cost_usd']:.4f}",
            str(r["candidate_id"]),
        )
    console.print(table)


def print_runs(console: Console, rows: list[dict]) -> None:
    table = Table(show_header=True, header_style="bold")
    for column in ("run", "task", "model", "backend", "device", "status", "rounds", "best", "cost", "started"):
        table.add_column(column)
    for r in rows:
        best = f"{r['best_speedup']:.3g}x (#{r['best_candidate_id']})" if r["best_speedup"] else "-"
        plain_row(
            table,
            r["id"],
            r["task"],
            r["model"],
            r["backend"],
            r["device"],
            r["status"],
            str(r["rounds"]),
            best,
            f"${r['cost_usd'] or 0:.4f}",
            r["started_at"],
        )
    console.print(table)


def print_story(console: Console, story: dict) -> None:
    from rich.syntax import Syntax

    story = printable_data(story)  # the code, the diff, the verdict and the judge's advice are LLM and candidate text
    c = story["candidate"]
    console.print(
        f"[bold]candidate {c['id']}[/] · run {c['run_id']} · round {c['round']} attempt {c['attempt']} · parent {story['parent_id'] or '-'}",
        highlight=False,
    )
    console.print(Syntax(c["code"], "python", line_numbers=True))
    if story["diff"]:
        console.print("[bold]diff against its parent[/]")
        console.print(Syntax(story["diff"], "diff"))
    v = story["verdict"]
    if v:
        print_verdict(console, Verdict(**v))
        if v.get("hardware"):
            console.print("[bold]hardware evidence[/]")
            for line in describe_hardware(v["hardware"]):
                console.print(f"  {line}", highlight=False, markup=False)
            if (v["hardware"].get("ncu") or {}).get("report"):
                console.print(f"  Nsight Compute report: {v['hardware']['ncu']['report']}", markup=False)
        if v.get("compile_log") and v.get("status") == "compile_error":
            console.print("[bold]compiler[/]\n" + v["compile_log"][-2000:], highlight=False, markup=False)
    fb = story["feedback"]
    if fb and fb.get("advice"):
        about = "the best kernel so far" if fb["mode"] == "optimize" else "the round's most advanced failure"
        console.print(
            f"[bold]the judge after round {c['round']} ({escape(str(fb['mode']))}, about {about})[/]", highlight=False
        )
        for key, value in fb["advice"].items():
            console.print(f"  {key}: {value}", highlight=False, markup=False)


def print_calls(console: Console, rows: list[dict]) -> None:
    table = Table(show_header=True, header_style="bold")
    for column in ("id", "run", "round", "role", "mode", "model", "tokens in/out", "cost", "s", "error"):
        table.add_column(column)
    for r in rows:
        cost = f"${r['cost_usd']:.5f}" if r["cost_usd"] is not None else "unpriced"
        tokens = f"{r['prompt_tokens'] or 0}/{r['completion_tokens'] or 0}"
        plain_row(
            table,
            str(r["id"]),
            r["run_id"],
            str(r["round"]),
            r["role"],
            r["mode"],
            r["model"],
            tokens,
            cost,
            f"{r['duration_s']:.2f}",
            (r["error"] or "")[:60],
        )
    console.print(table)


def plain_row(table: Table, *values) -> None:
    """Add a row as plain, printable text: cells hold LLM and candidate text, never markup or control codes."""
    table.add_row(
        *[
            Text(printable(v.plain), style=v.style)
            if isinstance(v, Text)
            else Text(printable("" if v is None else str(v)))
            for v in values
        ]
    )


def print_profile(console: Console, hw: dict) -> None:
    """Nsight Compute's view of the candidate's kernels, or why there is none when it was asked for."""
    hw = printable_data(hw)  # ncu's rule text and kernel names
    profile = hw.get("ncu")
    if profile:
        for line in describe_ncu(profile, max_kernels=2):
            console.print(f"  {line}", highlight=False, markup=False)
        console.print(
            f"  Nsight Compute {profile.get('version') or ''} took {profile['seconds']:.1f} s; "
            f"report: {profile['report']}",
            highlight=False,
            markup=False,
        )
        return
    for item in hw.get("not_measured", []):
        if item.startswith("Nsight Compute") and "not requested" not in item:
            console.print(f"  [dim]not measured: {escape(item)}[/]")
