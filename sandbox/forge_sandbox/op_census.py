"""Which PyTorch operators a forward pass ran, and the rule on which of them a candidate may use.

The speedup must come from the candidate's own kernels. A token launch of one
kernel while PyTorch does the work (SDPA behind a naive attention reference,
``torch.softmax`` behind a one-float kernel, torch.compile) is the trick that
fooled published kernel agents most often. So both runners record, while a
forward pass runs, every operator that reaches PyTorch's dispatcher, from
Python or from a C++ extension (:class:`OpRecorder`, a dispatch mode). The
reference runner's record is trusted; the candidate's is compared with it on
the host (:func:`judge`) for the same inputs:

* allocation, views, layout changes and copies are always allowed (:data:`LAYOUT_OPS`),
  and so are GEMM and convolution library calls (:data:`LIBRARY_OPS`) where the
  reference makes one too (a reduction done as ``ones @ x`` is PyTorch's work);
* any other operator must be one that the reference itself runs (KernelBench
  level-2 and level-3 candidates keep part of the model in PyTorch);
* the candidate's PyTorch calls must not cover all of the reference's
  work: if every operator the reference runs (library calls included) also ran
  in the candidate's forward, at least as often, its own kernels did none of it;
  nor, whatever operators it chose, may they move as much of it: ALL_THE_WORK of
  each kind's volume (elements for compute, multiply-adds for GEMM) where the
  reference has work of that kind (``x * x`` for ``x.pow(2)``, the one small add
  left to a token kernel: a review, 2026-12-02, passed that way);
* an operator is allowed by what the reference ran on the same call's inputs and
  by what it ran on the standard ones, not by what it ran anywhere: a GEMM the
  reference's SDPA falls back to on a strided layout does not allow ``bmm`` beside
  the fused kernel it runs on contiguous inputs (the same review);
* and where the reference is nothing but GEMM and convolution, those calls are
  its work: the library may do at most a tail of it (:data:`LIBRARY_ONLY_SHARE`
  of the multiply-adds) in the candidate's forward.

Dispatcher operators outside ``aten`` (a ``torch.library`` op the candidate
registered, whose inside the record cannot see) count as compute that the
reference does not run. torch.compile is caught twice: under the recorder a
compiled function falls back to eager operators, and the candidate runner says
when dynamo compiled anything (:func:`compiled_graphs`).
"""

from __future__ import annotations

import collections
import re
import sys
from collections import Counter
from typing import NamedTuple

import torch
import torch.utils._pytree as pytree
from torch._subclasses.fake_tensor import FakeTensor
from torch.utils import flop_counter
from torch.utils._python_dispatch import TorchDispatchMode

from forge_sandbox.cpu_samples import ANONYMOUS_CODE

# Allocation, views, layout and copies: PyTorch moves data, the candidate computes.
LAYOUT_OPS = frozenset(
    """
    empty empty_like empty_strided new_empty new_empty_strided new_zeros new_ones new_full zeros zeros_like
    ones ones_like full full_like scalar_tensor arange lift lift_fresh lift_fresh_copy resize_ resize_as_ set_
    zero_ fill_ view _unsafe_view reshape _reshape_alias as_strided as_strided_ expand expand_as permute
    transpose transpose_ t t_ squeeze squeeze_ unsqueeze unsqueeze_ flatten unflatten slice select narrow split
    split_with_sizes unsafe_split chunk unbind unfold diagonal movedim alias detach detach_ view_as_real
    view_as_complex real imag contiguous clone copy_ _copy_from _copy_from_and_resize _to_copy to _to_dlpack
    _local_scalar_dense item cat stack constant_pad_nd repeat _pin_memory pin_memory record_stream
    _reshape_copy view_copy permute_copy expand_copy _conj conj resolve_conj resolve_neg _neg_view
    _assert_async _assert_tensor_metadata is_same_size _has_compatible_shallow_copy_type
    """.split()
)

# GEMM and convolution library calls (cuBLAS, cuDNN, oneDNN, MKL).
LIBRARY_OPS = frozenset(
    """
    mm addmm bmm baddbmm addbmm mv addmv dot vdot matmul linear _int_mm _scaled_mm
    convolution _convolution _convolution_mode conv1d conv2d conv3d conv_transpose1d conv_transpose2d
    conv_transpose3d cudnn_convolution cudnn_convolution_transpose mkldnn_convolution miopen_convolution
    miopen_convolution_transpose _nnpack_spatial_convolution _slow_conv2d_forward slow_conv3d_forward
    slow_conv_transpose2d slow_conv_transpose3d thnn_conv2d convolution_overrideable _conv_depthwise2d
    conv_depthwise3d mkldnn_linear
    """.split()
)


def op_name(func) -> str:
    """``aten.add`` for ``aten.add.Tensor``; other namespaces keep theirs (``mylib.fused``)."""
    packet = getattr(func, "overloadpacket", None)
    return str(packet if packet is not None else func)


