"""Counting the candidate's own kernel launches, inside its process.

Installed before the candidate is imported: Triton launches (compiled or
interpreted), calls into extensions built by ``load_inline``/``load``, and CuPy
raw kernels all bump one counter. A forward pass that launched none of them
did its work with PyTorch, whatever the source claims. This is a speed bump
(the candidate could tamper with it); the GPU-side census from the profiler
is the stronger check.
"""

from __future__ import annotations

import functools
import importlib
import math
import threading
import time

from torch.overrides import _get_current_function_mode_stack
from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

from forge_sandbox import triton_front_end
from forge_sandbox.op_census import OpRecorder

_perf_counter = time.perf_counter  # bound before the candidate is imported, as timing.py does
_perf_counter_ns = time.perf_counter_ns  # CLOCK_MONOTONIC on Linux, as the host's samples are timed

_INTERPRETED_ONE_AT_A_TIME = threading.RLock()  # a launch's grid callable may launch another
MAX_INTERPRETED_SPANS = 4096  # per timed block: a reply stays well within protocol.UNTRUSTED_MESSAGE_BYTES


class LaunchCounter:
    """Launches of the candidate's own kernels, and the host-clock seconds spent inside them.

    On the CPU a launch runs to completion inside the call, so ``seconds`` over a forward
    pass's time is the share of the work its own kernels did; on CUDA launches are
    asynchronous and the profiler's kernel list tells the split instead."""

    def __init__(self) -> None:
        self.count = 0
        self.seconds = 0.0
        # Per launch of an interpreted Triton kernel that Triton's compiler accepted (triton_front_end),
        # when it ran, less its grid's callable and pre-run hooks ([start, end] in CLOCK_MONOTONIC ns):
        # where numpy's work is the interpreter's. The runner reports and clears them each timed block;
        # beyond MAX_INTERPRETED_SPANS, launches are not recorded (and their numpy counts as numpy's).
        self.interpreted_spans: list[tuple[int, int]] = []

    def bump(self, started: float) -> None:
        spent = _perf_counter() - started
        self.count += 1
        self.seconds += spent


def _counting_module(module, counter: LaunchCounter):
    """``module`` (an extension) with every function call counted as a launch. The counter and the module
    live in this function's closure, not in attributes of what the candidate holds: the runner's record of
    its launches (and of when the interpreter ran) is no attribute read away from the candidate's code
    (review of 2026-11-28: ``_ext._counter.interpreted_spans`` was appended to)."""

    def counted_function(value):
        @functools.wraps(value)
        def counted(*args, **kwargs):
            started = _perf_counter()
            result = value(*args, **kwargs)
            counter.bump(started)  # only a launch that returned counts
            return result

        return counted

    class CountingModule:
        __slots__ = ()

        def __getattr__(self, name):
            value = getattr(module, name)
            return counted_function(value) if callable(value) and not name.startswith("__") else value

    return CountingModule()


def _wrap_method(cls, name: str, counter: LaunchCounter) -> None:
    original = getattr(cls, name, None)
    if original is None:
        return

    @functools.wraps(original)
    def counted(self, *args, **kwargs):
        started = _perf_counter()
        result = original(self, *args, **kwargs)
        counter.bump(started)  # only a launch that returned counts
        return result

    setattr(cls, name, counted)


def _install_triton(counter: LaunchCounter) -> None:
    try:
        jit = importlib.import_module("triton.runtime.jit")
    except Exception:
        return  # triton not installed: a triton candidate will fail to import on its own
    _wrap_method(jit.JITFunction, "run", counter)
    try:
        interpreter = importlib.import_module("triton.runtime.interpreter")
    except Exception:
        return
    _install_interpreted_triton(interpreter, counter)


