"""Readable terminal output for verdicts and task listings (rich).

Candidate and LLM text reaches the terminal only through `printable` (control characters shown, never
sent) and never as rich markup: each function makes its data printable on the way in, and tables take
their cells through `plain_row`."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from forge.printable import printable, printable_data
from forge_sandbox import Verdict
from forge_sandbox.hardware import describe as describe_hardware
from forge_sandbox.ncu_metrics import describe as describe_ncu

_STATUS_STYLE = {"passed": "bold green", "incorrect": "bold red", "rejected": "bold red"}


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
        console.print(
            f"  candidate {_ms(v.candidate_ms, v.candidate_iqr_ms)}   eager PyTorch {_ms(v.reference_ms, v.reference_iqr_ms)}"
        )
        console.print(
            f"  speedup [bold]{v.speedup:.3f}x[/] over eager PyTorch ({escape(str(v.timing.get('method', '')))})"
        )
    if v.status == "passed":
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
        console.print(
            f"[bold green]best verified kernel: {s.best_speedup:.3g}x[/] over eager PyTorch -> {escape(printable(str(s.best_path)))}",
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
    for column in ("task", "correct", "speedup", "cost USD", "wall s", "run"):
        table.add_column(column)
    for r in results:
        speed = f"{r.speedup:.3g}x" if r.speedup else "-"
        plain_row(
            table,
            r.task,
            "yes" if r.correct else ("error: " + r.error if r.error else "no"),
            speed,
            f"{r.cost_usd:.4f}",
            f"{r.wall_s:.1f}",
            r.run_id or "-",
        )
    console.print(table)
    geo = f"{metrics['geomean_speedup']:.3g}x" if metrics["geomean_speedup"] else "-"
    console.print(
        f"correct {metrics['correct']}/{metrics['tasks']} ({metrics['correctness_rate']:.0%}) · "
        f"fast_0 {metrics['fast_0']:.0%} · fast_1 {metrics['fast_1']:.0%} · fast_1.5 {metrics['fast_1.5']:.0%} · "
        f"fast_2 {metrics['fast_2']:.0%} · geomean speedup (correct) {geo} · "
        f"${metrics['cost_per_task_usd']:.4f} and {metrics['wall_s_per_task']:.1f} s per task",
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
        "speedup",
        "kernel ms",
        "eager ms",
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
            f"{r['candidate_ms']:.4g}",
            f"{r['reference_ms']:.4g}",
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
