"""forge's execution side: compile, verify and time candidate kernels.

Everything here runs beside untrusted code and imports only the standard
library and torch, and (inside runner processes, when a candidate needs
them) triton or cupy. The public entry point is :func:`evaluate`.
"""

from forge_sandbox.evaluate import EvalOptions, evaluate
from forge_sandbox.verdict import STATUSES, Verdict

__all__ = ["EvalOptions", "STATUSES", "Verdict", "evaluate"]
