"""The `forge` command line: thin wrappers that parse, call one library function, print."""

from __future__ import annotations

import json
import os
import sys

import click
from rich.console import Console

from forge import __version__
from forge.paths import bundled_dir, resolve_task
from forge.printable import printable, printable_data

console = Console()


def _failure(exc: Exception) -> click.ClickException:
    """The error as click prints it: one message, its control characters visible (task and LLM errors quote text)."""
    return click.ClickException(printable(str(exc)))


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
    type=click.Choice(["auto", "default", "small"]),
    default="auto",
    show_default=True,
    help="The task's shapes: small uses its SMALL overrides; auto means small on the CPU when the task has them.",
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
@click.option(
    "--profile",
    is_flag=True,
    help="Also profile the candidate's own kernels with Nsight Compute (CUDA, needs ncu); keeps the .ncu-rep.",
)
@click.option(
    "--compile-mode",
    type=click.Choice(["default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs", "none"]),
    default="default",
    show_default=True,
    help="torch.compile mode of the second baseline (the reference compiled); none leaves it out.",
)
@click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object (the verdict) on stdout.")
def eval_command(task, candidate, device, size, timeout, trials, profile, compile_mode, as_json) -> None:
    """Compile, verify and time CANDIDATE (a file defining ModelNew) against TASK; exit 0 only if it passed."""
    from forge.evaluation import run_eval

    try:
        verdict = run_eval(
            resolve_task(task),
            candidate,
            device=device,
            size=size,
            timeout=timeout,
            trials=max(5, trials),
            profile=profile,
            compile_mode=compile_mode,
        )
    except (FileNotFoundError, ValueError) as exc:
        raise _failure(exc) from None
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


