"""Which PyTorch operators a forward pass ran, and the rule on which of them a candidate may use.

The speedup must come from the candidate's own kernels. A token launch of one
kernel while PyTorch does the work (SDPA behind a naive attention reference,
``torch.softmax`` behind a one-float kernel, torch.compile) is the trick that
fooled published kernel agents most often. So both runners record, while a
forward pass runs, every operator that reaches PyTorch's dispatcher, from
Python or from a C++ extension (:class:`OpRecorder`, a dispatch mode). The
reference runner's record is trusted; the candidate's is compared with it on
the host (:func:`judge`) for the same inputs:

* allocation, views, layout changes and copies are always allowed, and so are
  GEMM and convolution library calls (:data:`LAYOUT_OPS`, :data:`LIBRARY_OPS`);
* any other operator must be one that the reference itself runs (KernelBench
  level-2 and level-3 candidates keep part of the model in PyTorch);
* and the candidate's PyTorch calls must not cover all of the reference's
  work: if every operator the reference runs (library calls included) also ran
  in the candidate's forward, at least as often, its own kernels did none of it.

Dispatcher operators outside ``aten`` (a ``torch.library`` op the candidate
registered, whose inside the record cannot see) count as compute that the
reference does not run. torch.compile is caught twice: under the recorder a
compiled function falls back to eager operators, and the candidate runner says
when dynamo compiled anything (:func:`compiled_graphs`).
"""

from __future__ import annotations

import collections
import sys

import torch
from torch.utils._python_dispatch import TorchDispatchMode

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
    """Counts the operators dispatched while it is active (``with OpRecorder() as r: ...``)."""

    def __init__(self) -> None:
        super().__init__()
        self.counts: collections.Counter = collections.Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.counts[op_name(func)] += 1
        return func(*args, **(kwargs or {}))


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


def judge(candidate: dict, reference: dict, reference_anywhere: set[str]) -> str:
    """'' when the candidate's PyTorch use is allowed, otherwise the reason, naming the operators.

    ``candidate`` and ``reference`` are one forward pass's counts on the same inputs;
    ``reference_anywhere`` is every operator the reference ran in this evaluation.
    """
    foreign = sorted(n for n, c in candidate.items() if c > 0 and kind(n) == "compute" and n not in reference_anywhere)
    if foreign:
        return (
            f"PyTorch computed {', '.join(map(_short, foreign))} in the candidate's forward, which the reference "
            "does not: the speedup must come from the candidate's own kernels (allowed from PyTorch: allocation, "
            "views, layout and copies, GEMM and convolution library calls, and the reference's own operators)"
        )
    ref_work, cand_work = work(reference), work(candidate)
    if ref_work and all(cand_work[n] >= c for n, c in ref_work.items()):
        return (
            f"PyTorch ran every operator the reference runs ({', '.join(map(_short, sorted(ref_work)))}) in the "
            "candidate's forward: its own kernels did none of the reference's work"
        )
    return ""


def describe(counts: dict) -> str:
    """``addmm x1, relu x2`` for the work operators in a record ('' when there are none)."""
    return ", ".join(f"{_short(n)} x{c}" for n, c in sorted(work(counts).items()))
