"""What a person sees while `forge optimize` works: a live table on a terminal, plain lines elsewhere.

Every line goes through `_line` and every table cell through `plain_row`, both of which make the candidates'
and the LLMs' text printable."""

from __future__ import annotations

from rich.console import Console, Group
from rich.live import Live
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from forge.printable import printable
from forge.render import plain_row
from forge_sandbox.device_facts import describe
from forge_sandbox.isolation import isolation_prefix

STYLE = {"passed": "green", "evaluating": "cyan", "incorrect": "red", "rejected": "red"}


class Display:
    """Progress for one run; writes to stderr so that stdout stays for the summary."""

    def __init__(self, console: Console | None = None, live: bool | None = None) -> None:
        self.console = console or Console(stderr=True)
        self.live_mode = self.console.is_terminal if live is None else live
        self.rows: dict[tuple[int, int], tuple[str, str]] = {}
        self.footer = ""
        self.live: Live | None = None

    # lifecycle
    def started(self, run_id: str, task: str, settings, env: dict) -> None:
        self._line(
            f"[bold]forge optimize[/] {escape(task)} · run {run_id} · {escape(settings.coder.model)} · "
            f"{settings.backend} on {escape(str(env.get('device_name')))}"
        )
        self._line(f"[dim]{escape(describe(env))}[/]")
        _, why_not = isolation_prefix()
        if why_not:
            self._line(f"[yellow]candidates run without namespace isolation: {escape(why_not)}[/]")
        if self.live_mode:
            self.live = Live(self._render(), console=self.console, refresh_per_second=4, transient=False)
            self.live.start()

    def close(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None

    # events
    def round_started(self, round_: int, candidates: int) -> None:
        for k in range(1, candidates + 1):
            self.rows[(round_, k)] = ("writing", "")
        self._refresh(f"round {round_}: the coder is writing {candidates} candidate(s)")

    def attempt(self, round_: int, k: int, status: str, detail: str) -> None:
        self.rows[(round_, k)] = (status, detail)
        if status != "evaluating":
            self._line(f"round {round_} attempt {k}: [{STYLE.get(status, 'yellow')}]{status}[/] {escape(detail)}")
        self._refresh()

    def judged(self, round_: int, mode: str, advice: dict | None, error: str | None) -> None:
        if advice:
            text = advice.get("next_optimization") or advice.get("fix_hint") or ""
            self._line(f"round {round_} judge ({mode}): {escape(text[:160])}")
        else:
            self._line(f"round {round_} judge ({mode}): [yellow]no usable advice[/] ({escape(str(error))})")

    def round_done(self, round_: int, best: float | None, run: dict) -> None:
        cost = f"${run['cost_usd']:.4f}" + (
            f" + {run['unpriced_calls']} unpriced calls" if run["unpriced_calls"] else ""
        )
        best_text = f"{best:.3g}x" if best else "none yet"
        self.footer = (
            f"after round {round_}: best {best_text} · tokens {run['prompt_tokens']} in / "
            f"{run['completion_tokens']} out · cost {cost}"
        )
        self._line(self.footer)
        self._refresh()

    # rendering
    def _line(self, markup: str) -> None:
        """Print a line of rich markup whose untrusted parts went through `escape`, with its control characters
        made visible. Safe after `escape`: an escape such as `\\x1b` ends in a hex digit, so the backslashes
        before a `[`, which decide whether it opens a tag, are never changed."""
        console = self.live.console if self.live is not None else self.console
        console.print(printable(markup), highlight=False)

    def _refresh(self, footer: str | None = None) -> None:
        if footer:
            self.footer = footer
        if self.live is not None:
            self.live.update(self._render())

    def _render(self):
        table = Table(show_header=True, header_style="bold", box=None)
        for column in ("round", "attempt", "status", "detail"):
            table.add_column(column)
        for (round_, k), (status, detail) in sorted(self.rows.items())[-12:]:
            plain_row(table, str(round_), str(k), Text(status, style=STYLE.get(status, "yellow")), detail[:90])
        return Group(table, Text(self.footer, style="bold"))