class OpRecorder(TorchDispatchMode):
    """Counts the operators dispatched while it is active (``with OpRecorder() as r: ...``), and
    the volume of those that do work (:func:`_volume`)."""

    def __init__(self) -> None:
        super().__init__()
        self.counts: collections.Counter = collections.Counter()
        self.elements: collections.Counter = collections.Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name, kwargs = op_name(func), kwargs or {}
        if kind(name) != "library":
            self.counts[name] += 1
            out = func(*args, **kwargs)
            if kind(name) != "layout":
                self.elements[name] += _volume(func, args, kwargs, out)
            return out
        out = func(*args, **kwargs)
        # A GEMM or convolution counts by its multiply-adds; where its operands' shapes do not tell
        # them (a sparse or nested operand: outside reviews counted 0.4% of one GEMM, then 0.4% of
        # another), it is recorded as another operator (``aten.bmm[nested]``), compute unless the
        # reference runs it too, never as a library call counted by some smaller figure.
        macs, unusual = _library_volume(func, args, kwargs, out)
        if unusual:
            name += f"[{unusual}]"
        self.counts[name] += 1
        self.elements[name] += macs
        return out


def _library_volume(func, args, kwargs: dict, out) -> tuple[int, str]:
    """A library operator's multiply-adds, and what makes them unknown ("" when they are known):
    operands that are not dense tensors, or shapes no formula reads."""
    leaves = [leaf for leaf in pytree.tree_leaves((args, kwargs, out)) if isinstance(leaf, torch.Tensor)]
    forms = sorted({_form(t) for t in leaves} - {""})
    if forms:  # recorded as another operator, by the elements of its dense operands
        return sum(t.numel() for t in leaves if not _form(t)), ",".join(forms)
    if not all(_holds_elements(t) for t in leaves):  # tracing: a meta or fake GEMM costs nothing
        return 0, ""
    formula = _FLOP_FORMULAS.get(getattr(func, "overloadpacket", None))
    if formula is not None:
        try:
            return int(formula(*args, **kwargs, out_val=out)) // 2, ""
        except Exception:  # a formula that does not fit these arguments: PyTorch's, whatever it raises
            pass
    short = op_name(func)[5:]
    try:
        macs = _library_macs(short, [a for a in args if isinstance(a, torch.Tensor)], out)
    except (IndexError, AttributeError, TypeError):  # operands of another form than the formula reads
        return sum(t.numel() for t in leaves), "uncounted"
    if macs is None:
        if short in _VECTOR_PRODUCTS:
            return sum(t.numel() for t in leaves), ""
        return sum(t.numel() for t in leaves), "uncounted"
    return macs, ""


def _form(t: torch.Tensor) -> str:
    """What a tensor is besides dense, strided memory: its layout, nested, quantized; "" for none."""
    if t.layout != torch.strided:
        return str(t.layout).removeprefix("torch.")
    return "nested" if t.is_nested else "quantized" if t.is_quantized else ""


def _volume(func, args, kwargs: dict, out) -> int:
    """What a compute operator's cost grows with: its multiply-adds where PyTorch has a FLOP formula
    for it (attention), else the elements it read and wrote. Tensors of any class count, as long as
    they hold real elements, while a meta or fake tensor (tracing) costs nothing."""
    leaves = [leaf for leaf in pytree.tree_leaves((args, kwargs, out)) if isinstance(leaf, torch.Tensor)]
    real = [t for t in leaves if _holds_elements(t)]
    formula = _FLOP_FORMULAS.get(getattr(func, "overloadpacket", None))
    if formula is not None and len(real) == len(leaves):
        try:
            return int(formula(*args, **kwargs, out_val=out)) // 2
        except Exception:  # a formula that does not fit these arguments: fall back to elements
            pass
    return sum(t.numel() for t in real)


def _library_macs(short: str, tensors: list, out) -> int | None:
    """The multiply-adds of a GEMM or convolution that PyTorch has no FLOP formula for, from its
    shapes: counted by the elements it touched, ``addbmm`` on ``A[None], B[None]`` (all of ``A @ B``)
    would cover next to nothing of a reference's GEMM. None for the matrix-vector products, whose
    elements are their multiply-adds (_VECTOR_PRODUCTS)."""
    if short in ("addbmm", "_int_mm"):  # the last two operands multiply: (b,) n x k times (b,) k x m
        a, b = tensors[-2], tensors[-1]
        return a.numel() * b.shape[-1]
    if short in ("linear", "mkldnn_linear"):  # input (..., k), weight (n, k)
        return tensors[0].numel() * tensors[1].shape[0]
    if "conv" in short:  # weight (out channels, in channels / groups, kernel...), or (in, out / groups, ...)
        weight = tensors[1]
        per_element = weight.numel() // max(weight.shape[0], 1)
        if "transpose" in short:
            return tensors[0].numel() * per_element
        result = out[0] if isinstance(out, (tuple, list)) else out
        return result.numel() * per_element
    return None


# The library's matrix-vector and vector products: the elements they touch are their multiply-adds.
_VECTOR_PRODUCTS = frozenset({"mv", "addmv", "dot", "vdot"})


def _holds_elements(t: torch.Tensor) -> bool:
    """Whether an operator on ``t`` touches real memory: strided, on a real device, not a fake tensor."""
    return t.layout == torch.strided and t.device.type != "meta" and not isinstance(t, FakeTensor)


_FLOP_FORMULAS = flop_counter.flop_registry


def prepare() -> None:
    """Pay the recorder's one-time cost (entering a dispatch mode imports dynamo: about a second)
    when a runner starts, not inside the first verification."""
    with OpRecorder():
        torch.zeros(1).add_(1)


