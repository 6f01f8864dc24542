"""Readable terminal output for verdicts and task listings (rich)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from forge_sandbox import Verdict

_STATUS_STYLE = {"passed": "bold green", "incorrect": "bold red", "rejected": "bold red"}


def _ms(value: float | None, iqr: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.4f} ms" + (f" (IQR {iqr:.4f})" if iqr is not None else "")


def print_verdict(console: Console, v: Verdict) -> None:
    style = _STATUS_STYLE.get(v.status, "bold yellow")
    console.print(f"[{style}]{v.status}[/]  {v.candidate}")
    for reason in v.reasons:
        console.print(f"  - {reason}", markup=False)
    if v.status == "passed":
        console.print(
            f"  candidate {_ms(v.candidate_ms, v.candidate_iqr_ms)}   eager PyTorch {_ms(v.reference_ms, v.reference_iqr_ms)}"
        )
        console.print(f"  speedup [bold]{v.speedup:.3f}x[/] over eager PyTorch ({v.timing.get('method', '')})")
    for warning in v.warnings:
        console.print(f"  [dim]note: {warning}[/]", markup=True)
    env = v.environment
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
            table.add_row(info.name, ", ".join(info.inputs), gflop, mb, info.doc)
    console.print(table)
    # Problems go on lines of their own, unwrapped, so that they can be read and grepped whole.
    for info in infos:
        if not info.ok:
            console.print(f"[red]error[/] {info.error}", soft_wrap=True, highlight=False)
        for warning in info.warnings:
            console.print(f"[yellow]warning[/] {info.name}: {warning}", soft_wrap=True, highlight=False)


def print_summary(console: Console, s) -> None:
    if s.best_speedup is not None:
        console.print(
            f"[bold green]best verified kernel: {s.best_speedup:.3g}x[/] over eager PyTorch -> {s.best_path}",
            highlight=False,
        )
    else:
        console.print("[bold red]no verified kernel[/] in this run", highlight=False)
    cost = f"${s.cost_usd:.4f}" + (f" (+ {s.unpriced_calls} calls of unknown price)" if s.unpriced_calls else "")
    console.print(
        f"run {s.run_id}: {s.rounds_done} rounds, stopped: {s.stop_reason}; tokens {s.prompt_tokens} in / "
        f"{s.completion_tokens} out; cost {cost}; {s.wall_s} s",
        highlight=False,
    )


def print_bench(console: Console, results, metrics: dict) -> None:
    table = Table(show_header=True, header_style="bold")
    for column in ("task", "correct", "speedup", "cost USD", "wall s", "run"):
        table.add_column(column)
    for r in results:
        speed = f"{r.speedup:.3g}x" if r.speedup else "-"
        table.add_row(
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
