"""The CPU's interpreted Triton kernels, put through Triton's own compiler before they run.

Under ``TRITON_INTERPRET=1`` a @triton.jit body is plain Python. It can call numpy, a helper of
its module's, a function passed in as a constexpr or a method of any object it is given, and the
interpreter runs all of it. None of that compiles for a GPU. forge counts numpy's compute within an
interpreted launch as the kernel's own (the interpreter runs ``tl`` operations on numpy arrays),
which holds only where the body is Triton. So before an interpreted launch runs, the kernel, as its
arguments specialize it, is lowered by Triton's front end for a GPU target: source to Triton IR,
which needs no GPU, no driver and writes no cache. What the compiler refuses would not run on a
GPU; the launch raises :class:`NotTriton` with the compiler's message.

Triton's compiler itself calls plain Python it meets in a body (a function or object passed in as a
constexpr, a method of one, a function of a module the body names), once, at compile time; the
interpreter calls it in every program of every launch. So a kernel body, and every @triton.jit
function it reaches, may also name nothing but Triton's modules and functions, ``math``, plain
constants (numbers, strings, dtypes, tuples of them, as they are or in ``tl.constexpr``) and other
@triton.jit functions, and a launch may pass nothing else as a constexpr: no object through which
Python of the candidate's, or its data, is reached.

A launch this module cannot put through the compiler (an argument it cannot type, a Triton whose
compiler API differs) is neither refused nor proven: its time is not the interpreter's
(census.LaunchCounter.interpreted_spans), so numpy's work in it is numpy's.
"""

from __future__ import annotations

import atexit
import contextlib
import dis
import gc
import inspect
import sys
import types

import torch

# A GPU that Triton's NVIDIA back end compiles for without one being present (the H100's)
TARGET = ("cuda", 90, 32)

_POINTER = {
    torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16", torch.float64: "fp64",
    torch.int8: "i8", torch.int16: "i16", torch.int32: "i32", torch.int64: "i64", torch.uint8: "u8",
    torch.bool: "i1",
    **{getattr(torch, name): ty for name, ty in (("float8_e4m3fn", "fp8e4nv"), ("float8_e5m2", "fp8e5"))
       if hasattr(torch, name)},
}  # fmt: skip


class NotTriton(RuntimeError):
    """Triton's compiler refused an interpreted kernel: its body is Python that no GPU would run."""