def compiled_graphs() -> int:
    """How many graphs torch.compile (dynamo) has compiled in this process; 0 when it never ran.

    Dynamo is imported by every dispatch mode, but compiles nothing that the runner asks for: any
    graph here is the candidate's."""
    dynamo_utils = sys.modules.get("torch._dynamo.utils")
    if dynamo_utils is None:
        return 0
    try:
        return int(dynamo_utils.counters["stats"]["unique_graphs"])
    except Exception:  # a dynamo without these counters: say nothing rather than guess
        return 0


def _short(name: str) -> str:
    return name[5:] if name.startswith("aten.") else name


def kind(name: str) -> str:
    """'layout', 'library' or 'compute' for a recorded operator name."""
    if name.startswith("aten."):
        short = name[5:]
        if short in LAYOUT_OPS:
            return "layout"
        if short in LIBRARY_OPS:
            return "library"
    return "compute"


def work(counts: dict) -> collections.Counter:
    """The operators that do work (library calls and other compute), with their counts."""
    return collections.Counter({n: c for n, c in counts.items() if kind(n) != "layout" and c > 0})


class Record(NamedTuple):
    """One forward pass's census: OpRecorder's counts and volumes."""

    counts: dict
    elements: dict

    def well_formed(self) -> bool:
        """Both as a runner sends them: operator names to whole numbers."""
        return all(
            isinstance(part, dict) and all(isinstance(n, int) and not isinstance(n, bool) for n in part.values())
            for part in self
        )


def judge(candidate: Record, reference: Record, reference_standard: set[str]) -> str:
    """'' when the candidate's PyTorch use is allowed, otherwise the reason, naming the operators.

    ``candidate`` and ``reference`` are one forward pass's records on the same inputs;
    ``reference_standard`` is every operator the reference ran on the standard trials' inputs (its
    tasks' own, contiguous, in the default conditions) in this evaluation.
    """
    allowed = {n for n, c in reference.counts.items() if c > 0} | set(reference_standard)
    library_allowed = any(kind(n) == "library" for n in allowed)
    foreign = sorted(
        n
        for n, c in candidate.counts.items()
        if c > 0 and n not in allowed and (kind(n) == "compute" or (kind(n) == "library" and not library_allowed))
    )
    if foreign:
        return (
            f"PyTorch computed {', '.join(map(_short, foreign))} in the candidate's forward, which the reference "
            "does not: the speedup must come from the candidate's own kernels (allowed from PyTorch: allocation, "
            "views, layout and copies, GEMM and convolution library calls where the reference makes one, and the "
            "reference's own operators)"
        )
    ref_work, cand_work = work(reference.counts), work(candidate.counts)
    library_share = census_shares(candidate.counts, candidate.elements, reference.elements)["library"]
    gemm_done = library_share >= ALL_THE_WORK
    if ref_work and all(cand_work[n] >= c or (kind(n) == "library" and gemm_done) for n, c in ref_work.items()):
        return (
            f"PyTorch ran every operator the reference runs ({', '.join(map(_short, sorted(ref_work)))}) in the "
            f"candidate's forward ({describe(candidate.counts)}; GEMM and convolution count by their multiply-adds, "
            "whatever the operator): its own kernels did none of the reference's work"
        )
    moved = _volume_moved(candidate, reference)
    if moved:
        return (
            f"PyTorch did {moved} in the candidate's forward ({describe(candidate.counts)}), whatever the "
            "operators: its own kernels did next to none of the reference's work (PyTorch may do less than "
            f"{ALL_THE_WORK:.0%} of at least one kind of work the reference does)"
        )
    if ref_work and all(kind(n) == "library" for n in ref_work) and library_share > LIBRARY_ONLY_SHARE:
        return (
            f"PyTorch's GEMM and convolution library did {min(library_share, 1.0):.0%} of the reference's "
            f"multiply-adds in the candidate's forward ({describe(candidate.counts)}): the reference is nothing "
            f"but GEMM and convolution, so that work is the candidate's to do (at most {LIBRARY_ONLY_SHARE:.0%} "
            "of it from the library)"
        )
    return ""


def _volume_moved(candidate: Record, reference: Record) -> str:
    """What share of the reference's work PyTorch did in the candidate's forward, kind by kind ('' unless
    it is ALL_THE_WORK or more of every kind the reference has work of): compute by the elements its
    operators read and wrote, summed over operators (one operator in the reference's stead, ``mul`` for
    ``pow``, moves the same elements), GEMM and convolution by their multiply-adds."""
    shares = {}
    for of in ("compute", "library"):
        theirs = sum(n for name, n in reference.elements.items() if kind(name) == of and reference.counts.get(name, 0))
        if theirs <= 0:
            continue
        ours = sum(n for name, n in candidate.elements.items() if kind(name) == of and candidate.counts.get(name, 0))
        shares[of] = ours / theirs
    if not shares or min(shares.values()) < ALL_THE_WORK:
        return ""
    what = {"compute": "of the elements the reference's operators read and wrote",
            "library": "of the reference's GEMM and convolution multiply-adds"}  # fmt: skip
    return " and ".join(f"{min(share, 9.99):.0%} {what[of]}" for of, share in shares.items())


