"""The process-wide settings, PyTorch's, Python's, the processor's and the operating system's, which a
kernel module must leave as it found them.

A module that sets TF32 matmuls, a lower float32 matmul precision, flush-to-zero or another default
dtype when it is imported changes every computation of the process that imports it, the user's
model's included, and forge's comparison, made in another process, never sees it (red team,
2026-11-26: a softmax that set three of them at import passed). So does one that leaves the calling
thread's floating-point control changed: rounding toward +inf, or a trap on division by zero that kills
the user's process at its first inf (a review, 2026-11-29: both passed). And one that changes the
process itself: oneDNN or cuDNN switched off (a user's conv2d 2.5x slower), fp16 accumulation in cuBLAS,
a umask of 0 (every file the user then makes writable by all), the calling thread pinned to one core,
an attacker's folder first on PATH (a review, 2026-11-29: each passed). So every PyTorch backend switch
is read, not a list of the known ones (_backend_switches), and the process's own state besides
(_process_state). The candidate's runner takes these before the candidate is imported and reports any
that differ after each command (candidate_runner). Flags that change only speed and that honest kernels
set (cudnn.benchmark) are not here; the CPU thread count is, since it sets the speed of everything else
the importing process computes.
"""

from __future__ import annotations

import builtins
import copyreg
import ctypes
import ctypes.util
import functools
import gc
import inspect
import operator
import os
import platform
import resource
import signal
import sys
import threading
import types
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
    "flush denormals to zero": _flushes_denormals,
    "default device": lambda: torch.get_default_device(),
    "interop threads": torch.get_num_interop_threads,
    "fill uninitialized memory (deterministic mode)": lambda: torch.utils.deterministic.fill_uninitialized_memory,
}


# PyTorch's backend switches, read wherever they live (_backend_switches): descriptors on a backend module's
# class, and these names, which some read through __getattr__ (torch.backends.cuda.matmul's, the
# precision objects'); the switches that only pick among equally exact paths for speed, and that honest
# kernels set, are left out (SPEED_ONLY).
_SWITCH_NAMES = (
    "enabled", "deterministic", "strategy", "immediate", "engine", "fp32_precision", "allow_tf32",
    "allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction", "allow_fp16_accumulation",
)  # fmt: skip
SPEED_ONLY = ("benchmark", "benchmark_limit")
# A backend module's getters of its switches that are functions (torch.backends.cuda's scaled-dot-product
# attention kernels, its preferred libraries, mha's fast path), by name.
_GETTER_PREFIXES, _GETTER_SUFFIXES = ("preferred_", "get_fastpath"), ("_enabled", "_allowed")


def _backend_switches() -> dict[str, object]:
    """Every switch of every PyTorch backend module imported so far and of the objects they hold (the
    cuda.matmul, conv and rnn settings), by its dotted name."""
    found: dict[str, object] = {}
    modules = [(name, module) for name, module in list(sys.modules.items())
               if name == "torch.backends" or name.startswith("torch.backends.")]  # fmt: skip
    objects = list(modules)
    for name, module in modules:
        for attribute, value in list(_own_attributes(module).items()):
            if not attribute.startswith("_") and type(value).__module__.startswith("torch.backends") \
                    and not isinstance(value, type) and not inspect.isroutine(value):  # fmt: skip
                objects.append((f"{name}.{attribute}", value))
    for name, holder in objects:
        names = {a for a, d in vars(type(holder)).items()
                 if not a.startswith("_") and hasattr(d, "__get__") and not inspect.isroutine(d)}  # fmt: skip
        for attribute in sorted(names | set(_SWITCH_NAMES)):
            if attribute in SPEED_ONLY:
                continue
            try:
                value = getattr(holder, attribute)
            except Exception:  # noqa: BLE001 - a switch this object does not have
                continue
            if value is None or isinstance(value, (bool, int, float, str)):
                found[f"{name}.{attribute}"] = value
        for attribute, getter in list(_own_attributes(holder).items()):
            if inspect.isfunction(getter) and not attribute.startswith("_") and (attribute.startswith(_GETTER_PREFIXES) or attribute.endswith(
                    _GETTER_SUFFIXES)) and not inspect.signature(getter).parameters:  # fmt: skip
                try:
                    found[f"{name}.{attribute}()"] = getter()
                except Exception:  # noqa: BLE001 - a getter this build or machine cannot answer
                    continue
    return found


