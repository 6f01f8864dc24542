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

    Times are milliseconds per call: the median over timed blocks of each block's
    mean (benchmark.py). ``speedup`` is over eager PyTorch (reference_ms /
    candidate_ms), ``speedup_vs_compile`` over the task's reference under
    torch.compile; both are set only when the status is ``passed``.
    ``baselines`` holds both references' times: ``{"eager": {"ms", "iqr_ms"},
    "compile": {"ms", "iqr_ms", "mode", "cached"} or {"ms": None, "reason"}}``.
    """

    status: str
    reasons: list[str] = field(default_factory=list)
    candidate_ms: float | None = None
    reference_ms: float | None = None  # the eager baseline, as baselines["eager"]["ms"]
    speedup: float | None = None
    speedup_vs_compile: float | None = None
    candidate_iqr_ms: float | None = None
    reference_iqr_ms: float | None = None
    baselines: dict = field(default_factory=dict)
    own_share: float | None = None  # the share of forward's time spent in the candidate's own kernels
    torch_ops: dict = field(default_factory=dict)  # the work PyTorch did in the candidate's forward, by operator
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
    stage_seconds: dict = field(default_factory=dict)  # wall seconds each pipeline stage took, in order

    @property
    def passed(self) -> bool:
        return self.status == PASSED

    def to_dict(self) -> dict:
        return asdict(self)


# A reason may quote the candidate (its exception, its compiler's error): as much as a person or the
# judge reads, not what a candidate chose. (Every string the host reads from a candidate's runner is
# bounded too: protocol.UNTRUSTED_TEXT_CHARS.)
REASON_CHARS = 4000


class Stop(Exception):
    """Ends the pipeline with a verdict; ``log_tail`` and ``compile_log`` go into it when given."""

    def __init__(self, status: str, *reasons: str, stage: str = "", log_tail: str = "", compile_log: str = "") -> None:
        super().__init__(status)
        self.status = status
        self.reasons = [shortened(str(r), REASON_CHARS) for r in reasons if r]
        self.stage = stage
        self.log_tail = log_tail
        self.compile_log = compile_log


def shortened(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how many went, where it is longer."""
    return text if len(text) <= limit else f"{text[:limit]}... [{len(text) - limit} characters cut]"


def draw_seed() -> int:
    """A seed the candidate cannot predict, drawn on the host."""
    return secrets.randbits(62)
