"""Loading task and candidate files (KernelBench format) inside a runner process.

A task file defines ``Model``, ``get_inputs()`` and ``get_init_inputs()``,
exactly as KernelBench does, and may declare forge's optional extras:

* ``SMALL``: module-global overrides that give CPU-sized shapes for tests (a dtype it replaces is
  verified at the task's own too: :func:`own_dtypes`);
* ``CONFIGS`` / ``SMALL_CONFIGS``: extra overrides (other shapes) to verify;
* ``TOLERANCE``: ``{"atol", "rtol", "rel_norm"}`` replacing the dtype defaults;
* ``get_flops()`` / ``get_bytes()``: useful FLOPs and compulsory DRAM bytes.

Sizes are module globals that ``get_inputs`` reads when called, so an override
is a ``setattr`` on a freshly executed module.
"""

from __future__ import annotations

import importlib.util
import keyword
import os
import re
import sys
import uuid
from types import ModuleType

SIZES = ("default", "small")


def resolve_size(size: str, device: str, task_path: str) -> str:
    """``auto``: the task's SMALL shapes on the CPU when it declares them, its full shapes otherwise.

    Read from the source text, so that the host never executes the task.
    """
    if size != "auto":
        return size
    try:
        with open(task_path) as f:
            declares_small = re.search(r"^SMALL\s*=", f.read(), re.M) is not None
    except OSError:
        declares_small = False
    return "small" if device == "cpu" and declares_small else "default"


class TaskError(Exception):
    """A task file that cannot be used; the message is one line naming what is wrong."""


def export_name(task: str) -> str:
    """A Python identifier for a task's exported function and custom op (KernelBench names start with a
    digit)."""
    name = re.sub(r"\W", "_", task).strip("_") or "kernel"
    if not name.isidentifier() or keyword.iskeyword(name):
        name = "k_" + name
    return name


def kernel_module_name(task_path: str) -> str:
    """The name the candidate's module runs under, in forge's runner and in the module ``forge export``
    writes alike: a kernel that told the two apart by its ``__name__`` was right under forge and wrong
    (or harmful, at import) in use, and its selftest could not see it (a review, 2026-11-29)."""
    return f"forge_export_{export_name(os.path.splitext(os.path.basename(task_path))[0])}_kernel"


def load_module(path: str, kind: str, source: str | None = None, name: str | None = None) -> ModuleType:
    """Execute a Python file as a fresh module, with a unique name unless ``name``.

    With ``source``, that text is executed rather than whatever the file holds
    now: the host reads a task once, so that a candidate that rewrites the
    task file on disk cannot change the reference it is judged against; the
    module is then made as an exported module makes it (a plain module, no
    spec or loader).
    """
    name = name or f"{kind}_{uuid.uuid4().hex[:8]}"
    if source is None:
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise TaskError(f"{path}: not a Python file")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses and pickling look modules up by name
        spec.loader.exec_module(module)
        return module
    module = ModuleType(name)
    module.__file__ = path
    sys.modules[name] = module
    exec(compile(source, path, "exec"), module.__dict__)
    return module


def configurations(module: ModuleType, size: str) -> list[dict]:
    """The override dicts to verify with: the base size first, then the extra shapes."""
    if size not in SIZES:
        raise TaskError(f"unknown size {size!r}; expected one of {', '.join(SIZES)}")
    base = dict(getattr(module, "SMALL", {}) or {}) if size == "small" else {}
    if size == "small" and not base:
        raise TaskError("the task declares no SMALL sizes, so it cannot run at size 'small'")
    extras = getattr(module, "SMALL_CONFIGS" if size == "small" else "CONFIGS", []) or []
    configs = [base]
    for extra in extras:
        if not isinstance(extra, dict):
            raise TaskError("CONFIGS / SMALL_CONFIGS must be a list of dicts of module-global overrides")
        configs.append({**base, **extra})
    own = own_dtypes(module, base)
    if own:
        configs.append({**base, **own})
    return configs


def own_dtypes(module: ModuleType, overrides: dict) -> dict:
    """The dtypes that ``overrides`` (SMALL) replaces, at the task's own values.

    A task that runs float32 on the CPU at its small size is still about its own dtype (an fp16
    GEMM): a kernel right only in float32 is not right. So its small shapes are also verified at the
    task's own dtypes (:func:`configurations` adds them last), where the reference runs in them."""
    import torch

    return {
        key: getattr(module, key)
        for key, value in overrides.items()
        if isinstance(value, torch.dtype)
        and isinstance(getattr(module, key, None), torch.dtype)
        and getattr(module, key) != value
    }


def load_task(path: str, overrides: dict | None = None, source: str | None = None) -> ModuleType:
    """Load a task file (or its ``source`` as read earlier), check the KernelBench interface, apply overrides."""
    try:
        module = load_module(path, "task", source)
    except TaskError:
        raise
    except SyntaxError as exc:
        raise TaskError(f"{path}: syntax error at line {exc.lineno}: {exc.msg}") from None
    except Exception as exc:
        raise TaskError(f"{path}: importing it raised {type(exc).__name__}: {exc}") from None
    missing = [n for n in ("Model", "get_inputs", "get_init_inputs") if not callable(getattr(module, n, None))]
    if missing:
        raise TaskError(f"{path}: missing {', '.join(missing)} (a task defines Model, get_inputs and get_init_inputs)")
    for key, value in (overrides or {}).items():
        if not hasattr(module, key):
            raise TaskError(f"{path}: override {key!r} names no module global")
        setattr(module, key, value)
    return module


def call_task_function(module: ModuleType, name: str, path: str):
    """Call get_inputs / get_init_inputs, turning any failure into a one-line TaskError."""
    try:
        value = getattr(module, name)()
    except Exception as exc:
        raise TaskError(f"{path}: {name}() raised {type(exc).__name__}: {exc}") from None
    if not isinstance(value, (list, tuple)):
        raise TaskError(f"{path}: {name}() must return a list, got {type(value).__name__}")
    return list(value)


def declared_number(module: ModuleType, name: str) -> float | None:
    """get_flops() / get_bytes() when the task declares them."""
    fn = getattr(module, name, None)
    if not callable(fn):
        return None
    value = fn()
    return float(value) if value is not None else None