def census_shares(counts: dict, candidate: dict, reference: dict) -> dict[str, float]:
    """Per kind of work ('compute', 'library'), the share of the reference's volume that the candidate's
    census recorded in one call on the same inputs (``candidate``/``reference``: OpRecorder.elements;
    ``counts``: the candidate's OpRecorder.counts, without which no volume counts).

    Compute goes operator by operator, its largest share (an operator's cost per element is its own:
    a candidate that keeps the reference's costliest operator and writes the rest may have all of the
    reference's compute time in one of several operators); GEMM and convolution as a whole (the
    candidate may call ``mm`` where the reference called ``addmm``). 0 where it recorded none of that
    kind, infinite where the reference has no volume of that kind to compare with. At most 1: the
    volume is recorded in the candidate's process, and more than the reference's own would excuse in
    the host's samples more PyTorch work than the reference has (an operator the reference does not run
    in that call excuses nothing)."""
    shares = {"compute": 0.0, "library": 0.0}
    library = 0
    reference_computes = any(kind(name) == "compute" and n > 0 for name, n in reference.items())
    for name, elements in candidate.items():
        if elements <= 0 or counts.get(name, 0) <= 0:
            continue
        if kind(name) == "library":
            library += elements
        elif kind(name) == "compute":
            theirs = reference.get(name, 0)
            if theirs > 0:
                shares["compute"] = max(shares["compute"], min(1.0, elements / theirs))
            elif not reference_computes:
                shares["compute"] = float("inf")
    if library:
        theirs = sum(n for name, n in reference.items() if kind(name) == "library")
        shares["library"] = min(1.0, library / theirs) if theirs > 0 else float("inf")
    return shares


def describe(counts: dict) -> str:
    """``addmm x1, relu x2`` for the work operators in a record ('' when there are none)."""
    return ", ".join(f"{_short(n)} x{c}" for n, c in sorted(work(counts).items()))


# -- the outside view: where the candidate's CPU time went (cpu_samples) ----------------------------
#
# The record above comes from inside the candidate's process, which native code there can switch
# off. On the CPU the host also samples both runners' threads while they are timed and names the
# function of every sample (cpu_samples). PyTorch's compute shows there however it was reached:
# softmax kernels, flash attention, MKL's GEMM. Each sample falls in one phase of a call, "forward"
# (the span the runner reports) or "around" (staging, checksum, between calls), and
# :func:`judge_samples` holds the candidate's to these rules:
#
# * compiled: torch.compile's generated code (c<hash>.so, cpp_fused_*) may not run at all;
# * foreign: PyTorch compute the reference never ran in that phase (GEMM and convolution libraries
#   only where the reference runs one) shows no more than noise in the candidate's samples;
# * all the work: PyTorch may not do, kind by kind, about as much per call as in the reference's
#   forward (more than a tail of it where the reference is nothing but GEMM and convolution),
#   whatever operators the census shows;
# * numpy: numpy or a BLAS outside PyTorch shows no more than noise in its forward, beyond the
#   time its Triton launches took where they run on numpy (the CPU's Triton interpreter);
# * unseen: PyTorch compute (or GEMM) shows no more than noise in its forward unless its census
#   recorded an operator of that kind, and no more than its volume accounts for where it did
#   (decoy operators on tiny tensors account for next to nothing).
# Samples the host lost (a ring buffer full) reject the candidate (benchmark.py): what they saw is
# unknown.
#
# A forward that really runs the reference's own operators in PyTorch (allowed, see the module doc)
# runs them at the reference's speed: it earns nothing from them.

_LIBRARY_FILES = ("libmkl", "libdnnl", "libmkldnn", "libcublas", "libcudnn")  # GEMM/convolution libraries
_TORCH_LIBRARIES = ("libtorch", "libc10", *_LIBRARY_FILES)
_PLUMBING_LIBRARIES = ("libc10", "libtorch_python")
_LIBRARY_FUNCTIONS = ("mkl_", "MKL", "dnnl", "gemm", "GEMM", "cblas", "brgemm", "mkldnn", "ideep", "onvolution",
                      "conv2d", "conv3d", "Conv", "bmm", "addmm", "mm_out", "matmul")  # fmt: skip
_PLUMBING_FUNCTIONS = ("copy_kernel", "copy_impl", "copy_same_type", "direct_copy", "fill_kernel", "fill_out",
                       "empty", "lloc", "Dispatch", "OperatorEntry", "OperatorHandle", "KernelFunction",
                       "TensorImpl", "Storage", "intrusive_ptr", "ska8detail", "Hashtable", "Sp_counted",
                       "OperatorRegistry", "TypeMeta", "RecordFunction", "ThreadLocal", "resize", "as_strided",
                       "TensorIteratorConfig", "compute_shape", "compute_types", "set_sizes", "refresh_numel",
                       "TensorOptions", "SymInt", "GradMode", "InferenceMode", "Autograd", "2at4_ops",
                       "Geometry")  # fmt: skip

