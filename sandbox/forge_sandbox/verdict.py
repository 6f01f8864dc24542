"""The verdict: the one structured record an evaluation produces."""

from __future__ import annotations

import secrets
from dataclasses import asdict, dataclass, field

PASSED = "passed"
COMPILE_ERROR = "compile_error"
RUNTIME_ERROR = "runtime_error"
INCORRECT = "incorrect"
REJECTED = "rejected"
TIMEOUT = "timeout"
CRASHED = "crashed"
STATUSES = (PASSED, COMPILE_ERROR, RUNTIME_ERROR, INCORRECT, REJECTED, TIMEOUT, CRASHED)


@dataclass
class Verdict:
    """What forge concluded about one candidate, and the evidence for it.

    Times are medians in milliseconds over the timed calls; ``speedup`` is
    reference_ms / candidate_ms and is set only when the status is ``passed``.
    """

    status: str
    reasons: list[str] = field(default_factory=list)
    candidate_ms: float | None = None
    reference_ms: float | None = None
    speedup: float | None = None
    candidate_iqr_ms: float | None = None
    reference_iqr_ms: float | None = None
    stage: str = ""  # the pipeline stage that decided the status
    warnings: list[str] = field(default_factory=list)
    backends: list[str] = field(default_factory=list)
    static_findings: list[str] = field(default_factory=list)
    compile_log: str = ""  # compiler output kept for the agents (ptxas lines, errors)
    log_tail: str = ""  # the last lines the candidate's process printed
    correctness: list[dict] = field(default_factory=list)  # one entry per input configuration
    timing: dict = field(default_factory=dict)
    hardware: dict = field(default_factory=dict)  # roofline, kernel census, ptxas, and what was not measured
    environment: dict = field(default_factory=dict)
    task: str = ""
    candidate: str = ""
    duration_s: float | None = None

    @property
    def passed(self) -> bool:
        return self.status == PASSED

    def to_dict(self) -> dict:
        return asdict(self)


class Stop(Exception):
    """Ends the pipeline with a verdict."""

    def __init__(self, status: str, *reasons: str, stage: str = "") -> None:
        super().__init__(status)
        self.status = status
        self.reasons = [r for r in reasons if r]
        self.stage = stage


def draw_seed() -> int:
    """A seed the candidate cannot predict, drawn on the host."""
    return secrets.randbits(62)