def _own_attributes(holder) -> dict:
    """A backend object's attributes; a module that torch.backends wraps in a class of its own (PropModule,
    which reads the rest from the module it wraps, ``m``) with that module's."""
    wrapped = vars(holder).get("m")
    inner = vars(wrapped) if isinstance(wrapped, types.ModuleType) else {}
    declared = vars(type(holder)) if isinstance(holder, types.ModuleType) else {}  # the precision objects
    return {**inner, **declared, **vars(holder)}


# Environment variables that a kernel's file may set for its own build (the architectures to compile
# for, the compiler's parallel jobs) and that change nothing else a process does; and those PyTorch sets
# itself while forge works (its profiler's, CUDA's lazy module loading).
BUILD_VARIABLES = ("TORCH_CUDA_ARCH_LIST", "MAX_JOBS")
TORCH_SETS = ("DISABLE_CUPTI_LAZY_REINIT", "TEARDOWN_CUPTI", "CUDA_MODULE_LOADING")


_INSTALLED = tuple(
    os.path.join(os.path.realpath(root), "")
    for root in {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
)


def _installed(path: str) -> bool:
    """Whether a file lies among the installed packages' and Python's own (not the candidate's, not forge's)."""
    return os.path.realpath(path).startswith(_INSTALLED)


def _umask() -> str:
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return line.split()[1]
    except OSError:
        pass
    return "unknown"


@functools.cache
def _libc():
    return ctypes.CDLL(None, use_errno=True)


def _signal_handlers() -> dict[str, str]:
    """Each signal's handler, by the signal's name: the native one's address (sigaction, which a C++
    extension may set) and Python's, where one is set."""
    held, action = {}, ctypes.create_string_buffer(256)  # struct sigaction: the handler comes first
    for number in sorted(signal.valid_signals()):
        native = "?"
        if _libc().sigaction(int(number), None, action) == 0:
            native = hex(int.from_bytes(action.raw[: ctypes.sizeof(ctypes.c_void_p)], sys.byteorder))
        try:
            python = signal.getsignal(number)
        except (ValueError, OSError):
            python = None
        name = number.name if isinstance(number, signal.Signals) else f"signal {int(number)}"
        held[f"{name}'s handler"] = native + (f", Python's {_identity(python)}" if callable(python) else "")
    return held


def _identity(value) -> str:
    """Which object ``value`` is, as text: a replaced one differs, an unchanged one does not."""
    return f"{type(value).__name__} at {id(value):#x}"


def _for_a_whole_category(entry) -> bool:
    """A warnings filter that applies to every warning of one of Python's own categories in every module
    (``simplefilter("ignore")``, ``filterwarnings("error", category=RuntimeWarning)``): what the whole
    process sees of its warnings. A library's own filters name its own category (numpy's RankWarning,
    sympy's deprecations), a message or a module."""
    action, message, category, module, line = entry
    return (
        isinstance(category, type)
        and category.__module__ == "builtins"
        and module is None
        and line == 0
        and (message is None or not message.pattern)
    )


def _registries() -> dict[str, object]:
    """Process-wide registries of PyTorch's and Python's that a module can add to for good at import (a
    review, 2026-11-29: each of these passed): torch.load's safe globals (a checkpoint's call of
    shutil.rmtree allowed), global optimizer hooks (every learning rate zeroed), autograd's default
    saved-tensor hooks (gradients halved), the dispatch and torch-function mode stacks, warnings
    silenced for all, numpy's error handling, logging disabled; with the trace and profile functions and
    pickle's reducers. An audit hook or a fork handler cannot be read at all, nor an exit handler told
    from the ones Triton adds as it works (a crashed job made to exit 0): the static check refuses the
    calls that add them."""
    numpy, logging = sys.modules.get("numpy"), sys.modules.get("logging")
    optimizer = sys.modules.get("torch.optim.optimizer")
    getters = {
        "torch.load's safe globals": lambda: len(torch.serialization.get_safe_globals()),
        "torch function and dispatch mode stacks": lambda: (
            torch._C._len_torch_function_stack(),
            torch._C._len_torch_dispatch_stack(),
        ),
        "warn always": torch.is_warn_always_enabled,
        # review 47: UserWarning silenced, RuntimeWarning made an error, for every later line of the process
        "warnings filters for a whole category": lambda: [
            (f[0], f[2].__name__) for f in warnings.filters if _for_a_whole_category(f)
        ],
        "trace and profile functions": lambda: [
            _identity(f) for f in (sys.gettrace(), sys.getprofile(), threading.gettrace(), threading.getprofile())
        ],
        "pickle's reducers (copyreg)": lambda: len(copyreg.dispatch_table),
        "global optimizer hooks": lambda: [
            len(getattr(optimizer, name)) for name in ("_global_optimizer_pre_hooks", "_global_optimizer_post_hooks")
        ],
        "autograd's default saved-tensor hooks": lambda: [
            _identity(h) for h in torch._C._autograd._top_saved_tensors_default_hooks(False) or ()
        ],
        "numpy's floating-point error handling": lambda: (
            sorted(numpy.geterr().items()),
            _identity(numpy.geterrcall()),
        ),
        "logging (disabled level, root level, root handlers)": lambda: (
            logging.root.manager.disable,
            logging.root.level,
            [_identity(h) for h in logging.root.handlers],
        ),
        # a review, 2026-12-01: a deserializer that zeroed every storage torch.load returned; every finder of
        # the import system wrapped (each later import ran the candidate's code); torch.hub's folder moved to
        # one holding a hubconf.py (torch.hub.load of a trusted repository ran it); the temporary folder moved
        "torch.load's deserializers (register_package)": lambda: [
            (priority, _identity(tagger), _identity(loader))
            for priority, tagger, loader in torch.serialization._package_registry
        ],
        "import path finders' kinds (sys.path_importer_cache)": lambda: sorted(
            {f"{type(f).__module__}.{type(f).__qualname__}" for f in sys.path_importer_cache.values() if f is not None}
        ),
        "torch.hub's folder": lambda: torch.hub._hub_dir,
        "the temporary folder (tempfile.tempdir)": lambda: sys.modules["tempfile"].tempdir,
        "the default socket timeout": lambda: sys.modules["socket"].getdefaulttimeout(),
        "urllib's global opener": lambda: _identity(sys.modules["urllib.request"]._opener),
        "the locale": lambda: sys.modules["locale"].setlocale(sys.modules["locale"].LC_ALL),
        "decimal arithmetic's context": lambda: repr(sys.modules["decimal"].getcontext()),
    }
    state: dict[str, object] = {}
    for name, getter in getters.items():
        try:
            state[name] = getter()
        except Exception:  # noqa: BLE001 - a registry this build (or a module not imported) does not have
            continue
    # review 47: how every later tensor and array prints (precision 1 hides a user's wrong digits), by option
    printing = {"torch": lambda: vars(torch._tensor_str.PRINT_OPTS), "numpy": lambda: numpy.get_printoptions()}
    for library, options in printing.items():
        try:
            held = dict(options())
        except Exception:  # noqa: BLE001 - numpy not imported
            continue
        state.update({f"{library}'s print option {name}": value for name, value in held.items()})
    return state


def _process_state() -> dict[str, object]:
    """The process's own state that a module can change for every later line of the importing process:
    file-creation mask, working folder, environment, CPU affinity and priority, resource limits, signal
    handlers, Python's hooks, import machinery, builtins, switch interval, recursion limit and collector."""
    state: dict[str, object] = {
        "file-creation mask (umask)": _umask(),
        "working folder": os.getcwd(),
        "CPU affinity": sorted(os.sched_getaffinity(0)),
        "scheduling priority": os.getpriority(os.PRIO_PROCESS, 0),
        "Python's thread switch interval": sys.getswitchinterval(),
        "recursion limit": sys.getrecursionlimit(),
        "garbage collector": (gc.isenabled(), gc.get_threshold()),
        "Python's hooks (excepthook, displayhook, unraisablehook, breakpointhook, threading.excepthook)": [
            _identity(hook)
            for hook in (sys.excepthook, sys.displayhook, sys.unraisablehook, sys.breakpointhook, threading.excepthook)
        ],  # fmt: skip
        "standard streams": [_identity(stream) for stream in (sys.stdin, sys.stdout, sys.stderr)],
        "import machinery (sys.meta_path, sys.path_hooks)": [_identity(x) for x in (*sys.meta_path, *sys.path_hooks)],
        # but the installed packages' own folders, which setuptools adds (its vendored packages) when
        # load_inline imports it
        "sys.path": [entry for entry in sys.path if not _installed(entry)],
    }
    for name in dir(resource):
        if name.startswith("RLIMIT_"):
            try:
                state[f"resource limit {name}"] = resource.getrlimit(getattr(resource, name))
            except (ValueError, OSError):
                continue
    for name, value in os.environ.items():
        if name not in BUILD_VARIABLES + TORCH_SETS:
            state[f"environment variable {name}"] = value
    for name, value in _c_environment_apart_from_os_environ().items():
        state[f"C-level environment variable {name}, apart from os.environ"] = value
    for name, value in vars(builtins).items():
        state[f"builtins.{name}"] = _identity(value)
    state.update(_signal_handlers())
    return state


_ENVIRON_ENTRIES_READ = 100_000


def _c_environment_apart_from_os_environ() -> dict[str, str]:
    """The C library's environment where it differs from os.environ, by variable. os.putenv, os.unsetenv
    and a C++ extension's setenv change the environment every later child process inherits (and getenv in
    native code reads) without os.environ seeing it (review 47: PYTHONPATH set for the user's subprocesses)."""
    table = ctypes.POINTER(ctypes.c_char_p).in_dll(_libc(), "environ")
    native: dict[str, str] = {}
    for index in range(_ENVIRON_ENTRIES_READ):
        entry = table[index]
        if entry is None:
            break
        name, _, value = os.fsdecode(entry).partition("=")
        native.setdefault(name, value)  # getenv reads the first of a name
    exempt = BUILD_VARIABLES + TORCH_SETS
    return {
        name: native.get(name, "(unset)")
        for name in sorted(native.keys() | os.environ.keys())
        if name not in exempt and native.get(name) != os.environ.get(name)
    }


# What a registry's entries are, for _tables: the functions and classes a library dispatches to. Other
# callables (a weak reference the import system keeps per module lock, a compiled kernel in a cache) come
# and go as a library works.
_DISPATCHED = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, type, functools.partial)