# Noise: at most SLIVER_SAMPLES samples, or at most SLIVER_SHARE of the phase's samples and at most
# REFERENCE_SHARE of the PyTorch work in the reference's forward (per call). ATen's compute is named
# for what it is (sample_kind), so an honest forward shows none of it beyond a stray sample.
SLIVER_SAMPLES = 5
SLIVER_SHARE = 0.02
REFERENCE_SHARE = 0.25
# A function the candidate ran this rarely is never called foreign: the reference may have run it
# too, between two of its samples (its staging and checksum touch dozens of functions a few times).
# One hidden operator's compute sits in one to three functions, sampled at least once per call.
RARE_SAMPLES = 8
# torch.compile's generated code is no sampling noise: no honest candidate has any.
COMPILED_SAMPLES = 2
_WORK = ("compute", "library")
# at::native:: (also where the mangling abbreviates at:: to a substitution), SLEEF, at::vec::
_COMPUTE_MARKS = ("6native", "Sleef", "3vec", "Vectorized")


def sample_kind(library: str, function: str) -> str:
    """'compute', 'library' (GEMM, convolution), 'plumbing' (allocation, copies, dispatch, bookkeeping)
    or 'other' (not PyTorch: the candidate's own code, the interpreter, numpy, libc).

    ATen's operators are implemented in ``at::native`` (their kernels, the vectorized loops and
    SLEEF math those inline); of those, the ones named for allocation, views, layout and copies
    (LAYOUT_OPS) are plumbing, as is everything outside ``at::native`` (the dispatcher, storage,
    version counters, the Python bindings), which an honest candidate's tensors go through too."""
    if _compiled_by_inductor(library, function):
        return "compute"
    if library == ANONYMOUS_CODE:
        # oneDNN's GEMM and convolution kernels, generated at run time: most of a CPU convolution's
        # samples. A candidate's own code is mapped from its extension's file.
        return "library"
    if not library.startswith(_TORCH_LIBRARIES):
        return "other"
    if library.startswith(_PLUMBING_LIBRARIES):
        return "plumbing"
    if library.startswith(_LIBRARY_FILES):
        return "library"
    if any(p in function for p in _LIBRARY_FUNCTIONS):
        return "library"
    if "masked" not in function and any(p in function for p in _PLUMBING_FUNCTIONS):
        return "plumbing"
    if not any(p in function for p in _COMPUTE_MARKS) and not _carried_compute(function):
        return "plumbing"
    if any(_names_layout_op(name) for name in _identifiers(function)):
        return "plumbing"
    return "compute"


# What PyTorch's own code is named under, besides at::native's kernels: the dispatcher, tensors and
# storage (c10, at, torch), the C++ library's templates, and the C helpers of its runtime (thread pools,
# CPU detection, static initialization, zip archives, instrumentation). libtorch_cpu also carries other
# projects' compute (NNPACK, XNNPACK, QNNPACK, MKL's FFT and sparse kernels, hand-written assembly),
# exported, so that an extension can call it directly (red team round 16: nnp_softmax__avx2 from a
# C++ extension read as plumbing): code of any other name there is compute.
_PLUMBING_NAMESPACES = frozenset("c10 at torch caffe2 std __gnu_cxx __cxxabiv1 ska ska_ordered fmt pybind11 "
                                 "libkineto _GLOBAL__N_1".split())  # fmt: skip
_PLUMBING_C_FUNCTIONS = ("pthreadpool_", "cpuinfo_", "_GLOBAL__sub_", "__static_initialization", "_init", "_fini",
                         "uv_", "uv__", "mz_", "tdefl_", "tinfl_", "__itt_", "aoti_torch_", "frame_dummy",
                         "register_tm_clones", "deregister_tm_clones", "__do_global_", "__tcf_", "torch_parallel_for")  # fmt: skip
_MANGLED_PREFIX = re.compile(r"_Z(?:T[hv]n?\d+_(?:n?\d+_)?|GV)?Z*L?N?[rVKRO]*")
_STD_ABBREVIATIONS = ("St", "Sa", "Sb", "Ss", "Si", "So", "Sd")


def _carried_compute(function: str) -> bool:
    """Whether a function in PyTorch's libraries is code they carry that is not PyTorch's own runtime
    (_PLUMBING_NAMESPACES, _PLUMBING_C_FUNCTIONS); an unnamed address (a PLT stub) is not."""
    if not function:
        return False
    if not function.startswith("_Z"):
        return not function.lstrip(".").startswith(_PLUMBING_C_FUNCTIONS) and not function.startswith(".annobin")
    rest = function[_MANGLED_PREFIX.match(function).end() :]
    if rest.startswith(_STD_ABBREVIATIONS) or rest.startswith("S"):  # std::, or a substitution of a name before
        return False
    length = _MANGLED_LENGTH.match(rest)
    if length is None:
        return False  # an operator or a special name of the C++ runtime (_Znwm: operator new)
    top = rest[length.end() : length.end() + int(length.group())]
    return top not in _PLUMBING_NAMESPACES and not top.startswith(("__static_initialization", "_GLOBAL__"))


_INDUCTOR_MODULE = re.compile(r"c[a-z0-9]{20,}(\.[A-Za-z0-9_-]+)*\.so")


def _compiled_by_inductor(library: str, function: str) -> bool:
    """torch.compile's CPU code: a module named for its hash (c<hash>.so) whose entry is ``kernel``,
    or its fused kernels (``cpp_fused_*``). PyTorch's compiler did that work, not the candidate."""
    if "cpp_fused_" in function:
        return True
    return bool(_INDUCTOR_MODULE.fullmatch(library)) and function in ("kernel", "_ZL9kernel_pyP7_objectS0_")


