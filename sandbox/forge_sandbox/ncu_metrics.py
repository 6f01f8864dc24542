"""Nsight Compute's CSV pages read into a compact record per kernel, for the judge and the user.

Two pages of ``ncu -i REPORT --csv --print-units base --print-kernel-base function``:
the *raw* page (wide: one row per profiled launch, one column per metric, a
units row under the header) and the *details* page (long: one row per section
metric or rule result; since ncu 2023.2 rule results carry their own columns,
``Rule Name``, ``Rule Type``, ``Rule Description``, ``Estimated Speedup Type``
and ``Estimated Speedup``). Only names and units are trusted, never column
positions, so that other ncu versions read the same or degrade to fewer fields.
Plain text in, plain data out: tested without a GPU.
"""

from __future__ import annotations

import csv
import io
import math
import re

from forge_sandbox.kernel_names import is_own_kernel

# The default metric list: speed of light, DRAM traffic, occupancy and its limiters,
# registers and shared memory, cache hit rates, tensor pipes, warp stalls (CudaForge's
# ablation picked metrics of these kinds; the full set cost more and did worse).
SECTIONS = (
    "SpeedOfLight",
    "LaunchStats",
    "Occupancy",
    "MemoryWorkloadAnalysis",
    "MemoryWorkloadAnalysis_Tables",  # where the uncoalesced-access and bank-conflict rules live
    "ComputeWorkloadAnalysis",
    "SchedulerStats",
    "WarpStateStats",
)
# Collected on top of the sections (which report DRAM traffic only as a share of peak).
# If an ncu version does not know one, the profile is retried with the sections alone.
EXTRA_METRICS = ("dram__bytes_read.sum", "dram__bytes_write.sum")