def _tables(names: dict) -> dict[str, tuple[object, object]]:
    """The registries a module holds, by name: each dict, list and set among its values, and each one
    that a module-level object holds as an attribute, with a shallow copy of it (which keeps what it held
    alive, so that an object's id is its own). A module that changes one in place (``update``,
    ``__setitem__``, ``append``) changes the library for the whole importing process without rebinding a
    name (a review, 2026-12-02: DataLoader's collate table and torch.distributions' KL registry)."""
    found = {}
    for key, value in list(names.items()):
        holders = [(key, value)]
        # type(), not isinstance(): a deprecated object warns when its __class__ is read
        if not issubclass(type(value), (types.ModuleType, type, types.FunctionType, dict, list, set)):
            try:
                inside = vars(value)
            except Exception:  # noqa: BLE001 - an object without a namespace, or one that refuses it
                inside = {}
            if isinstance(inside, dict):
                holders += [(f"{key}.{k}", v) for k, v in list(inside.items())]
        for where, table in holders:
            if issubclass(type(table), dict):
                found[where] = (table, dict(table))
            elif issubclass(type(table), (list, set)):
                found[where] = (table, list(table))
    return found


def _made_outside(value) -> bool:
    """Whether a function or class was made by code outside the installed libraries (the candidate's)."""
    if not isinstance(value, _DISPATCHED):
        return False
    value = getattr(value, "func", value)  # a functools.partial's function
    code = getattr(getattr(value, "__func__", value), "__code__", None)
    if code is not None:
        return not _installed(code.co_filename)
    module = sys.modules.get(getattr(value, "__module__", None) or "")
    path = getattr(module, "__file__", None)
    return not isinstance(path, str) or not _installed(path)