class FrontEnd:
    """Triton's front end for one GPU target, made on first use; each kernel specialization once."""

    def __init__(self, interpreter=None) -> None:
        """``interpreter``: triton.runtime.interpreter, whose patches of triton.language this front end
        follows: a call of one interpreted function from another patches the language and leaves it so,
        and the compiler needs it as Triton made it."""
        self._pristine: dict = {}  # (id(obj), name) -> (obj, name, its value before any patch)
        self._interpreters_own: dict = {}  # id -> a value the interpreter's patches set
        scope_class = getattr(interpreter, "_LangPatchScope", None)
        set_attr = getattr(scope_class, "set_attr", None)
        if set_attr is not None:
            pristine = self._pristine

            def recorded(scope, obj, name, value):
                own = vars(obj) if hasattr(obj, "__dict__") else {}  # its own attribute, not one inherited
                pristine.setdefault((id(obj), name), (obj, name, own.get(name, _MISSING)))
                self._interpreters_own[id(value)] = value
                return set_attr(scope, obj, name, value)

            scope_class.set_attr = recorded
        self.seal()
        self._made = False
        self._tools = None  # (ASTSource, CompilationError, target, backend, options, context), or None
        self._seen: dict = {}  # specialization -> True (compiled), False (not tried) or the refusal
        self._language: dict = {}  # id of an interpreted function of triton.language's -> (it, compiled)

    def check(self, kernel, args: tuple, kwargs: dict) -> bool:
        """True when Triton's compiler accepted ``kernel`` (an InterpretedFunction) as these arguments
        specialize it, False when it could not be asked; raises NotTriton when it refused."""
        typed = _signature(kernel, args, kwargs)
        if typed is None:
            return False
        signature, constants = typed
        self.check_reach(kernel, constants)
        key = (id(kernel), tuple(signature.items()), tuple((k, _key(v)) for k, v in constants.items()))
        if key not in self._seen:
            self._seen[key] = self._compile(kernel, signature, constants)
        found = self._seen[key]
        if isinstance(found, str):
            raise NotTriton(found)
        return found

    def seal(self) -> None:
        """Take Triton's namespaces as they are now, forge's own wrappers in place and the candidate not
        yet imported: what a body reaches through them must be what is there now."""
        self._namespaces = _triton_namespaces()
        self._triton_objects = {id(v): v for names in self._namespaces.values() for v in names[1].values()
                                if _tritons_own(v)}  # fmt: skip

    def check_reach(self, kernel, constants: dict | None = None) -> None:
        """Raise NotTriton where ``kernel``'s body reaches Python beyond Triton now: every launch, and
        again once the candidate's own callables in the launch (its grid's, its hooks) have run, since
        the interpreter looks each name up as the body runs."""
        changed = self._namespaces_changed()
        if changed:
            raise NotTriton(
                f"Triton's own namespaces were changed before the Triton kernel {getattr(kernel, '__name__', '?')} "
                f"ran ({changed}): under the CPU's interpreter its body would run what was put there"
            )
        found = _python_reached(kernel, constants or {}, self._trusted)
        if found:
            raise NotTriton(found)

    def _trusted(self, value) -> bool:
        return self._triton_objects.get(id(value)) is value

    def _namespaces_changed(self) -> str:
        # the interpreter copies its own module's names into a kernel's module as it rewrites a kernel
        interpreters = self._namespaces.get("triton.runtime.interpreter", (None, {}))[1]
        for name, (holder, before) in self._namespaces.items():
            now = vars(holder)
            for key, value in now.items():
                if before.get(key, _MISSING) is value or self._interpreters_own.get(id(value)) is value:
                    continue
                if interpreters.get(key, _MISSING) is value and not isinstance(holder, type):
                    continue
                if not isinstance(holder, (type, types.ModuleType)) and not callable(value):
                    continue  # the interpreter's state as it runs (its builder's grid)
                if isinstance(holder, type) and any(
                    vars(base).get(key, _MISSING) is value for base in holder.__mro__[1:]
                ):
                    continue  # what it inherits, made its own (the interpreter's patches, undone, leave that)
                if key.startswith("__") and key.endswith("__") and type(value) in (dict, list, tuple, str):
                    continue  # Python's own data about a class (copyreg's __slotnames__, __annotations__)
                if (
                    isinstance(value, types.ModuleType)
                    and sys.modules.get(value.__name__) is value
                    and (
                        value.__name__.startswith("triton.") or value.__name__.split(".")[0] in sys.stdlib_module_names
                    )
                ):
                    continue  # a module Triton imported since (triton.language.extra.libdevice, ast): no numpy
                return f"{name}.{key}"
        return ""

    def _compile(self, kernel, signature: dict, constants: dict):
        tools = self._front_end()
        if tools is None:
            return False
        source_class, compilation_error, target, backend, options, context = tools
        from triton.runtime.interpreter import InterpretedFunction

        made: dict = {}
        constants = {k: _as_jit(v, made) if isinstance(v, InterpretedFunction) else v for k, v in constants.items()}
        try:
            with _language_compiled(self._language, self._pristine):
                source = source_class(_as_jit(kernel, made), signature, constants)
                source.make_ir(target, options, backend.get_codegen_implementation(options), backend.get_module_map(),
                               context)  # fmt: skip
        except compilation_error as error:
            if _caused_by(error, _Interpreted):
                return False  # an interpreted function this module did not turn into a compiled one

            lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
            return (f"Triton's compiler refuses the kernel {getattr(kernel, '__name__', '?')} for a GPU "
                    f"({lines[0] if lines else ''} {lines[-1] if len(lines) > 1 else ''}".rstrip()
                    + "): the CPU's interpreter runs a kernel body as Python, and forge verifies and times only "
                    "kernels that would also run on a GPU")  # fmt: skip
        except Exception:
            return False  # this module's reach, not the kernel's fault: not proven, not refused
        return True

    def _front_end(self):
        if not self._made:
            self._made = True
            try:
                from triton._C.libtriton import ir
                from triton.backends.compiler import GPUTarget
                from triton.compiler import ASTSource
                from triton.compiler.compiler import make_backend
                from triton.compiler.errors import CompilationError

                target = GPUTarget(*TARGET)
                backend = make_backend(target)
                options = backend.parse_options({})
                context = ir.context()
                ir.load_dialects(context)
                backend.load_dialects(context)
                self._tools = (ASTSource, CompilationError, target, backend, options, context)
                atexit.register(self._close)
            except Exception:
                self._tools = None
        return self._tools

    def _close(self) -> None:
        # Triton's bindings report every object of theirs still alive at exit as a leak, into the log
        # the verdict quotes: the compiler's context goes first
        self._tools = None
        gc.collect()