def _install_interpreted_triton(interpreter, counter: LaunchCounter) -> None:
    """Count interpreted launches, and record when each ran as the interpreter's work where Triton's
    compiler accepted the kernel: the launch, less the time its grid's callable and its pre-run hooks
    took (Python of the candidate's choosing, which the interpreter calls inside the launch)."""
    original = getattr(interpreter.InterpretedFunction, "run", None)
    if original is None:
        return
    front_end = triton_front_end.FrontEnd(interpreter)

    @functools.wraps(original)
    def counted(self, *args, **kwargs):
        if kwargs.get("warmup"):
            return original(self, *args, **kwargs)
        # One interpreted launch at a time in the process, as launches on one GPU stream run: the interpreter
        # patches triton.language while a kernel runs, and two threads' launches at once (variants.ALONGSIDE)
        # broke an honest kernel with an error of the interpreter's own, 2026-11-28.
        with _INTERPRETED_ONE_AT_A_TIME:
            return _launch(self, args, kwargs)

    def _launch(self, args: tuple, kwargs: dict):
        _no_mode_of_its_own()
        arguments = {k: v for k, v in kwargs.items() if k not in ("grid", "warmup")}
        proven = front_end.check(self, args, arguments)  # raises NotTriton where the compiler refuses it
        theirs: list[tuple[int, int]] = []  # when the candidate's own callables ran, inside the launch

        def timed(call):
            def run_timed(*a, **k):
                begun = _perf_counter_ns()
                try:
                    return call(*a, **k)
                finally:
                    theirs.append((begun, _perf_counter_ns()))
                    front_end.check_reach(self)  # what it may have rebound, before a program runs

            return run_timed

        grid = kwargs.get("grid")
        if callable(grid):
            kwargs["grid"] = timed(lambda *a, **k: _exact_grid(grid(*a, **k)))
        else:
            _exact_grid(grid)
        hooks = getattr(self, "pre_run_hooks", None)
        if hooks:
            self.pre_run_hooks = [timed(hook) for hook in hooks]
        try:
            started, started_ns = _perf_counter(), _perf_counter_ns()
            result = original(self, *args, **kwargs)
            ended = _perf_counter_ns()
        finally:
            if hooks:
                self.pre_run_hooks = hooks
        counter.bump(started)  # only a launch that returned counts
        if proven:
            for span in _less(started_ns, ended, theirs):
                if len(counter.interpreted_spans) < MAX_INTERPRETED_SPANS:
                    counter.interpreted_spans.append(span)
        return result

    interpreter.InterpretedFunction.run = counted
    _programs_out_of_order(interpreter)
    front_end.seal()  # with the wrapper above in place, before the candidate is imported


