"""forge's own code in the candidate's process, as it was before the candidate was imported.

The candidate's runner (its harness, operator census, timing, layouts, weights and settings checks)
runs in the candidate's process. With the static check on, a candidate cannot name forge's modules;
without it, rebinding one of forge's functions changes what the runner checks: the layouts handed over
contiguous after all, the numeric settings reported unchanged, the census switched off (a review with
the static check off, 2026-11-26: all three passed). This takes every function and class that
``forge_sandbox``'s modules hold, and every function in forge's own classes, by identity, before the
candidate is imported, and says which were rebound since.

A speed bump, like every check made inside the candidate's process: code there can undo this one too.
What holds against that is the host's own evidence (the outputs it reads, its samples and clocks).
"""

from __future__ import annotations

import sys
import types

_CODE = (types.FunctionType, types.BuiltinFunctionType, type, classmethod, staticmethod, property)
# A module's names for other modules too: rebinding ``candidate_runner.variants`` would hand the
# runner another module.
_MODULE_LEVEL = (*_CODE, types.ModuleType)
_MISSING = object()


def snapshot() -> list[tuple[str, object, str, object]]:
    """(where, holder, name, value): every function, class and module that forge_sandbox's modules hold,
    and every function in forge's own classes, as they are now."""
    taken = []
    for module_name, module in list(sys.modules.items()):
        if module is None or not (module_name == "forge_sandbox" or module_name.startswith("forge_sandbox.")):
            continue
        for name, value in list(vars(module).items()):
            if isinstance(value, _MODULE_LEVEL):
                taken.append((module_name, module, name, value))
            if isinstance(value, type) and value.__module__ == module_name:  # a class of forge's own
                for key, member in list(vars(value).items()):
                    if isinstance(member, _CODE):
                        taken.append((f"{module_name}.{value.__qualname__}", value, key, member))
    return taken


def changed(taken: list[tuple[str, object, str, object]]) -> list[str]:
    """The names in ``taken`` that hold something else now (or nothing), as ``where.name``."""
    return [f"{where}.{name}" for where, holder, name, value in taken if vars(holder).get(name, _MISSING) is not value]
