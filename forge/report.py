"""`forge report`: one static HTML page, viewable offline: the leaderboard, and per task the speedup by
round and the kernel's place on the device's roofline. Charts are inline SVG; no scripts, no network."""

from __future__ import annotations

import datetime
import html
import json
import math

from forge import __version__
from forge.history import leaderboard
from forge.printable import printable
from forge.store import Store

CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #1d2330; }
h1 { font-size: 1.6em; margin-bottom: 0.1em; } h2 { margin-top: 2em; border-bottom: 1px solid #d6dbe4; }
table { border-collapse: collapse; width: 100%; margin: 1em 0; }
th, td { text-align: left; padding: 5px 9px; border-bottom: 1px solid #e4e8ef; }
th { background: #eef2f8; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.muted { color: #6b7385; } .charts { display: flex; gap: 24px; flex-wrap: wrap; }
svg { background: #fbfcfe; border: 1px solid #e4e8ef; }
"""
COLORS = ["#2f6fdb", "#d9480f", "#2b8a3e", "#862e9c", "#c92a2a", "#0b7285"]


def _esc(value) -> str:
    """Text from the record as HTML: markup escaped, control and bidi characters shown as escapes."""
    return html.escape(printable("" if value is None else str(value)))


def _optional(value: float | None, fmt: str) -> str:
    """A number from the record, or a dash where there is none."""
    return "-" if value is None else _esc(fmt.format(value))


def speedup_chart(series: dict[str, list[tuple[int, float]]], width: int = 480, height: int = 260) -> str:
    """Best verified speedup after each round, one line per run."""
    points = [p for pts in series.values() for p in pts]
    if not points:
        return '<p class="muted">no verified kernel in any round yet</p>'
    left, bottom, top, right = 56, 36, 22, 16
    max_round = max(r for r, _ in points)
    max_speed = max(max(s for _, s in points), 1.0) * 1.15

    def xy(r, s):
        x = left + (r - 1) / max(1, max_round - 1) * (width - left - right)
        y = height - bottom - s / max_speed * (height - bottom - top)
        return x, y

    parts = [f'<svg width="{width}" height="{height}" role="img" aria-label="speedup by round">']
    _, one = xy(1, 1.0)
    parts.append(
        f'<line x1="{left}" y1="{one:.1f}" x2="{width - right}" y2="{one:.1f}" stroke="#adb5bd" stroke-dasharray="4 3"/>'
    )
    parts.append(f'<text x="{left + 6}" y="{one - 4:.1f}" font-size="11" fill="#6b7385">eager PyTorch</text>')
    parts.append(
        f'<line x1="{left}" y1="{height - bottom}" x2="{width - right}" y2="{height - bottom}" stroke="#495057"/>'
    )
    parts.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{height - bottom}" stroke="#495057"/>')
    for r in range(1, max_round + 1):
        x, _ = xy(r, 0)
        parts.append(f'<text x="{x:.1f}" y="{height - bottom + 15}" font-size="11" text-anchor="middle">{r}</text>')
    parts.append(f'<text x="{width / 2:.0f}" y="{height - 4}" font-size="12" text-anchor="middle">round</text>')
    parts.append(f'<text x="6" y="{top - 8}" font-size="12">speedup</text>')
    for tick in (0.0, 1.0, max_speed / 1.15):
        _, y = xy(1, tick)
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" font-size="11" text-anchor="end">{tick:.3g}x</text>')
    for i, (label, pts) in enumerate(series.items()):
        color = COLORS[i % len(COLORS)]
        coords = " ".join(f"{x:.1f},{y:.1f}" for x, y in (xy(r, s) for r, s in pts))
        parts.append(f'<polyline points="{coords}" fill="none" stroke="{color}" stroke-width="2.5"/>')
        for r, s in pts:
            x, y = xy(r, s)
            parts.append(
                f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{color}"><title>{_esc(label)} round {r}: {s:.3g}x</title></circle>'
            )
        legend_y = top + 2 + 14 * i
        parts.append(
            f'<text x="{width - right - 4}" y="{legend_y}" font-size="11" text-anchor="end" fill="{color}">'
            f"run {_esc(label)}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def roofline_chart(flops, nbytes, ms, peak_flops, peak_bw, width: int = 480, height: int = 260) -> str:
    """The kernel's achieved FLOP/s at its arithmetic intensity, under the device's roofs (log-log)."""
    if not nbytes or not ms:
        return '<p class="muted">roofline: the task declares no byte count</p>'
    achieved_bw = nbytes / (ms / 1e3)
    note = f"{achieved_bw / 1e9:.3g} GB/s achieved"
    if peak_bw:
        note += f" = {100 * achieved_bw / peak_bw:.1f}% of the device's {peak_bw / 1e9:.0f} GB/s"
    if not flops or not peak_bw:
        return (
            f'<p class="muted">roofline: {note}; '
            + ("no FLOP count declared" if not flops else "device peaks unknown (CPU)")
            + "</p>"
        )
    intensity, achieved = flops / nbytes, flops / (ms / 1e3)
    peak = peak_flops or achieved * 10
    xs = (math.log10(min(intensity, peak / peak_bw) / 10), math.log10(max(intensity, peak / peak_bw) * 10))
    ys = (math.log10(min(achieved, peak_bw * 10 ** xs[0]) / 3), math.log10(peak * 3))
    left, bottom, top, right = 56, 36, 16, 16

    def xy(i, f):
        x = left + (math.log10(i) - xs[0]) / (xs[1] - xs[0]) * (width - left - right)
        y = height - bottom - (math.log10(f) - ys[0]) / (ys[1] - ys[0]) * (height - bottom - top)
        return x, y

    ridge = peak / peak_bw
    a, b, c = xy(10 ** xs[0], peak_bw * 10 ** xs[0]), xy(ridge, peak), xy(10 ** xs[1], peak)
    px, py = xy(intensity, achieved)
    return (
        f'<svg width="{width}" height="{height}" role="img" aria-label="roofline">'
        f'<polyline points="{a[0]:.1f},{a[1]:.1f} {b[0]:.1f},{b[1]:.1f} {c[0]:.1f},{c[1]:.1f}" fill="none" stroke="#495057" stroke-width="2"/>'
        f'<circle cx="{px:.1f}" cy="{py:.1f}" r="6" fill="#d9480f"/>'
        f'<text x="{px + 9:.1f}" y="{py + 4:.1f}" font-size="11">{achieved / 1e12:.3g} TFLOP/s</text>'
        f'<text x="{width / 2:.0f}" y="{height - 4}" font-size="12" text-anchor="middle">FLOP per byte (log)</text>'
        f'<text x="12" y="{top + 10}" font-size="12">FLOP/s (log)</text>'
        f'<text x="{c[0] - 4:.1f}" y="{c[1] - 6:.1f}" font-size="11" text-anchor="end">peak {peak / 1e12:.3g} TFLOP/s</text>'
        f"</svg><p class='muted'>{note}</p>"
    )


def build_report(store: Store) -> str:
    rows = leaderboard(store)
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    out = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>forge report</title><style>{CSS}</style></head><body>"
    ]
    out.append(f"<h1>forge report</h1><p class='muted'>{now} · forge {__version__} · {_esc(store.path)}</p>")
    out.append("<h2>Leaderboard</h2>")
    if not rows:
        out.append("<p>No verified kernels yet: run <code>forge optimize</code>.</p>")
    else:
        head = [
            "task", "device", "torch", "speedup vs eager", "speedup vs torch.compile", "kernel ms", "eager ms",
            "torch.compile ms", "own kernels", "model", "backend", "rounds", "run cost",
        ]  # fmt: skip
        out.append("<table><tr>" + "".join(f"<th>{_esc(h)}</th>" for h in head) + "</tr>")
        numeric = set(range(3, 9)) | {11, 12}
        for r in rows:
            cells = [
                _esc(r["task"]), _esc(r["device"]), _esc(r["torch"]),
                f"<b>{r['speedup']:.3g}x</b>", _optional(r["speedup_vs_compile"], "{:.3g}x"),
                f"{r['candidate_ms']:.4g}", f"{r['reference_ms']:.4g}", _optional(r["compile_ms"], "{:.4g}"),
                _optional(r["own_share_pct"], "{:.0f}% of forward"),
                _esc(r["model"]), _esc(r["backend"]), _esc(r["rounds"]), f"${r['cost_usd']:.4f}",
            ]  # fmt: skip
            out.append(
                "<tr>"
                + "".join(f"<td class='num'>{c}</td>" if i in numeric else f"<td>{c}</td>" for i, c in enumerate(cells))
                + "</tr>"
            )
        out.append("</table>")
        out.append(
            "<p class='muted'>Ranked by the speedup over eager PyTorch. Over torch.compile: the same kernel against "
            "the task's reference compiled by torch.compile (- where torch.compile could not run it). Own kernels: "
            "the share of the forward's time spent in the candidate's own kernels.</p>"
        )
    for task in sorted({r["task"] for r in rows}):
        out.append(f"<h2>{_esc(task)}</h2><div class='charts'>")
        out.append("<div><h3>Best verified speedup by round</h3>" + speedup_chart(_series(store, task)) + "</div>")
        best = next(r for r in rows if r["task"] == task)
        verdict = json.loads(store.latest_evaluation(best["candidate_id"])["verdict"])
        env, timing = verdict.get("environment", {}), verdict.get("timing", {})
        chart = roofline_chart(
            timing.get("flops"), timing.get("bytes"), verdict.get("candidate_ms"),
            env.get("fp32_flops_per_s"), env.get("memory_bandwidth_bytes_per_s"),
        )  # fmt: skip
        out.append(f"<div><h3>Roofline ({_esc(best['device'])})</h3>{chart}</div></div>")
    out.append("</body></html>")
    return "\n".join(out)


def _series(store: Store, task: str) -> dict[str, list[tuple[int, float]]]:
    sql = """
      select r.id as run, d.round, d.best_speedup from rounds d join runs r on r.id = d.run_id
      where r.task_name = ? and d.best_speedup is not null order by r.started_at, d.round
    """
    series: dict[str, list[tuple[int, float]]] = {}
    for row in store.db.query(sql, [task]):
        series.setdefault(row["run"], []).append((row["round"], row["best_speedup"]))
    return series