def _names_layout_op(identifier: str) -> bool:
    """``set_storage_cpu_``, ``empty_cpu``, ``cat_serial_kernel``: named for an operator of LAYOUT_OPS."""
    return any(identifier == op or identifier.startswith(op.rstrip("_") + "_") for op in LAYOUT_OPS if len(op) > 1)


_GENERIC_NAMES = frozenset("at native c10 impl std detail vec Tensor TensorBase TensorIteratorBase function_ref "
                           "callback_fn operator _GLOBAL__N_1 basic_string char_traits allocator _ops call "
                           "redispatch".split())  # fmt: skip
_MANGLED_LENGTH = re.compile(r"[1-9][0-9]*")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _identifiers(function: str) -> list[str]:
    """The identifiers in an Itanium-mangled name: each is its length in digits, then its characters."""
    names, i = [], 0
    while i < len(function):
        found = _MANGLED_LENGTH.match(function, i)
        if found is not None and i >= 2 and function[i - 2] == "L" and function[i - 1].islower():
            found = None  # a template argument's literal value (Ll32E), not a length
        if found is None:
            i += 1
            continue
        end = found.end() + int(found.group())
        name = function[found.end() : end]
        if end <= len(function) and _IDENTIFIER.fullmatch(name):
            names.append(name)
            i = end
        else:
            i = found.end()
    return names


def readable(function: str) -> str:
    """A short name for a (mangled) function, for a reason: its longest specific identifier."""
    if not function.startswith("_Z"):
        return function[:60] or "?"
    names = _identifiers(function)
    specific = [n for n in names if n not in _GENERIC_NAMES and len(n) > 3]
    return max(specific, key=len)[:60] if specific else ("::".join(names) or function)[:60]


def _by_kind(samples: Counter) -> Counter:
    """Samples per kind of work (sample_kind)."""
    kinds: Counter = Counter()
    for key, n in samples.items():
        kinds[sample_kind(*key)] += n
    return kinds