_CONSTANTS = (bool, int, float, complex, str, bytes)


def _plain(value, trusted, depth: int = 0) -> bool:
    """A value a kernel body may hold: a constant (of exactly a builtin type: a subclass's operators are
    Python), a dtype, ``math``, a @triton.jit function, or one of the objects Triton's modules held
    before the candidate was imported (``trusted``: its functions, classes, dtypes and modules)."""
    import math

    from triton.language.core import constexpr
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    if type(value) is constexpr:
        return _plain(value.value, trusted, depth)
    if value is None or type(value) in _CONSTANTS or type(value) is torch.dtype or value is math:
        return True
    if type(value) is tuple:
        return depth < 4 and all(_plain(v, trusted, depth + 1) for v in value)
    if type(value) in (InterpretedFunction, JITFunction):
        return True
    return trusted(value)


def _tritons_own(value) -> bool:
    """Defined by Triton (read before the candidate's code ran, so the names are Triton's word): its
    modules, functions and classes and their instances (tl.float32), not numpy, which its interpreter
    imports too."""
    if isinstance(value, types.ModuleType):
        return value.__name__.split(".")[0] == "triton"
    owner = value if isinstance(value, (type, types.FunctionType, types.BuiltinFunctionType)) else type(value)
    return (getattr(owner, "__module__", "") or "").split(".")[0] == "triton"


def _triton_namespaces() -> dict:
    """name -> (holder, its namespace as now) for Triton's language modules, its interpreter and the
    classes they define: what the interpreter runs a body with."""
    found = {}
    for name, module in list(sys.modules.items()):
        if module is None or not (name.startswith("triton.language") or name == "triton.runtime.interpreter"):
            continue
        found[name] = (module, dict(vars(module)))
        for key, value in list(vars(module).items()):
            if isinstance(value, type) and getattr(value, "__module__", "") == name:
                found[f"{name}.{key}"] = (value, dict(vars(value)))
    interpreter = sys.modules.get("triton.runtime.interpreter")
    for key in ("interpreter_builder", "interpreter_semantic"):
        held = getattr(interpreter, key, None)
        if held is not None and hasattr(held, "__dict__"):
            found[f"triton.runtime.interpreter.{key}"] = (held, dict(vars(held)))
    return found


def _python_reached(kernel, constants: dict, trusted) -> str:
    """Why ``kernel`` (or an interpreted kernel it names) reaches Python beyond Triton through a global
    it names or a constexpr it is passed; '' when it does not."""
    from triton.runtime.interpreter import InterpretedFunction

    name = getattr(kernel, "__name__", "?")
    for parameter, value in constants.items():
        if not _plain(value, trusted):
            return (f"the Triton kernel {name} is passed {parameter}={_what(value)} as a constexpr: under the CPU's "
                    "interpreter its body would run that Python in every program (a GPU's compiler runs it once); "
                    "a kernel is passed constants, dtypes and @triton.jit functions")  # fmt: skip
    seen, todo = set(), [kernel]
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        for global_name in _names_used(current.fn):
            value = current.fn.__globals__[global_name]
            if type(value) is InterpretedFunction:
                todo.append(value)
            elif not _plain(value, trusted):
                return (f"the Triton kernel {current.__name__} names {global_name} ({_what(value)}): under the CPU's "
                        "interpreter its body would reach that Python in every program; a kernel body names "
                        "Triton, math, constants and other @triton.jit functions")  # fmt: skip
    return ""


def _names_used(fn) -> set[str]:
    """The globals of its module that ``fn``'s body names (Python's own compiled names: no source)."""
    known = _NAMES_OF_CODE.get(id(fn.__code__))
    if known is not None and known[0] is fn.__code__:
        return {n for n in known[1] if n in fn.__globals__}
    names, codes = set(), [fn.__code__]
    while codes:
        code = codes.pop()
        names.update(i.argval for i in dis.get_instructions(code) if i.opname in ("LOAD_GLOBAL", "LOAD_NAME"))
        codes.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    _NAMES_OF_CODE[id(fn.__code__)] = (fn.__code__, frozenset(names))
    return {n for n in names if n in fn.__globals__}


_NAMES_OF_CODE: dict = {}  # id(code) -> (code, the global names it loads)


def _what(value) -> str:
    if type(value).__name__ == "constexpr" and type(value).__module__.startswith("triton"):
        return f"constexpr of {_what(value.value)}"
    kind = type(value).__name__
    label = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    return f"{kind} {label}" if isinstance(label, str) else kind