def _table_changes(where: str, table, held) -> list[str]:
    """What became of a registry since it was copied (``held``): a function or class of it replaced or
    removed, or one that the candidate made put in. Other entries come and go as a library caches."""
    if issubclass(type(table), dict):
        if (
            len(table) == len(held)
            and all(map(operator.is_, table, held))
            and all(map(operator.is_, table.values(), held.values()))
        ):
            return []  # the common case, in C: nothing changed
        found = [f"{where}[{_short(repr(key), 60)}]: replaced or removed" for key, value in held.items()
                 if isinstance(value, _DISPATCHED) and table.get(key, _GONE) is not value]  # fmt: skip
        found += [f"{where}[{_short(repr(key), 60)}]: {'added' if key not in held else 'replaced'}"
                  for key, value in list(table.items())
                  if held.get(key, _GONE) is not value and _made_outside(value)
                  and not isinstance(held.get(key), _DISPATCHED)]  # (those replaced are named above)  # fmt: skip
        return found
    if len(table) == len(held) and all(map(operator.is_, table, held)):
        return []
    now, then = {id(item) for item in list(table)}, {id(item) for item in held}
    found = [f"{where}: an entry removed"] if any(isinstance(i, _DISPATCHED) and id(i) not in now for i in held) else []
    if any(id(item) not in then and _made_outside(item) for item in list(table)):
        found.append(f"{where}: an entry added")
    return found