def judge_samples(reference: dict, candidate: dict, census_shares: dict[str, float], reference_kinds: set[str],
                  interpreted: bool = False) -> str:  # fmt: skip
    """'' when the candidate's sampled CPU time is allowed, else the reason.

    ``reference`` and ``candidate`` map a phase ("forward", "around") to a Counter of
    (library, function) -> samples, and "calls" to the number of calls sampled;
    ``census_shares``: per kind of PyTorch work, the share of the reference's volume its census
    recorded in a timed call (:func:`census_shares`; a kind missing: none);
    ``reference_kinds``: the kinds of work ('compute', 'library') of the operators the reference runs;
    ``interpreted``: its Triton kernels run on numpy (the CPU's interpreter), and numpy's samples in
    its record's "interpreted" (taken while the interpreter ran its kernels) are its kernels'. The
    candidate's record may also hold "host_calls" (each call's samples in the host's own window) and
    "censused" (which of those the operator census recorded)."""
    ref_calls, cand_calls = max(reference.get("calls", 0), 1), max(candidate.get("calls", 0), 1)
    ref_kinds, cand_kinds = _by_kind(reference.get("forward", Counter())), _by_kind(candidate.get("forward", Counter()))
    ref_work = sum(ref_kinds[kind] for kind in _WORK)
    # never below twice the noise floor: a reference with next to no PyTorch work makes no yardstick
    yardstick = max(REFERENCE_SHARE * ref_work / ref_calls * cand_calls, 2 * SLIVER_SAMPLES)

    def beyond_noise(counts: collections.Counter, phase: str) -> bool:
        n = sum(counts.values())
        return n > SLIVER_SAMPLES and (n > SLIVER_SHARE * _typical_total(candidate, phase) or n > yardstick)

    compiled = sum(n for phase in ("forward", "around") for key, n in candidate.get(phase, Counter()).items()
                   if _compiled_by_inductor(*key))  # fmt: skip
    if compiled >= COMPILED_SAMPLES:
        return (
            f"torch.compile's generated code ran in the candidate's process ({compiled} CPU samples, taken by the "
            "host): the work must be the candidate's own kernels, not PyTorch's compiler"
        )
    for phase in ("forward", "around"):
        ours, theirs = candidate.get(phase, Counter()), reference.get(phase, Counter())
        foreign = collections.Counter()
        for (library, function), n in ours.items():
            kind = sample_kind(library, function)
            if n < RARE_SAMPLES or (library, function) in theirs or kind not in _WORK:
                continue
            if kind == "compute" or "library" not in reference_kinds:
                foreign[_sample_name(library, function)] += n
        if beyond_noise(foreign, phase):
            where = "in its forward" if phase == "forward" else "around its forward (staging, checksum, between calls)"
            return (
                f"PyTorch computed {_top(foreign)} {where}, which the reference never runs there "
                f"({sum(foreign.values())} of the candidate's {sum(ours.values())} CPU samples there, taken by the "
                "host, out of the candidate's reach): the speedup must come from the candidate's own kernels"
            )
    ours = candidate.get("forward", Counter())
    # The rules on whose work it was read the whole block, not the forward alone: the calls' spans are
    # the runner's word, and a runner that reports them short moves its forward's samples "around".
    block = _block(reference, candidate)
    done = _all_the_references_work(ref_kinds, ref_calls, _by_kind(block), cand_calls, block, reference_kinds)
    if done:
        return done
    theirs = reference.get("forward", Counter()) + reference.get("around", Counter())
    # the Triton interpreter's own numpy: what ran while it ran the candidate's kernels
    interpreted_samples = candidate.get("interpreted", Counter()) if interpreted else Counter()
    numeric, installed = collections.Counter(), collections.Counter()
    for (library, function), n in block.items():
        if library.startswith(NUMERIC_LIBRARIES) or "[installed: numpy]" in library:
            n -= interpreted_samples.get((library, function), 0)
            if n > 0 and (library, function) not in theirs:
                numeric[f"{function or '?'} ({library})"] += n
        elif INSTALLED_MARK in library and (library, function) not in theirs:
            installed[f"{function or '?'} ({library})"] += n
    if beyond_noise(numeric, "forward"):
        return (
            f"numpy or a BLAS outside PyTorch computed in the candidate's timed calls ({_top(numeric)}: "
            f"{sum(numeric.values())} of its {sum(block.values())} CPU samples there, taken by the host"
            + ("; outside the time the Triton interpreter ran its kernels" if interpreted else "")
            + "): the speedup must come from the candidate's own kernels"
        )
    if sum(installed.values()) > INSTALLED_SAMPLES:
        return (
            f"a library installed on the machine computed in the candidate's timed calls ({_top(installed)}: "
            f"{sum(installed.values())} of its {sum(block.values())} CPU samples there, taken by the host): the "
            "speedup must come from the candidate's own kernels, PyTorch's or its kernel backends'"
        )
    unlike = _censused_call_unlike_the_others(candidate)
    if unlike:
        return unlike
    for kind, what in (("compute", "PyTorch compute"), ("library", "GEMM or convolution library calls")):
        unseen = collections.Counter()
        for (library, function), n in ours.items():
            if sample_kind(library, function) == kind:
                unseen[_sample_name(library, function)] += n
        share = census_shares.get(kind, 0.0)
        if share == float("inf"):
            continue  # the reference has no volume of that kind to compare with
        if share == 0:
            if beyond_noise(unseen, "forward"):
                return (
                    f"PyTorch computed {_top(unseen)} in the candidate's forward ({sum(unseen.values())} of its "
                    f"{sum(ours.values())} CPU samples there, taken by the host), yet its operator census recorded "
                    f"no {what}: PyTorch did the work out of the census's sight"
                )
            continue
        # What the census's operators account for, if each costs per element what it costs the reference;
        # only a gross excess counts, since a small operator's cost is not its volume's.
        references = ref_kinds[kind] / ref_calls * cand_calls
        unaccounted = cand_kinds[kind] - CENSUS_SLACK * share * references
        if unaccounted > max(HIDDEN_SHARE * references, yardstick, SLIVER_SAMPLES):
            return (
                f"PyTorch computed {_top(unseen)} in the candidate's forward ({cand_kinds[kind]} of its "
                f"{sum(ours.values())} CPU samples there, taken by the host), far more than the {what} its operator "
                f"census recorded account for ({share:.0%} of the reference's by volume): PyTorch did the work out "
                "of the census's sight"
            )
    return ""


# The call the census records must be like the others: PyTorch's work in it (by the host's samples, per
# kind) at most CENSUS_CALL_SLACK times a typical call's, beyond the noise. The runner learns which call
# that is with the host's word that starts it; a decoy operator run only then would make the census's
# volume, and so what it excuses in the samples of every call, as large as the candidate likes.
CENSUS_CALL_SLACK = 3.0