def _programs_out_of_order(interpreter) -> None:
    """The interpreter runs a launch's programs one after another in the order of their ids, so a kernel
    that reads what a program of a lower id wrote, with nothing to make it wait (a scan chained across
    programs), is right there and wrong on a GPU, where programs run at once and in any order (a review,
    2026-11-28: such a cumsum passed). Here the k-th program run is the one numbered k * stride + N / 2
    modulo N, for N programs and a stride prime to N near 0.618 N: every program once, neighbours far
    apart, the same order each time. A kernel that orders its programs itself (a ticket drawn with an
    atomic add) is right in any order."""
    builder = getattr(interpreter, "interpreter_builder", None)
    set_dim, set_idx = getattr(builder, "set_grid_dim", None), getattr(builder, "set_grid_idx", None)
    if set_dim is None or set_idx is None:
        return
    grid: list = [1, 1, 1, 1, 0]  # the launch's x, y, z sizes, its program count and the stride

    def out_of_order_dim(x, y, z):
        n = x * y * z
        stride = max(1, int(n * 0.618))
        while math.gcd(stride, n) != 1:
            stride -= 1
        grid[:] = [x, y, z, n, stride]
        return set_dim(x, y, z)

    def out_of_order_idx(x, y, z):
        gx, gy, gz, n, stride = grid
        if n <= 1 or not (0 <= x < gx and 0 <= y < gy and 0 <= z < gz):
            return set_idx(x, y, z)
        k = ((x * gy + y) * gz + z) * stride % n
        k = (k + n // 2) % n
        return set_idx(k // (gy * gz), k // gz % gy, k % gz)

    builder.set_grid_dim, builder.set_grid_idx = out_of_order_dim, out_of_order_idx


def _no_mode_of_its_own() -> None:
    """No torch function or dispatch mode of the candidate's may be active at an interpreted launch: the
    interpreter copies its arguments with tensor calls from Python (``new_empty``, ``set_``) inside the
    launch's span, and a mode would run Python of the candidate's choosing there, counted as the
    interpreter's work (a fresh review, 2026-11-27: numpy's cumsum from a TorchFunctionMode's hook on
    ``new_empty`` passed behind a token kernel). Forge's own operator census (op_census.OpRecorder) is
    the one mode allowed. The stacks are read through functions bound when this module was imported,
    before the candidate was, as _perf_counter is."""
    modes = list(_get_current_function_mode_stack())
    modes += [mode for mode in _get_current_dispatch_mode_stack() if type(mode) is not OpRecorder]
    if modes:
        raise triton_front_end.NotTriton(
            f"a Triton launch inside a torch mode of its own ({type(modes[0]).__name__}): the interpreter's tensor "
            "calls would run the candidate's Python inside the launch"
        )


def _exact_grid(grid):
    """The grid as the interpreter takes it: a tuple of one to three ints, of exactly those types. The
    interpreter pads and reads it after the grid's callable has returned, inside the launch's span: a
    subclass's operators (``__add__``, ``__len__``, ``__iter__``) would run Python of the candidate's
    choosing there, counted as the interpreter's work (red team, 2026-11-26: numpy's cumsum from a
    tuple subclass's ``__add__`` passed behind a token kernel)."""
    if type(grid) is not tuple or not 1 <= len(grid) <= 3 or not all(type(n) is int for n in grid):
        shown = (
            type(grid).__name__ if type(grid) is not tuple else "(" + ", ".join(type(n).__name__ for n in grid) + ")"
        )
        raise triton_front_end.NotTriton(
            f"a Triton launch's grid must be a tuple of one to three ints, of exactly those types; it is {shown}"
        )
    return grid


def _less(start: int, end: int, cut: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """[start, end] less the spans in ``cut`` (in the order they happened)."""
    pieces, at = [], start
    for begun, ended in sorted(cut):
        if begun > at:
            pieces.append((at, begun))
        at = max(at, ended)
    if end > at:
        pieces.append((at, end))
    return pieces


def _install_cpp_extension(counter: LaunchCounter) -> None:
    from torch.utils import cpp_extension

    for name in ("load_inline", "load"):
        original = getattr(cpp_extension, name)

        @functools.wraps(original)
        def loader(*args, _original=original, **kwargs):
            if (
                kwargs.get("cuda_sources")
                or kwargs.get("sources")
                and any(str(s).endswith(".cu") for s in kwargs["sources"])
            ):
                # ptxas's register, spill and shared-memory lines, printed into the runner's log
                kwargs["extra_cuda_cflags"] = [*(kwargs.get("extra_cuda_cflags") or []), "-Xptxas=-v"]
                kwargs["verbose"] = True
            module = _original(*args, **kwargs)
            return _counting_module(module, counter)

        setattr(cpp_extension, name, loader)


def _counting_kernel(kernel, counter: LaunchCounter):
    """A CuPy kernel whose every call counts as a launch; the counter in a closure (_counting_module)."""

    class CountingKernel:
        __slots__ = ()

        def __call__(self, *args, **kwargs):
            started = _perf_counter()
            result = kernel(*args, **kwargs)
            counter.bump(started)
            return result

        def __getattr__(self, name):
            return getattr(kernel, name)

    return CountingKernel()


def _counting_raw_module(module, counter: LaunchCounter):
    class CountingRawModule:
        __slots__ = ()

        def get_function(self, name):
            return _counting_kernel(module.get_function(name), counter)

        def __getattr__(self, name):
            return getattr(module, name)

    return CountingRawModule()


def _install_cupy(counter: LaunchCounter) -> None:
    try:
        cupy = importlib.import_module("cupy")
    except Exception:
        return
    raw_kernel, raw_module = cupy.RawKernel, cupy.RawModule
    cupy.RawKernel = lambda *a, **k: _counting_kernel(raw_kernel(*a, **k), counter)
    cupy.RawModule = lambda *a, **k: _counting_raw_module(raw_module(*a, **k), counter)


def install(backends: list[str]) -> LaunchCounter:
    """Hook every backend the candidate's source uses; return the shared counter."""
    counter = LaunchCounter()
    if "triton" in backends:
        _install_triton(counter)
    if "cpp" in backends or "cuda" in backends:
        _install_cpp_extension(counter)
    if "cupy" in backends:
        _install_cupy(counter)
    return counter