def bindings(skip: tuple[str, ...] = ()) -> dict[str, tuple[dict, dict, dict, dict]]:
    """The functions and classes bound in the installed libraries' modules (the standard library's,
    PyTorch's, numpy's, Triton's: every module not loaded from elsewhere), and the callables of the classes
    among them (and the names each class held), and the registries they hold (_tables), by module: what
    :func:`rebound` compares with by identity. A module that rebinds one of
    them (``tempfile.gettempdir``, ``torch.nn.functional.gelu``, ``torch.Tensor.add``) changes every later
    line of the process that imports it, however it reached it; the values are held, so that no object
    made later can take a replaced one's identity. ``skip``: the packages left out (Triton's, whose CPU
    interpreter rebinds triton.language's functions for good as it runs a kernel)."""
    found: dict[str, tuple[dict, dict]] = {}
    for name, module in list(sys.modules.items()):
        if not isinstance(module, types.ModuleType) or name.split(".")[0] in skip:
            continue
        path = getattr(module, "__file__", None)
        if isinstance(path, str) and not _installed(path):
            continue
        names = getattr(module, "__dict__", None)
        if not isinstance(names, dict):
            continue
        functions = {k: v for k, v in list(names.items()) if callable(v)}
        members = {}
        for key, value in functions.items():
            if isinstance(value, type) and getattr(value, "__module__", None) == name:
                own = dict(vars(value))
                members[key] = ({k: v for k, v in own.items() if callable(v) or hasattr(v, "__get__")}, set(own))
        # and each function's code, which a module can swap in place, the function object kept (review 47:
        # functools.update_wrapper(F.dropout, f, assigned=("__code__",)) made every Dropout the identity)
        codes = {k: v.__code__ for k, v in functions.items() if type(v) is types.FunctionType}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch.distributed.reduce_op's deprecation, as its namespace is read
            found[name] = (functions, members, _tables(names), codes)
    return found


