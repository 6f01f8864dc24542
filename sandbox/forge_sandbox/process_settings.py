"""The process's numeric settings, PyTorch's and the processor's, which a kernel module must leave as it
found them.

A module that sets TF32 matmuls, a lower float32 matmul precision, flush-to-zero or another default
dtype when it is imported changes every computation of the process that imports it, the user's
model's included, and forge's comparison, made in another process, never sees it (red team,
2026-11-26: a softmax that set three of them at import passed). So does one that leaves the calling
thread's floating-point control changed: rounding toward +inf, or a trap on division by zero that kills
the user's process at its first inf (a review, 2026-11-29: both passed). The candidate's runner takes
these before the candidate is imported and reports any that differ after each command
(candidate_runner). Flags that change only speed (cudnn.benchmark) are not numeric and not here; the
CPU thread count is, since it sets the speed of everything else the importing process computes.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import platform
import warnings

import torch


def _flushes_denormals() -> bool:
    # torch.set_flush_denormal has no getter: a float32 denormal, multiplied by one, is zero under it
    return (torch.full((1,), 1e-39, dtype=torch.float32) * 1.0).item() == 0.0


@functools.cache
def _libm():
    return ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")


def _floating_point_control() -> str:
    """The calling thread's floating-point control: rounding mode, which exceptions trap, flush-to-zero.
    On x86-64 both units', the x87's control word and SSE's MXCSR (the C library's fegetround and
    fegetexcept read the x87's alone, and a kernel may set MXCSR directly), without the status flags
    that any computation sets."""
    if platform.machine().lower() in ("x86_64", "amd64"):
        environment = ctypes.create_string_buffer(64)  # fenv_t: the x87's 28 bytes, then MXCSR
        if _libm().fegetenv(environment) != 0:
            raise OSError("fegetenv failed")
        control = int.from_bytes(environment.raw[0:2], "little") & 0x0F3F  # traps, precision, rounding
        mxcsr = int.from_bytes(environment.raw[28:32], "little") & 0xFFC0  # all but the status flags
        return f"x87 control word {control:#06x}, MXCSR {mxcsr:#06x}"
    return f"rounding mode {_libm().fegetround()}, traps {_libm().fegetexcept()}"


def _global_module_hooks() -> str:
    """The hooks registered for every module of the process (torch.nn.modules.module's global registries:
    register_module_forward_hook and its kin), by registry; a hook there reaches every layer of the
    importing user's model (a review, 2026-11-29: every Linear's output scaled, every Dropout made the
    identity, and the candidate passed)."""
    registries = vars(torch.nn.modules.module)
    held = {
        name: len(value)
        for name, value in registries.items()
        if name.startswith("_global_") and isinstance(value, dict)
    }
    return ", ".join(f"{name}: {count}" for name, count in sorted(held.items()) if count) or "none"


_GETTERS = {
    "floating-point control (rounding, traps, flush-to-zero)": _floating_point_control,
    "global module hooks": _global_module_hooks,
    # not numeric, but the whole process's speed: a forward that set one thread passed (a review, 2026-11-29)
    "CPU threads": torch.get_num_threads,
    # mixed precision switched on for the whole thread (a review, 2026-11-29: at import, so that a user's
    # Linear returned bfloat16)
    **{
        f"autocast ({device})": (
            lambda device=device: f"{torch.is_autocast_enabled(device)} {torch.get_autocast_dtype(device)}"
        )
        for device in ("cpu", "cuda")
    },
    "default dtype": torch.get_default_dtype,
    "autograd enabled": torch.is_grad_enabled,
    "anomaly detection": torch.is_anomaly_enabled,
    "deterministic algorithms": torch.are_deterministic_algorithms_enabled,
    "float32 matmul precision": torch.get_float32_matmul_precision,
    "torch.backends.cuda.matmul.allow_tf32": lambda: torch.backends.cuda.matmul.allow_tf32,
    "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction": (
        lambda: torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction
    ),
    "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction": (
        lambda: torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction
    ),
    "torch.backends.cudnn.allow_tf32": lambda: torch.backends.cudnn.allow_tf32,
    "flush denormals to zero": _flushes_denormals,
    "default device": lambda: torch.get_default_device(),
    # torch 2.9's per-backend precision (a fresh review, 2026-11-26: TF32 turned on this way unseen)
    **{
        f"torch.backends.{path}.fp32_precision".replace("backends..", "backends."): (
            lambda path=path: _attribute(f"{path}.fp32_precision")
        )
        for path in (
            "",
            "cuda.matmul",
            "cudnn",
            "cudnn.conv",
            "cudnn.rnn",
            "mkldnn",
            "mkldnn.matmul",
            "mkldnn.conv",
            "mkldnn.rnn",
        )
    },
}


def _attribute(path: str):
    value = torch.backends
    for part in path.strip(".").split("."):
        value = getattr(value, part)
    return value


def snapshot() -> dict[str, str]:
    """Each setting this build of PyTorch can report, as text."""
    values = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TF32 flags' deprecation, into the log the verdict quotes
        for name, getter in _GETTERS.items():
            try:
                values[name] = repr(getter())
            except Exception:  # noqa: BLE001 - a setting this build does not have is not compared
                continue
    return values


# Precision settings at their exact values: a module that sets one of these (TF32 off, as an honest
# kernel's file may) asks for no less precision than the process had, and is not held to it.
_EXACT = {
    "float32 matmul precision": {"'highest'"},
    "flush denormals to zero": {"False"},
    **{name: {"False"} for name in _GETTERS if "allow_" in name},
    **{name: {"'none'", "'ieee'"} for name in _GETTERS if name.endswith("fp32_precision")},
}


def changed(before: dict[str, str]) -> list[str]:
    """'name: before -> now' for each setting that differs from ``before``, but for a precision setting
    moved to its exact value."""
    now = snapshot()
    return [
        f"{name}: {value} -> {now[name]}"
        for name, value in before.items()
        if name in now and now[name] != value and now[name] not in _EXACT.get(name, ())
    ]