def _censused_call_unlike_the_others(candidate: dict) -> str:
    calls, censused = candidate.get("host_calls", []), set(candidate.get("censused", []))
    kinds = [_by_kind(call) for call in calls]
    others = [call for i, call in enumerate(kinds) if i not in censused]
    if not censused or len(others) < 3:
        return ""
    for kind in _WORK:
        per_call = sorted(call[kind] for call in others)
        typical = per_call[len(per_call) // 2]
        in_census = [kinds[i][kind] for i in sorted(censused) if i < len(kinds)]
        excess = sum(in_census) - CENSUS_CALL_SLACK * typical * len(in_census)
        if excess > 2 * SLIVER_SAMPLES * len(in_census):
            return (
                f"PyTorch computed far more in the call its operator census recorded ({max(in_census)} CPU samples of "
                f"{kind} work, taken by the host) than in a typical call ({typical}): the census must see a call like "
                "the others"
            )
    return ""


# The census's volume explains up to CENSUS_SLACK times its share of the reference's samples of a kind;
# beyond that, HIDDEN_SHARE of the reference's samples of that kind per call (and no less than the
# yardstick, a quarter of all its PyTorch work) is work the census did not see.
CENSUS_SLACK = 1.5
HIDDEN_SHARE = 0.5


# PyTorch's share of the reference's work (compute and GEMM alike, per call) that, done in the candidate's
# forward too, leaves its own kernels none of it: the sampled twin of judge's "every operator" rule.
ALL_THE_WORK = 0.8
# Where the reference is nothing but GEMM and convolution (a matmul, a convolution), those library
# calls are its work, not plumbing around it: the candidate's own kernels must do all but a tail of it.
LIBRARY_ONLY_SHARE = 0.1
LIBRARY_ONLY_SAMPLED = 2 * LIBRARY_ONLY_SHARE  # samples are noisy: a tail the census allows never fails here
ALL_THE_WORK_SAMPLES = 50  # the reference's samples of a kind of work it takes to tell


def _all_the_references_work(ref_kinds: Counter, ref_calls: int, cand_kinds: Counter, cand_calls: int,
                             ours: Counter, reference_kinds: set[str]) -> str:  # fmt: skip
    """The reason when PyTorch did in the candidate's timed calls (``ours``: its forward and what it ran
    around it beyond the reference, _block), kind by kind, about as much work per call as the whole
    reference: whatever operators its census shows (decoys on tiny tensors, say). ``ref_kinds``: the
    reference's forward's samples per kind (_by_kind), ``cand_kinds``: ``ours``'s."""
    shares = []
    for kind in _WORK:
        theirs = ref_kinds[kind]
        if kind not in reference_kinds or not theirs:
            continue  # samples of a kind of work the reference runs no operator of (a GEMM's bookkeeping)
        if theirs < ALL_THE_WORK_SAMPLES:
            return ""  # a kind of work sampled too little to tell: keeping the rest in PyTorch may be allowed (GEMM)
        shares.append((cand_kinds[kind] / cand_calls) / (theirs / ref_calls))
    library_only = reference_kinds & set(_WORK) == {"library"}
    if not shares or min(shares) < (LIBRARY_ONLY_SAMPLED if library_only else ALL_THE_WORK):
        return ""
    named = collections.Counter()
    for key, n in ours.items():
        if sample_kind(*key) in _WORK:
            named[_sample_name(*key)] += n
    if min(shares) < ALL_THE_WORK:  # the reference is nothing but GEMM and convolution
        return (
            f"PyTorch's GEMM and convolution library took {min(shares):.0%} of the reference's library time per call "
            f"in the candidate's timed calls ({_top(named)}, in the host's samples): the reference is nothing but GEMM and "
            f"convolution, so that work is the candidate's to do (at most {LIBRARY_ONLY_SHARE:.0%} of it from the "
            "library)"
        )
    return (
        f"PyTorch did about all of the reference's work in the candidate's timed calls ({_top(named)}: "
        f"{min(shares):.0%} or more of the reference's PyTorch time per call, kind by kind, in the host's samples), "
        "whatever its operator census shows: its own kernels did none of it"
    )


def _block(reference: dict, candidate: dict) -> Counter:
    """The candidate's samples in its timed calls: its forward's, and those "around" it (staging,
    checksum, between calls) beyond what the reference's runner spends there per call, function by
    function (forge's own harness does the same work on both sides)."""
    scale = max(candidate.get("calls", 0), 1) / max(reference.get("calls", 0), 1)
    theirs = reference.get("around", Counter())
    beyond = Counter()
    for key, n in candidate.get("around", Counter()).items():
        beyond[key] = max(0, n - round(theirs.get(key, 0) * scale))  # never less than none: the forward's stay
    return candidate.get("forward", Counter()) + beyond


# A sample in an installed package's code (cpu_samples.installed_package: not PyTorch's, not a kernel
# backend's) is another library's compute: Pillow's image math, a package's bundled BLAS. More than
# this many in a block is no stray sample (a library an honest candidate never calls in its forward).
INSTALLED_MARK = "[installed: "
INSTALLED_SAMPLES = 2 * SLIVER_SAMPLES


# Numeric libraries a candidate could hand its work to besides PyTorch: numpy's compiled modules and
# the BLAS/LAPACK builds that numpy and scipy carry.
NUMERIC_LIBRARIES = ("_multiarray_umath", "_umath_linalg", "_pocketfft", "_mt19937", "libopenblas",
                     "libscipy_openblas", "libblas", "liblapack", "libcblas", "libflexiblas", "_fblas", "_flapack")  # fmt: skip


def _sample_name(library: str, function: str) -> str:
    if _compiled_by_inductor(library, function):
        return f"torch.compile's generated code ({library})"
    return readable(function)


def _typical_total(profile: dict, phase: str) -> float:
    """A phase's samples as if every call had the typical call's: one call made to burn CPU (to make
    PyTorch's share of the total look small) counts no more than the others."""
    total = sum(profile.get(phase, Counter()).values())
    per_call = sorted(profile.get("per_call", {}).get(phase, []))
    if not per_call:
        return total
    typical = per_call[len(per_call) // 2]
    return min(total, 2 * typical * len(per_call))


def own_share_from_samples(candidate: dict) -> float | None:
    """The share of the candidate's forward samples outside PyTorch's compute (None without samples)."""
    ours = candidate.get("forward", Counter())
    total = sum(ours.values())
    if total <= SLIVER_SAMPLES:
        return None
    kinds = _by_kind(ours)
    return round(1 - sum(kinds[kind] for kind in _WORK) / total, 4)


def _top(counts: collections.Counter) -> str:
    return ", ".join(name for name, _ in counts.most_common(3))
