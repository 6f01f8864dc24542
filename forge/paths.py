"""Where forge's bundled tasks and prompts live, installed or in a checkout."""

from __future__ import annotations

import os

_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def bundled_dir(name: str) -> str:
    """`tasks` or `prompts`: package data in a wheel, the top-level folder in a checkout."""
    installed = os.path.join(_PACKAGE, "_bundled", name)
    if os.path.isdir(installed):
        return installed
    return os.path.join(os.path.dirname(_PACKAGE), name)


def resolve_task(spec: str) -> str:
    """A task file path, or the name of a bundled task (`softmax_rows`)."""
    if os.path.exists(spec):
        return spec
    candidate = os.path.join(bundled_dir("tasks"), spec if spec.endswith(".py") else spec + ".py")
    if os.path.exists(candidate):
        return candidate
    raise FileNotFoundError(f"{spec}: no such task file, and no bundled task of that name (see `forge tasks`)")