_MISSING = object()


class _Interpreted(Exception):
    """An interpreted function was called while Triton's compiler ran."""


@contextlib.contextmanager
def _language_compiled(made: dict, pristine: dict):
    """While the compiler runs, triton.language is as Triton made it: the interpreter's patches left
    behind are undone (``pristine``: what each attribute it patched held before; its next launch
    patches again what it needs); its own @jit
    functions (tl.zeros, tl.sum's combine functions, which TRITON_INTERPRET=1 made interpreted ones)
    are compiled ones again; and an interpreted function called all the same raises instead of
    patching the language."""
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    for obj, name, value in pristine.values():
        if value is _MISSING:
            if name in vars(obj):
                delattr(obj, name)
        elif vars(obj).get(name, _MISSING) is not value:
            setattr(obj, name, value)
    swapped = []
    for name, module in list(sys.modules.items()):
        if module is None or not (name == "triton.language" or name.startswith("triton.language.")):
            continue
        for attribute, value in list(vars(module).items()):
            if isinstance(value, InterpretedFunction):
                compiled = made.setdefault(id(value), (value, JITFunction(value.fn)))[1]
                swapped.append((module, attribute, value))
                setattr(module, attribute, compiled)
    called = InterpretedFunction.__call__

    def refuse(self, *args, **kwargs):
        raise _Interpreted(getattr(self, "__name__", "?"))

    InterpretedFunction.__call__ = refuse
    try:
        yield
    finally:
        InterpretedFunction.__call__ = called
        for module, attribute, value in swapped:
            setattr(module, attribute, value)


def _caused_by(error: BaseException, kind: type) -> bool:
    seen = 0
    while error is not None and seen < 32:
        if isinstance(error, kind):
            return True
        error, seen = error.__cause__ or error.__context__, seen + 1
    return False


def _key(value):
    try:
        hash(value)
        return value
    except TypeError:
        return repr(value)


def _signature(kernel, args: tuple, kwargs: dict) -> tuple[dict, dict] | None:
    """Triton's signature ({name: type}) and constants of a launch, or None where an argument has no
    type this module knows."""
    from triton.language.core import constexpr

    fn = getattr(kernel, "fn", None)
    if not isinstance(fn, types.FunctionType):
        return None
    try:
        parameters = inspect.signature(fn).parameters
        bound = inspect.signature(fn).bind(*args, **{k: v for k, v in kwargs.items() if k in parameters})
    except TypeError:
        return None
    bound.apply_defaults()
    signature, constants = {}, {}
    for name, value in bound.arguments.items():
        annotation = fn.__annotations__.get(name)
        if _is_constexpr(annotation) or type(value) is constexpr or value is None:
            signature[name] = "constexpr"
            constants[name] = value.value if type(value) is constexpr else value
        elif type(value) in (torch.Tensor, torch.nn.Parameter):  # a subclass's methods are Python
            if value.dtype not in _POINTER:
                return None
            signature[name] = "*" + _POINTER[value.dtype]
        elif type(value) is bool:  # exactly: a subclass's operators are Python
            signature[name] = "i1"
        elif type(value) is int:
            signature[name] = "i32" if -(2**31) <= value < 2**31 else "i64" if -(2**63) <= value < 2**63 else "u64"
        elif type(value) is float:
            signature[name] = "fp32"
        else:
            return None
    return signature, constants


def _is_constexpr(annotation) -> bool:
    if annotation is None:
        return False
    if isinstance(annotation, str):
        return annotation.split(".")[-1] == "constexpr"
    return getattr(annotation, "__name__", "") == "constexpr" and "triton" in getattr(annotation, "__module__", "")


def _as_jit(kernel, made: dict):
    """A JITFunction of the interpreted ``kernel``'s Python function, in a copy of its globals where
    every interpreted kernel it may call is one too (the compiler calls only JITFunctions)."""
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    if kernel in made:
        return made[kernel]
    fn = kernel.fn
    scope = dict(fn.__globals__)
    copy = types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__, fn.__closure__)
    copy.__annotations__, copy.__kwdefaults__ = dict(fn.__annotations__), fn.__kwdefaults__
    copy.__qualname__, copy.__module__ = fn.__qualname__, fn.__module__
    made[kernel] = jitted = JITFunction(copy)
    for name, value in list(scope.items()):
        if isinstance(value, InterpretedFunction):
            scope[name] = _as_jit(value, made)
    return jitted