FIELDS = {  # record key -> metric names, first found wins
    "duration_ns": ("gpu__time_duration.sum",),
    "sm_throughput_pct": ("sm__throughput.avg.pct_of_peak_sustained_elapsed",),
    "memory_throughput_pct": ("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",),
    "dram_throughput_pct": (
        "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
        "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    ),
    "dram_read_bytes": ("dram__bytes_read.sum",),
    "dram_write_bytes": ("dram__bytes_write.sum",),
    "achieved_occupancy_pct": ("sm__warps_active.avg.pct_of_peak_sustained_active",),
    "theoretical_occupancy_pct": ("sm__maximum_warps_per_active_cycle_pct",),
    "registers_per_thread": ("launch__registers_per_thread",),
    "static_smem_bytes": ("launch__shared_mem_per_block_static",),
    "dynamic_smem_bytes": ("launch__shared_mem_per_block_dynamic",),
    "l1_hit_pct": ("l1tex__t_sector_hit_rate.pct",),
    "l2_hit_pct": ("lts__t_sector_hit_rate.pct",),
}
_LIMIT = re.compile(r"^launch__occupancy_limit_(\w+)$")  # blocks per SM each resource allows
_TENSOR = re.compile(r"^sm__(inst_executed_)?pipe_tensor\w*\.(avg\.)?pct_of_peak_sustained_(active|elapsed)$")
_STALLS = (  # warp stall reasons, as ncu's WarpStateStats reports them (cycles per issued instruction)
    re.compile(r"^smsp__average_warps_issue_stalled_(\w+?)_per_issue_active\.ratio$"),
    re.compile(r"^smsp__warp_issue_stalled_(\w+?)_per_warp_active\.pct$"),
)
_NOT_STALLS = {"selected"}  # issuing, not stalled

_TIME = {"ns": 1.0, "nsecond": 1.0, "us": 1e3, "usecond": 1e3, "ms": 1e6, "msecond": 1e6, "s": 1e9, "second": 1e9}
_SIZE = {
    "byte": 1.0,
    "kbyte": 1e3,
    "mbyte": 1e6,
    "gbyte": 1e9,
    "tbyte": 1e12,
    "b": 1.0,
    "kb": 1e3,
    "mb": 1e6,
    "gb": 1e9,
}
_UNIT_OF = {"duration_ns": _TIME, "dram_read_bytes": _SIZE, "dram_write_bytes": _SIZE}  # other fields: as printed


class NcuFormatError(ValueError):
    """ncu's output is not a CSV page this parser knows."""


def _table(text: str) -> list[list[str]]:
    """The CSV rows from the header on; ncu may print ==PROF== and ==WARNING== lines first."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        raise NcuFormatError('no CSV header (a line starting with "ID") in ncu\'s output')
    return [row for row in csv.reader(io.StringIO("\n".join(lines[start:]))) if row]


def number(text: str) -> float | None:
    """A metric value as ncu prints it ("1,234.5", "n/a", "nan", "") as a finite float, or None."""
    text = (text or "").strip().replace(",", "")
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _rows(rows: list[list[str]], width: int) -> list[list[str]]:
    # Some ncu versions end a row early (no trailing empty fields): pad it to the header.
    return [row + [""] * (width - len(row)) for row in rows if len(row) <= width]


def parse_raw(text: str) -> list[dict]:
    """One record per profiled launch: id, kernel, block, grid, every metric's value and its unit."""
    rows = _table(text)
    header = rows[0]
    if "Kernel Name" not in header:
        raise NcuFormatError("the raw page has no 'Kernel Name' column")
    body = _rows(rows[1:], len(header))
    units = body.pop(0) if body and not body[0][0].strip() else [""] * len(header)
    col = {name: i for i, name in enumerate(header)}
    launches = []
    for row in body:
        metrics, metric_units = {}, {}
        for i, name in enumerate(header):
            if "__" in name and (value := number(row[i])) is not None:
                metrics[name], metric_units[name] = value, units[i].strip()
        launches.append(
            {
                "id": row[col["ID"]],
                "kernel": row[col["Kernel Name"]],
                "block": row[col["Block Size"]] if "Block Size" in col else "",
                "grid": row[col["Grid Size"]] if "Grid Size" in col else "",
                "metrics": metrics,
                "units": metric_units,
            }
        )
    return launches


def parse_rules(text: str) -> dict[str, list[dict]]:
    """Rule results (ncu's guided analysis) per launch id, from the details page."""
    rows = _table(text)
    header = rows[0]
    if "Rule Name" not in header:
        return {}  # an ncu older than 2023.2 prints rules only as text
    col = {name: i for i, name in enumerate(header)}

    def cell(row: list[str], name: str) -> str:
        i = col.get(name)
        return row[i].strip() if i is not None and i < len(row) else ""

    rules: dict[str, list[dict]] = {}
    for row in _rows(rows[1:], len(header)):
        if not cell(row, "Rule Name"):
            continue
        rules.setdefault(cell(row, "ID"), []).append(
            {
                "rule": cell(row, "Rule Name"),
                "type": cell(row, "Rule Type"),
                "section": cell(row, "Section Name"),
                "speedup_pct": number(cell(row, "Estimated Speedup")),
                "speedup_type": cell(row, "Estimated Speedup Type"),
                "text": " ".join(cell(row, "Rule Description").split()),
            }
        )
    return rules


def summarize_launch(launch: dict, rules: list[dict]) -> dict:
    """The fields the judge reads, from one launch's metrics; absent metrics stay absent."""
    m, units = launch["metrics"], launch.get("units", {})
    out: dict = {"kernel": launch["kernel"], "block": launch["block"], "grid": launch["grid"]}
    for key, names in FIELDS.items():
        name = next((n for n in names if n in m), None)
        if name is None:
            continue
        if key in _UNIT_OF:  # scaled to ns or bytes; a unit not known here drops the field, never guesses
            scale = _UNIT_OF[key].get(units.get(name, "").lower())
            if scale is None:
                continue
            out[key] = m[name] * scale
        else:
            out[key] = m[name]
    if "static_smem_bytes" in out or "dynamic_smem_bytes" in out:
        out["smem_per_block_bytes"] = out.pop("static_smem_bytes", 0) + out.pop("dynamic_smem_bytes", 0)
    limits = {g.group(1): v for name, v in m.items() if (g := _LIMIT.match(name))}
    if limits:
        out["occupancy_limits"] = limits  # blocks per SM each resource allows; the smallest binds
        out["occupancy_limiter"] = min(limits, key=lambda k: (limits[k], k))
    tensor = [v for name, v in m.items() if _TENSOR.match(name)]
    if tensor:
        out["tensor_pipe_pct"] = max(tensor)
    for pattern in _STALLS:
        stalls = {
            g.group(1): v for name, v in m.items() if (g := pattern.match(name)) and g.group(1) not in _NOT_STALLS
        }
        if stalls:
            top = sorted(stalls.items(), key=lambda kv: -kv[1])[:3]
            out["top_stalls"] = [[reason, value] for reason, value in top if value > 0]
            break
    out["rules"] = _advice(rules)
    return out


def _advice(rules: list[dict], keep: int = 4) -> list[dict]:
    """OPT and WRN rules, one per rule name (its largest gain): estimated ones first, whole-kernel before local."""
    best: dict[str, dict] = {}
    for r in rules:
        if r["type"] not in ("OPT", "WRN"):
            continue
        seen = best.get(r["rule"])
        if seen is None or (r["speedup_pct"] or 0) > (seen["speedup_pct"] or 0):
            best[r["rule"]] = r
    ranked = sorted(
        best.values(),
        key=lambda r: (r["speedup_pct"] is None, r["speedup_type"] != "global", -(r["speedup_pct"] or 0)),
    )
    return ranked[:keep]


def summarize(raw_csv: str, details_csv: str | None, own_names: list[str]) -> list[dict]:
    """One record per distinct kernel (its longest launch), the candidate's own kernels only when named."""
    launches = parse_raw(raw_csv)
    rules = parse_rules(details_csv) if details_csv else {}
    if own_names:
        launches = [launch for launch in launches if is_own_kernel(launch["kernel"], own_names)]
    longest: dict[str, dict] = {}
    for launch in launches:
        name = launch["kernel"]
        if name not in longest or _duration(launch) > _duration(longest[name]):
            longest[name] = launch
    records = [summarize_launch(launch, rules.get(launch["id"], [])) for launch in longest.values()]
    records.sort(key=lambda r: -r.get("duration_ns", 0))
    for r in records:
        r["launches"] = sum(1 for launch in launches if launch["kernel"] == r["kernel"])
    return records


def _duration(launch: dict) -> float:
    value = launch["metrics"].get("gpu__time_duration.sum", 0.0)
    return value * _TIME.get(launch.get("units", {}).get("gpu__time_duration.sum", "").lower(), 1.0)


def dram_bytes(records: list[dict]) -> float | None:
    """DRAM bytes read and written by the profiled kernels (their longest launch each, times launches)."""
    total, seen = 0.0, False
    for r in records:
        if "dram_read_bytes" in r or "dram_write_bytes" in r:
            seen = True
            total += (r.get("dram_read_bytes", 0) + r.get("dram_write_bytes", 0)) * r.get("launches", 1)
    return total if seen else None


def describe(ncu: dict, max_kernels: int = 3) -> list[str]:
    """Short lines per kernel for the judge's prompt and `forge show`."""
    lines = []
    for r in ncu.get("kernels", [])[:max_kernels]:
        parts = []
        if "duration_ns" in r:
            parts.append(f"{r['duration_ns'] / 1e3:.4g} us")
        if "sm_throughput_pct" in r or "memory_throughput_pct" in r:
            parts.append(
                f"SM {_pct(r.get('sm_throughput_pct'))} / memory {_pct(r.get('memory_throughput_pct'))} of peak"
                + (f" (DRAM {_pct(r['dram_throughput_pct'])})" if "dram_throughput_pct" in r else "")
            )
        if "dram_read_bytes" in r or "dram_write_bytes" in r:
            parts.append(f"DRAM read {_mb(r.get('dram_read_bytes'))}, written {_mb(r.get('dram_write_bytes'))}")
        if "achieved_occupancy_pct" in r:
            occ = f"occupancy {_pct(r['achieved_occupancy_pct'])} achieved"
            if "theoretical_occupancy_pct" in r:
                occ += f" of {_pct(r['theoretical_occupancy_pct'])} theoretical"
            if "occupancy_limiter" in r:
                occ += f" (limited by {r['occupancy_limiter'].replace('_', ' ')})"
            parts.append(occ)
        if "registers_per_thread" in r:
            parts.append(
                f"{r['registers_per_thread']:.0f} registers/thread, {r.get('smem_per_block_bytes', 0):.0f} B shared/block"
            )
        if "l1_hit_pct" in r or "l2_hit_pct" in r:
            parts.append(f"L1 hit {_pct(r.get('l1_hit_pct'))}, L2 hit {_pct(r.get('l2_hit_pct'))}")
        if "tensor_pipe_pct" in r:
            parts.append(f"tensor pipes {_pct(r['tensor_pipe_pct'])}")
        if r.get("top_stalls"):
            parts.append("top stalls: " + ", ".join(f"{name} {value:.3g}" for name, value in r["top_stalls"]))
        shape = f"grid {r['grid']} block {r['block']}" if r.get("grid") else ""
        times = f", {r['launches']} launches" if r.get("launches", 1) > 1 else ""
        lines.append(f"ncu {r['kernel']} ({shape}{times}): " + "; ".join(parts))
        for rule in r.get("rules", [])[:3]:
            gain = f", est. {rule['speedup_pct']:.3g}% {rule['speedup_type']}".rstrip() if rule["speedup_pct"] else ""
            lines.append(f"ncu advice [{rule['type']}{gain}] {rule['rule']}: {rule['text'][:240]}")
    return lines


def _pct(value) -> str:
    return "?" if value is None else f"{value:.0f}%"


def _mb(value) -> str:
    return "?" if value is None else f"{value / 1e6:.3g} MB"
