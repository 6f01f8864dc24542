"""triton_front_end: what the CPU's interpreter may run as a Triton kernel, decided by Triton's compiler
and by what a kernel body can reach. The kernels here are interpreted ones, as TRITON_INTERPRET=1 makes
them, whatever this process's Triton mode."""

import math

import numpy as np
import pytest
import torch

triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")
from triton.runtime.interpreter import InterpretedFunction  # noqa: E402

from forge_sandbox.triton_front_end import FrontEnd, NotTriton  # noqa: E402

SCALE = tl.constexpr(2.0)
_job = {"x": np.ones(4, dtype=np.float32)}
HOLDER = tl.constexpr(_job)


def _scale_py(x):
    return x * SCALE


scale = InterpretedFunction(_scale_py)


def _kernel_py(x_ptr, n, BLOCK: tl.constexpr, ACT: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + i, mask=i < n)
    if ACT is not None:
        v = ACT(v)
    tl.store(x_ptr + i, v * math.pi, mask=i < n)


kernel = InterpretedFunction(_kernel_py)


def _reads_a_dict_py(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr, HOLDER["x"][0])


reads_a_dict = InterpretedFunction(_reads_a_dict_py)


def _numpy_module_py(x_ptr, BLOCK: tl.constexpr):
    np.sum(BLOCK)
    tl.store(x_ptr, 1.0)


calls_numpy = InterpretedFunction(_numpy_module_py)


def _breaks_py(x_ptr, n):
    for i in range(n):
        if i == 2:
            break
    tl.store(x_ptr, 1.0)


breaks = InterpretedFunction(_breaks_py)


class _Activation:
    def __call__(self, v):
        return v


class _Mode(int):
    def __ne__(self, other):  # Python the interpreter would call in every program
        return True


def _spoofed(v):
    return v


_spoofed.__module__ = "triton.language.standard"


def test_kernels_that_compile_for_a_gpu_are_proven():
    front_end, x = FrontEnd(), torch.zeros(8)
    assert front_end.check(kernel, (x, 8), {"BLOCK": 8, "ACT": None}) is True
    # a @triton.jit function passed in, and one its body names (with a constexpr global of its own)
    assert front_end.check(kernel, (x, 8), {"BLOCK": 8, "ACT": scale}) is True
    assert front_end.check(kernel, (x.half(), 2**40), {"BLOCK": 16, "ACT": None}) is True


@pytest.mark.parametrize(
    ("launch", "expected"),
    [
        (lambda x: (kernel, (x, 8), {"BLOCK": 8, "ACT": lambda v: v}), "is passed ACT=function"),
        (lambda x: (kernel, (x, 8), {"BLOCK": 8, "ACT": _Activation()}), "is passed ACT=_Activation"),
        (lambda x: (kernel, (x, 8), {"BLOCK": 8, "ACT": tl.constexpr(_job)}), "is passed ACT=dict"),
        (lambda x: (reads_a_dict, (x,), {"BLOCK": 8}), "names HOLDER (constexpr of dict)"),
        (lambda x: (calls_numpy, (x,), {"BLOCK": 8}), "names np (module numpy)"),
        (lambda x: (breaks, (x, 8), {}), "Triton's compiler refuses the kernel _breaks_py"),
        # a fresh review, 2026-11-26: an int whose operators are Python; a function that says it is Triton's
        (lambda x: (kernel, (x, 8), {"BLOCK": 8, "ACT": _Mode(1)}), "is passed ACT=_Mode"),
        (lambda x: (kernel, (x, 8), {"BLOCK": 8, "ACT": _spoofed}), "is passed ACT=function _spoofed"),
    ],
)
def test_python_a_gpu_would_not_run_per_program_is_refused(launch, expected):
    k, args, kwargs = launch(torch.zeros(8))
    with pytest.raises(NotTriton, match=expected.replace("(", r"\(").replace(")", r"\)")):
        FrontEnd().check(k, args, kwargs)


def test_a_refusal_is_kept_and_an_untyped_launch_is_neither_refused_nor_proven():
    front_end, x = FrontEnd(), torch.zeros(8)
    for _ in range(2):
        with pytest.raises(NotTriton):
            front_end.check(breaks, (x, 8), {})
    assert front_end.check(kernel, (object(), 8), {"BLOCK": 8, "ACT": None}) is False


def test_what_is_put_into_triton_language_is_refused():
    front_end, x = FrontEnd(), torch.zeros(8)
    tl.reduce_rows = _scale_py  # a body that calls tl.reduce_rows would run it in every program
    try:
        with pytest.raises(NotTriton, match="namespaces were changed"):
            front_end.check(kernel, (x, 8), {"BLOCK": 8, "ACT": None})
    finally:
        del tl.reduce_rows
    assert front_end.check(kernel, (x, 8), {"BLOCK": 8, "ACT": None}) is True
