"""forge's own code in the candidate's process, as it was before the candidate was imported.

The candidate's runner (its harness, operator census, timing, layouts, weights and settings checks)
runs in the candidate's process. With the static check on, a candidate cannot name forge's modules;
without it, rebinding one of forge's functions changes what the runner checks: the layouts handed over
contiguous after all, the numeric settings reported unchanged, the census switched off (a review with
the static check off, 2026-11-26: all three passed). This takes every function and class that
``forge_sandbox``'s modules hold, and every function in forge's own classes, by identity and by what
each is made of (its code, defaults, closure), and the classes of the runner's own objects, before the
candidate is imported, and says which were rebound or changed since.

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
# And its constants (an upper-case name holding a number, a string or a tuple): with the static check off,
# ``variants.EVAL_MODE = "x"`` made the trial in evaluation mode a plain one (a review of 2026-11-28).
_CONSTANT = (str, bytes, int, float, tuple, frozenset)
# And its tables (an upper-case name holding a dict, list or set), by their contents: with the static check
# off, ``variants.MIXED_LAYOUTS.clear()`` would drop layouts from the runner's trials, ``_STATES`` the
# model's states (a review of 2026-12-02 named them). But those filled as forge runs, its caches.
_TABLE = (dict, list, set)
_FILLED_AS_IT_RUNS = frozenset({"_HEADER_MACROS", "_ELF_CACHE", "_TURNS_UNTIL", "_NAMES_OF_CODE"})
_MISSING = object()
_CLASS = "__class__"  # the name an instance's entry is kept under (snapshot's ``instances``)


def snapshot(instances: tuple = (), pinned: tuple = ()) -> list[tuple]:
    """(where, holder, name, value, parts): every function, class, module and constant that forge_sandbox's
    modules hold, and every function in forge's own classes, as they are now, each with what a function is
    made of (_parts); for each of ``instances`` (the runner's own objects), its class; and for each
    (holder, names) of ``pinned``, the objects those attributes hold: another harness or channel put in
    their place, of a class of the candidate's own, leaves every class and function of forge's as it was
    (a review with the static check off, 2026-11-29: a harness whose timing loop was leaner than the
    reference's, found through gc and swapped in, passed at 3.5x where the honest kernel makes 1.8x)."""
    taken = []
    for module_name, module in list(sys.modules.items()):
        if module is None or not (module_name == "forge_sandbox" or module_name.startswith("forge_sandbox.")):
            continue
        for name, value in list(vars(module).items()):
            table = isinstance(value, _TABLE) and name.isupper() and name not in _FILLED_AS_IT_RUNS
            if isinstance(value, _MODULE_LEVEL) or isinstance(value, _CONSTANT) and name.isupper() or table:
                taken.append((module_name, module, name, value, _parts(value)))
            if isinstance(value, type) and value.__module__ == module_name:  # a class of forge's own
                for key, member in list(vars(value).items()):
                    if isinstance(member, _CODE):
                        taken.append((f"{module_name}.{value.__qualname__}", value, key, member, _parts(member)))
    for instance in instances:
        taken.append((f"a {type(instance).__qualname__}", instance, _CLASS, type(instance), ()))
    for holder, names in pinned:
        for name in names:
            value = vars(holder).get(name, _MISSING)
            taken.append((f"a {type(holder).__qualname__}", holder, name, value, _parts(value)))
    return taken


def changed(taken: list[tuple]) -> list[str]:
    """The names in ``taken`` that hold something else now (or nothing), or whose function was changed in
    place (its code, defaults or closure), as ``where.name``; for an instance, its class changed or a
    function of its class shadowed by an attribute of its own (a method replaced on the object alone)."""
    found = []
    for where, holder, name, value, parts in taken:
        if name == _CLASS:
            if type(holder) is not value:
                found.append(f"{where}.__class__")
            shadowed = [key for key in vars(holder) if isinstance(_class_attribute(value, key), _CODE)]
            found += [f"{where}.{key}" for key in shadowed]
            continue
        now = vars(holder).get(name, _MISSING)
        if now is not value or not _same(_parts(now), parts):
            found.append(f"{where}.{name}")
    return found


def _class_attribute(cls: type, name: str):
    for klass in cls.__mro__:
        if name in vars(klass):
            return vars(klass)[name]
    return None


def _parts(value) -> tuple:
    """What a function's behaviour is made of besides the function object itself, which keeps its
    identity when these are replaced in place (``f.__code__ = other.__code__``: a review, 2026-11-27):
    its code, defaults, keyword defaults and the contents of its closure's cells; for a property, its
    functions'; for a class or static method, its function's; for a table, what it holds."""
    if isinstance(value, _TABLE):  # its entries, and theirs where they are tables too
        items = [x for pair in value.items() for x in pair] if isinstance(value, dict) else list(value)
        return tuple(x for item in items for x in ((item, *_parts(item)) if isinstance(item, _TABLE) else (item,)))
    if isinstance(value, (classmethod, staticmethod)):
        value = value.__func__
    functions = [value.fget, value.fset, value.fdel] if isinstance(value, property) else [value]
    parts = []
    for function in functions:
        if isinstance(function, types.FunctionType):
            keywords = function.__kwdefaults__ or {}
            parts += [function.__code__, function.__defaults__, *keywords.values(),
                      *(_contents(cell) for cell in function.__closure__ or ())]  # fmt: skip
        else:
            parts.append(function)
    return tuple(parts)


def _contents(cell) -> object:
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell
        return _MISSING


def _same(now: tuple, then: tuple) -> bool:
    return len(now) == len(then) and all(a is b for a, b in zip(now, then))
