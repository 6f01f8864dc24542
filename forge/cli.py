"""The `forge` command line: thin wrappers that parse, call one library function, print."""

from __future__ import annotations

import json
import sys

import click
from rich.console import Console

from forge import __version__
from forge.paths import bundled_dir, resolve_task

console = Console()


@click.group()
@click.version_option(__version__, prog_name="forge")
def main() -> None:
    """forge: LLM agents write fast GPU kernels; forge proves them correct and times them honestly."""


@main.command(name="eval")
@click.argument("task")
@click.argument("candidate", type=click.Path(dir_okay=False))
@click.option(
    "--device",
    type=click.Choice(["cuda", "cpu"]),
    default="cuda",
    show_default=True,
    help="Where to run: cpu runs Triton under its interpreter and C++ through load_inline.",
)
@click.option(
    "--size",
    type=click.Choice(["default", "small"]),
    default="default",
    show_default=True,
    help="The task's shapes: small uses its SMALL overrides (for CPU runs).",
)
@click.option(
    "--timeout",
    type=float,
    default=600.0,
    show_default=True,
    help="Seconds allowed per stage (compile, each verification, each timed block).",
)
@click.option(
    "--trials", type=int, default=5, show_default=True, help="Verification input sets per configuration (at least 5)."
)
@click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object (the verdict) on stdout.")
def eval_command(task, candidate, device, size, timeout, trials, as_json) -> None:
    """Compile, verify and time CANDIDATE (a file defining ModelNew) against TASK; exit 0 only if it passed."""
    from forge.evaluation import run_eval

    try:
        verdict = run_eval(
            resolve_task(task), candidate, device=device, size=size, timeout=timeout, trials=max(5, trials)
        )
    except (FileNotFoundError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        click.echo(json.dumps(verdict.to_dict()))
    else:
        from forge.render import print_verdict

        print_verdict(console, verdict)
    sys.exit(0 if verdict.passed else 1)


@main.command(name="tasks")
@click.argument("directory", required=False, type=click.Path(file_okay=False, exists=True))
@click.option("--lint", is_flag=True, help="Run each reference and warn when its output is degenerate.")
@click.option(
    "--size",
    type=click.Choice(["default", "small"]),
    default="default",
    show_default=True,
    help="Shapes to describe and lint at.",
)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list instead of a table.")
def tasks_command(directory, lint, size, as_json) -> None:
    """List the tasks in DIRECTORY (default: forge's bundled tasks), with their inputs and any problems."""
    from forge_sandbox.catalog import inspect_tasks, task_files

    directory = directory or bundled_dir("tasks")
    infos = inspect_tasks(task_files(directory), size=size, lint=lint)
    if as_json:
        click.echo(json.dumps([info.__dict__ for info in infos]))
    else:
        from forge.render import print_tasks

        print_tasks(console, infos)
    if any(not info.ok for info in infos):
        sys.exit(1)