def _llm_options(fn):
    """Options shared by `forge optimize` and `forge bench`."""
    options = [
        click.option("--model", "-m", help="Coder model (default: $FORGE_MODEL or config.json)."),
        click.option("--judge-model", help="Judge model (default: the coder's)."),
        click.option("--base-url", help="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1 (vLLM)."),
        click.option("--backend", type=click.Choice(["triton", "cuda", "cupy"]), default="triton", show_default=True),
        click.option("--device", type=click.Choice(["cuda", "cpu"]), default="cuda", show_default=True),
        click.option(
            "--size",
            type=click.Choice(["auto", "default", "small"]),
            default="auto",
            show_default=True,
            help="auto: the task's SMALL shapes on the CPU.",
        ),
        click.option("--rounds", type=click.IntRange(1), default=10, show_default=True),
        click.option(
            "--candidates",
            "-k",
            type=click.IntRange(1, 16),
            default=1,
            show_default=True,
            help="Candidates sampled per round, written in parallel.",
        ),
        click.option(
            "--patience",
            type=click.IntRange(1),
            default=4,
            show_default=True,
            help="Stop after this many rounds without improvement.",
        ),
        click.option("--max-cost", type=float, help="Stop when the run has cost this many USD."),
        click.option("--max-time", type=float, help="Stop starting rounds after this many seconds."),
        click.option(
            "--eval-timeout", type=float, default=600.0, show_default=True, help="Seconds per evaluation stage."
        ),
        click.option(
            "--llm-timeout", type=float, default=300.0, show_default=True, help="Seconds to wait for one LLM answer."
        ),
        click.option(
            "--retries",
            type=click.IntRange(0),
            default=2,
            show_default=True,
            help="Retries of a failed LLM request (429, 5xx, timeouts).",
        ),
        click.option(
            "--profile/--no-profile",
            default=True,
            show_default=True,
            help="Profile each passing candidate's own kernels with Nsight Compute for the judge (CUDA, needs ncu).",
        ),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def _settings(
    model,
    judge_model,
    base_url,
    backend,
    device,
    size,
    rounds,
    candidates,
    patience,
    max_cost,
    max_time,
    eval_timeout,
    llm_timeout,
    retries,
    profile,
):
    from forge.config import OptimizeSettings, resolve_llm
    from forge.llm import price_table

    price_table()  # a malformed prices.json fails here, before a run is created
    coder = resolve_llm(model, base_url, timeout_s=llm_timeout, max_retries=retries)
    judge = resolve_llm(
        judge_model or coder.model, base_url or coder.base_url, timeout_s=llm_timeout, max_retries=retries
    )
    return OptimizeSettings(
        coder=coder,
        judge=judge,
        backend=backend,
        device=device,
        size=size,
        rounds=rounds,
        candidates=candidates,
        patience=patience,
        max_cost_usd=max_cost,
        max_time_s=max_time,
        eval_timeout_s=eval_timeout,
        profile=profile,
    )


@main.command(name="optimize")
@click.argument("task", required=False)
@_llm_options
@click.option("--resume", "resume_id", metavar="RUN", help="Continue an interrupted run (its id or a prefix).")
@click.option("--json", "as_json", is_flag=True, help="Print the final summary as one JSON object.")
def optimize_command(task, resume_id, as_json, **options) -> None:
    """Have the coder and judge agents turn TASK into the fastest verified kernel they can."""
    from forge.config import ConfigError, db_path
    from forge.evaluation import EvaluationError, check_device
    from forge.loop import OptimizeError, Optimizer
    from forge.progress import Display
    from forge.store import Store

    if not task and not resume_id:
        raise click.UsageError("give a TASK to optimize, or --resume RUN")
    display = Display()
    optimizer = None
    try:
        store = Store(db_path())
        if resume_id:
            run = store.run(resume_id)
            if run is None:
                raise OptimizeError(f"no run {resume_id!r} (see forge runs)")
            saved = json.loads(run["settings"])
            options.update(
                model=saved["coder"]["model"], judge_model=saved["judge"]["model"], base_url=saved["coder"]["base_url"]
            )
            options.update({k: saved[k] for k in ("backend", "device", "rounds", "candidates", "patience")})
            # Everything the run started with: its limits, timeouts, and the size it resolved to.
            options.update(
                size=run["size"] if run["size"] not in (None, "auto") else saved["size"],
                max_cost=saved.get("max_cost_usd"),
                max_time=saved.get("max_time_s"),
                eval_timeout=saved.get("eval_timeout_s", options["eval_timeout"]),
                llm_timeout=saved["coder"].get("timeout_s", options["llm_timeout"]),
                retries=saved["coder"].get("max_retries", options["retries"]),
                profile=saved.get("profile", options["profile"]),
            )
            check_device(options["device"])
            optimizer = Optimizer.resume(store, run["id"], _settings(**options), display)
        else:
            check_device(options["device"])
            optimizer = Optimizer.start(store, _settings(**options), resolve_task(task), display)
        summary = optimizer.run()
    except (ConfigError, OptimizeError, EvaluationError, FileNotFoundError) as exc:
        raise _failure(exc) from None
    except KeyboardInterrupt:
        display.close()
        run_id = optimizer.run_id if optimizer is not None else "RUN"
        click.echo(f"interrupted; continue with: forge optimize --resume {run_id}", err=True)
        sys.stdout.flush()
        sys.stderr.flush()
        # LLM requests still in flight would hold the exit for minutes; everything that
        # finished is already in the database.
        os._exit(130)
    finally:
        display.close()
    if as_json:
        click.echo(json.dumps(summary.to_dict()))
    else:
        from forge.render import print_summary

        print_summary(console, summary)
    sys.exit(0 if summary.best_speedup is not None else 1)


@main.command(name="bench")
@click.argument("directory", type=click.Path(file_okay=False, exists=True))
@_llm_options
@click.option(
    "--out",
    type=click.Path(dir_okay=False),
    default="bench.json",
    show_default=True,
    help="Where to write the metrics as JSON.",
)
def bench_command(directory, out, **options) -> None:
    """Optimize every task in DIRECTORY (a KernelBench level folder works) and report KernelBench's metrics."""
    from forge.config import ConfigError, db_path
    from forge.evaluation import EvaluationError, check_device
    from forge.progress import Display
    from forge.render import print_bench
    from forge.store import Store
    from forge.suite import results_json, run_suite

    try:
        check_device(options["device"])
        settings = _settings(**options)
    except (ConfigError, EvaluationError) as exc:
        raise _failure(exc) from None
    results, summary = run_suite(Store(db_path()), settings, directory, Display)
    with open(out, "w") as f:
        json.dump(results_json(results, summary, settings), f, indent=1)
    print_bench(console, results, summary)
    console.print(f"metrics written to {out}", highlight=False)


def _store():
    from forge.config import db_path
    from forge.store import Store

    return Store(db_path())


def _emit(rows: list[dict], as_json: bool, as_csv: bool = False, as_markdown: bool = False, columns=None) -> bool:
    """Machine-readable output when asked for; True when it was printed."""
    columns = columns or (list(rows[0]) if rows else [])
    if as_json:  # json.dumps writes control characters as \u escapes (ensure_ascii, its default)
        click.echo(json.dumps(rows, default=str))
    elif as_csv:
        import csv

        writer = csv.DictWriter(sys.stdout, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(printable_data(rows))
    elif as_markdown:
        click.echo("| " + " | ".join(columns) + " |")
        click.echo("|" + "---|" * len(columns))
        for row in rows:
            cells = ("" if row.get(c) is None else printable(str(row.get(c))) for c in columns)
            click.echo("| " + " | ".join(cells) + " |")
    else:
        return False
    return True


@main.command(name="leaderboard")
@click.option("--task", help="Only this task (its name).")
@click.option("--device", help="Only GPUs whose name contains this, e.g. H100.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--csv", "as_csv", is_flag=True, help="Print CSV.")
@click.option("--markdown", "as_markdown", is_flag=True, help="Print a Markdown table.")
def leaderboard_command(task, device, as_json, as_csv, as_markdown) -> None:
    """The best verified speedup per task, per GPU model and torch version (over eager PyTorch and torch.compile)."""
    from forge.history import leaderboard
    from forge.render import print_leaderboard

    rows = leaderboard(_store(), task=task, device=device)
    columns = [
        "task",
        "device",
        "torch",
        "speedup",
        "speedup_vs_compile",
        "candidate_ms",
        "reference_ms",
        "compile_ms",
        "own_share_pct",
        "model",
        "backend",
        "rounds",
        "cost_usd",
        "candidate_id",
        "run_id",
    ]
    if not _emit(rows, as_json, as_csv, as_markdown, columns):
        print_leaderboard(console, rows)


@main.command(name="runs")
@click.option(
    "-n", "limit", type=click.IntRange(1, 10**6), default=20, show_default=True, help="How many runs, newest first."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def runs_command(limit, as_json) -> None:
    """List optimization runs, newest first: task, model, status, best speedup, cost."""
    from forge.history import runs
    from forge.render import print_runs

    rows = runs(_store(), limit)
    if not _emit(rows, as_json):
        print_runs(console, rows)


@main.command(name="show")
@click.argument("candidate_id", type=click.IntRange(0, 2**62))
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def show_command(candidate_id, as_json) -> None:
    """One candidate: its source, the diff against its parent, verdict, timings and the judge's feedback."""
    from forge.history import candidate_story
    from forge.render import print_story

    story = candidate_story(_store(), candidate_id)
    if story is None:
        raise click.ClickException(f"no candidate {candidate_id} (see forge runs, then forge show on a run's best)")
    if as_json:
        click.echo(json.dumps(story, default=str))
    else:
        print_story(console, story)


@main.command(name="logs")
@click.option("--run", "run_id", help="Only this run (its id or a prefix).")
@click.option("-m", "--model", help="Only this model.")
@click.option(
    "-n", "limit", type=click.IntRange(1, 10**6), default=20, show_default=True, help="How many calls, newest first."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON (with the full responses).")
def logs_command(run_id, model, limit, as_json) -> None:
    """The LLM calls on record, newest first, with tokens, cost and duration."""
    from forge.history import llm_calls
    from forge.render import print_calls

    rows = llm_calls(_store(), run_id, model, limit)
    if not _emit(rows, as_json):
        print_calls(console, rows)


@main.command(name="export")
@click.argument("task")
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help="Where to write the module (default: TASK_forge.py)."
)
@click.option("--device", help="Which GPU model's winner, when there are several.")
def export_command(task, output, device) -> None:
    """Write TASK's best verified kernel as a standalone module (ModelNew, a function, a torch custom op)."""
    from forge.export import ExportError, choose, render_module

    store = _store()
    try:
        row = choose(store, task, device)
    except ExportError as exc:
        raise _failure(exc) from None
    output = output or f"{row['task']}_forge.py"
    with open(output, "w") as f:
        f.write(render_module(store, row))
    console.print(
        printable(
            f"wrote {output}: {row['task']} at {row['speedup']}x on {row['device']} (candidate {row['candidate_id']})"
        ),
        highlight=False,
        markup=False,
    )


@main.command(name="report")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default="report.html", show_default=True)
def report_command(output) -> None:
    """Write one static HTML page (offline): the leaderboard, speedup by round and each kernel's roofline."""
    from forge.report import build_report

    with open(output, "w") as f:
        f.write(build_report(_store()))
    console.print(f"wrote {output}", highlight=False)


@main.group(name="db")
def db_group() -> None:
    """forge's SQLite database."""


@db_group.command(name="path")
def db_path_command() -> None:
    """Print the database's path (datasette "$(forge db path)" browses it)."""
    from forge.config import db_path

    click.echo(db_path())


@db_group.command(name="metadata")
def db_metadata_command() -> None:
    """Write forge's Datasette metadata (canned queries: leaderboard, cost per task) and print its path."""
    from forge.config import forge_home
    from forge.history import datasette_metadata

    path = os.path.join(forge_home(), "datasette-metadata.json")
    os.makedirs(forge_home(), exist_ok=True)
    with open(path, "w") as f:
        json.dump(datasette_metadata(), f, indent=2)
    click.echo(path)


if __name__ == "__main__":
    main()
