"""The torch.compile baseline's cache: one record per task source, shape, device and software versions.

Compiling the reference takes seconds to a minute, and its time does not
depend on the candidate, so an evaluation that finds a record here reuses it
(``cached: true`` in the verdict) and times only the eager reference beside the
candidate. The record's figure is used as a ratio to the eager reference's
figure of the same evaluation (both timed in interleaved blocks), scaled by
today's eager figure: a state of the machine that slowed the evaluation which
made the record (another job, a candidate's leftovers) does not persist in it. A record is written only by the host, from blocks the trusted
reference runner timed interleaved with a candidate's, and lives under forge's
cache root, where no isolated candidate can write.
"""

from __future__ import annotations

import hashlib
import json
import os
import time

from forge_sandbox import isolation
from forge_sandbox.host import UnsafeFile, open_regular_file

COMPILE_MODE = "default"


def key(task_source: str, overrides: dict, size: str, environment: dict, mode: str) -> str:
    """What a compiled reference's time depends on."""
    facts = {
        "task": hashlib.sha256(task_source.encode()).hexdigest(),
        "overrides": overrides,
        "size": size,
        "device": environment.get("device_name") or environment.get("device"),
        "capability": environment.get("compute_capability"),
        "torch": environment.get("torch"),
        "triton": environment.get("triton"),
        "cuda": environment.get("cuda"),
        "threads": environment.get("cpu_threads"),
        "mode": mode,
    }
    return hashlib.sha256(json.dumps(facts, sort_keys=True, default=str).encode()).hexdigest()[:32]


def _path(record_key: str) -> str:
    return os.path.join(isolation.cache_root(), "baselines", f"{record_key}.json")


def load(record_key: str) -> dict | None:
    """The cached compile baseline, or None (missing, unreadable or not a well-formed record)."""
    try:
        fd = open_regular_file(_path(record_key))
    except UnsafeFile:
        return None
    try:
        with os.fdopen(fd, "rb") as f:
            record = json.loads(f.read(65536))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or not _positive(record.get("ms")):
        return None
    if not _positive(record.get("eager_ms")):
        record["eager_ms"] = None  # an older or damaged record: its figure is used as it stands
    return record


def _positive(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and x > 0


def save(record_key: str, record: dict) -> None:
    path = _path(record_key)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    partial = f"{path}.{os.getpid()}.tmp"
    with open(partial, "w") as f:
        json.dump({**record, "measured_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}, f)
    os.replace(partial, path)