def rebound(before: dict[str, tuple[dict, dict, dict, dict]], limit: int = 12, registries: bool = True) -> list[str]:
    """'name: rebound' for each function or class of :func:`bindings` (and each callable of such a class)
    that is no longer the object it was, or is gone, and each registry entry of theirs replaced, removed
    or joined by the candidate's (_tables); the modules imported since are not compared."""
    found: list[str] = []
    for name, (functions, members, tables, codes) in before.items():
        module = sys.modules.get(name)
        if module is None:
            continue
        names = getattr(module, "__dict__", {})
        for key, value in functions.items():
            if names.get(key, _GONE) is not value:
                found.append(f"{name}.{key}: rebound")
            elif key in codes and value.__code__ is not codes[key]:
                found.append(f"{name}.{key}: its code replaced")
        for key, (held, keys) in members.items():
            own = vars(functions[key])
            found += [f"{name}.{key}.{k}: rebound" for k, v in held.items() if own.get(k, _GONE) is not v]
            # a method put on the class over the one it inherits (torch.Tensor.add is TensorBase's)
            found += [f"{name}.{key}.{k}: added" for k in own.keys() - keys if callable(own[k])]
        for where, (table, held) in tables.items() if registries else ():
            found += _table_changes(f"{name}.{where}", table, held)
        if len(found) >= limit:
            return found[:limit]
    return found


_GONE = object()


def snapshot() -> dict[str, str]:
    """Each setting this build of PyTorch and this process can report, as text."""
    values = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TF32 flags' deprecation, into the log the verdict quotes
        for name, getter in _GETTERS.items():
            try:
                values[name] = repr(getter())
            except Exception:  # noqa: BLE001 - a setting this build does not have is not compared
                continue
        values.update({name: repr(value) for name, value in _backend_switches().items()})
    values.update({name: repr(value) for name, value in {**_process_state(), **_registries()}.items()})
    return values


# Precision settings at their exact values: a module that sets one of these (TF32 off, as an honest
# kernel's file may) asks for no less precision than the process had, and is not held to it.
_EXACT = {"float32 matmul precision": {"'highest'"}, "flush denormals to zero": {"False"}}


def _exact(name: str, value: str) -> bool:
    if name.rsplit(".", 1)[-1].startswith("allow_"):
        return value == "False"
    if name.endswith("fp32_precision"):
        return value in ("'none'", "'ieee'")
    return value in _EXACT.get(name, ())


def changed(before: dict[str, str]) -> list[str]:
    """'name: before -> now' for each setting that differs from ``before`` (or was added or removed: an
    environment variable, a builtin), but for a precision setting moved to its exact value. Values are
    shortened: they may hold anything the candidate chose."""
    now = snapshot()
    return [
        f"{name}: {_short(before.get(name, '(none)'))} -> {_short(now.get(name, '(none)'))}"
        for name in sorted(before.keys() | now.keys(), key=lambda n: (n not in before, n))
        if before.get(name) != now.get(name)
        and not (name in now and _exact(name, now[name]))
        # a backend module first imported after the snapshot brings switches at their defaults
        and (name in before or not name.startswith("torch.backends"))
    ]


def _short(value: str, limit: int = 120) -> str:
    return value if len(value) <= limit else value[: limit - 3] + "..."
