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
