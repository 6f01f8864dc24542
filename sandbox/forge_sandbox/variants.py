"""Verification inputs as in real use: other memory layouts and other value distributions.

A kernel that is correct only on what a task's ``get_inputs`` happens to make
(contiguous, standard-normal tensors) fails in a real model: a strided view,
activations of larger magnitude, a softmax without max subtraction. So besides
the task's own inputs, every shape a task declares is verified on the layouts,
distributions and conditions below (a kernel may take another code path at
another shape: rows wider than a block, a width that is no multiple of its
vector, and a path that only such a shape takes passed with strides ignored,
2026-11-27); the base shape also on each layout and distribution with autograd
enabled (trial_plan):

* layouts (same shapes, same values, other strides), made on the device by
  both runners alike: ``transposed`` (the last two dimensions stored the other
  way round), ``strided`` (every other element of a buffer twice as wide, at an
  offset), ``rows_apart`` (each row contiguous but rows a buffer's width apart:
  a narrowed view, one part of a fused projection) and ``leading_swapped`` (the
  two dimensions before the last stored the other way round, rows still
  contiguous: a ``(B, S, H, D).transpose(1, 2)`` of attention; with fewer than
  three dimensions, or one of size 1 there, rows apart at another width),
  ``sliced`` (contiguous, but one element into a larger buffer: ``qkv[1]`` or
  ``x[1:]`` of a batch, which a kernel that reads the storage from its start, or
  assumes aligned memory, gets wrong) and ``channels_last`` (4-D inputs stored
  NHWC, 5-D ones NDHWC, as ``model.to(memory_format=torch.channels_last)`` makes
  a CNN's activations: a kernel with a channels-last path of its own that
  writes its output in the wrong order passed, 2026-11-27); and, where a task has two tensor inputs
  or more, layouts that differ between its inputs, as in a model (an activation
  made contiguous beside a weight used transposed): ``first_transposed`` (only
  the first stored transposed) and ``others_transposed`` (all but the first),
  which a kernel that reads one input's layout and assumes it of the others gets
  wrong in one of the two;
* distributions (the task's own values transformed, every floating-point input
  alike): ``large`` (x 100), ``small`` (x 0.001), ``offset`` (shifted by four
  times its own RMS), ``far_below`` (shifted down by 100 times it),
  ``positive`` (absolute values), ``masked`` (-inf where a mask would put it:
  the first element of every other row and one in eight elsewhere) and
  ``zeros`` (one element in four exactly zero, as after dropout, a ReLU or zero
  padding: standard-normal draws never hold one, and a kernel with a branch for
  each sign that skips zero passed, 2026-11-27);
* and, advisory only (ADVISORY), ``nan``: one element in NAN_SHARE NaN, as a
  diverging model's activations are. PyTorch's ops carry a NaN through, which
  is how a diverging run is noticed; a kernel that turns it into a number (a
  ReLU through ``fmaxf``, a GELU whose polynomial returns 0) hides the
  divergence, but computes every finite input right, so a mismatch there is a
  warning in the verdict, never a rejection (a GELU that returned 0 for NaN
  passed unremarked, a review, 2026-11-29).

* the call's condition: at the base shape every trial above is made once more
  with autograd enabled, as in training's forward pass (``autograd_on``, and ``large+autograd_on`` and so
  on): forge's other calls are made under ``torch.no_grad``, as a model is
  served, and a kernel that checked the mode could be right in one of them only;
  once on the task's own inputs under ``torch.inference_mode`` (``inference_mode``:
  how a model is often served, a mode of its own that a kernel can check too);
  and on the task's own inputs with torch's CPU threads set to other counts,
  once at each (``other_threads``: THREAD_COUNTS, a many-core machine's and a
  laptop's, and DRAWN_THREAD_COUNTS, drawn for each trial), as on another
  machine: a kernel that splits its work by the thread count and is right only
  at forge's (a tree of per-thread partial sums that
  assumes a power of two, a remainder of rows dropped) is wrong on most machines
  but this one;
  once from a thread other than the main one (``another_thread``, a serving
  worker's); and again and again on the task's own inputs and each layout's
  (alongside_partners) while another thread calls the same model on the same and
  other inputs and shapes (``alongside_other_calls``, calls_alongside), as a
  server's workers share one model: a kernel that keeps scratch state for every
  call (a static accumulator row, a buffer cached on the module, a plan for the
  last shape seen) and lets two calls run at once passed, 2026-11-27 and -28;
  and once on its own inputs written in place into tensors that held other values
  in the call before (``refilled_in_place``: a batch buffer refilled through its
  numpy view, by another kernel or through ``.data``, none of which moves
  autograd's version counter), where a kernel that kept its last result for the
  same tensor object returned the last batch's (a review, 2026-12-01).

A kernel that copies its input only where the last dimension is not
contiguous sees rows one after another in ``transposed`` and ``strided``; it
meets rows apart in the next two.

A variant the reference does not accept (it raises, or its output is not
finite where the task's own inputs gave finite outputs) is dropped, since the
candidate is held to what the reference does, not to more.

Some of these inputs make a problem ill-conditioned: attention on inputs x 100
is nearly one-hot, and where two keys almost tie, any summation order moves the
output by more than the dtype's tolerance. So the reference runner also runs
every trial on its inputs *rounded differently* (each floating-point value moved
by about one unit in its last place, ``ROUNDINGS`` times) and sends the spread
of the outputs; the host allows a candidate ``compare.SPREAD_MARGIN`` times that
spread on top of the tolerance. The spread is a property of the reference and
the inputs, which the candidate never touches. A variant whose spread exceeds
``UNSTABLE`` of the output's norm (a random or chaotic reference) is dropped; on
the task's own inputs such a spread earns no allowance at all. A broadcast
trial's rows are each one value, along which a kernel's sum rounds the same way
at every step: its inputs are moved by as much as such a sum may be off
(broadcast_move), and it is never dropped, since what it checks is the layout.
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import math
import os
import random
import sys
import threading
import time
import warnings

import torch

STANDARD = "standard"
LAYOUTS = ("transposed", "strided", "rows_apart", "leading_swapped", "sliced", "channels_last", "first_transposed",
           "others_transposed", "aliased", "broadcast")  # fmt: skip
# Layouts that differ between a task's inputs: which of its tensor inputs (in order) each stores transposed.
MIXED_LAYOUTS = {"first_transposed": slice(0, 1), "others_transposed": slice(1, None)}
DISTRIBUTIONS = ("large", "small", "offset", "far_below", "positive", "masked", "zeros", "nan")
# Distributions where a candidate that differs from the reference is warned of, not rejected (module doc);
# the reference's non-finite output there is what the candidate is compared with, not a reason to drop it.
ADVISORY = ("nan",)
AUTOGRAD_ON = "autograd_on"
INFERENCE_MODE = "inference_mode"
OTHER_THREADS = "other_threads"
ANOTHER_THREAD = "another_thread"
ALONGSIDE = "alongside_other_calls"
# Both models put in a state of their own for the trial (model_state): evaluation mode; parameters frozen,
# with autograd on and inputs that require grad (as around a LoRA adapter); and SERVED, both at once under
# torch.inference_mode(). Kernels that took another path in either state, or only in both together,
# passed reviews of 2026-11-28: forge called models only in training mode with trainable weights.
EVAL_MODE = "eval_mode"
FROZEN = "frozen_parameters"
SERVED = "served"
# The task's own inputs passed in tensors that held other values a call before, rewritten in place behind
# autograd's version counter between the two calls (as_called, call_under): a batch buffer refilled
# through its numpy view, by another kernel or through .data. forge's every other call got tensors of its
# own, so a kernel that kept its last result for the same tensor object (its version, data pointer and a
# few of its values unchanged) passed, and returned the last batch's outputs (a review, 2026-12-01).
REFILLED = "refilled_in_place"
_STATES = {EVAL_MODE: (True, False), FROZEN: (False, True), SERVED: (True, True)}  # (eval mode, frozen)
# Trials of the task's own inputs made under a condition of their own (call_under; ALONGSIDE's plain call,
# calls_alongside; model_state).
CONDITIONS = (AUTOGRAD_ON, INFERENCE_MODE, OTHER_THREADS, ANOTHER_THREAD, ALONGSIDE, EVAL_MODE, FROZEN, SERVED,
              REFILLED)  # fmt: skip
# Trials whose plain call is many calls, compared through the least and greatest value of each element over
# them (Envelope): at several thread counts (calls_at_thread_counts), alongside another thread's calls.
ENVELOPED = (OTHER_THREADS, ALONGSIDE)
# An ALONGSIDE trial's calls: made for ALONGSIDE_SECONDS (ALONGSIDE_CALLS of them at most, one per partner at least),
# each a chance for two calls' work to overlap. Calls overlap only where both threads are outside Python's
# lock at once: a C++ loop that dropped it and shared one static row went wrong in about 1 call in 200,
# 2026-11-28, so a time, not a count, bounds them.
ALONGSIDE_CALLS = 100_000
ALONGSIDE_SECONDS = 0.25
# The threads calling the model beside an ALONGSIDE trial's own: with one, that loop's wrong calls in a quarter
# of a second were 0 to 2 on a quiet machine and 0 to 5 beside a busy process (its selftest missed it in 1 run
# of 2 there); with two, 4 to 25 beside the busy process (2026-11-29, two cores).
ALONGSIDE_COMPANIONS = 2
ROUNDINGS = 2
UNSTABLE = 1e-2

DESCRIPTIONS = {
    STANDARD: "the task's own inputs",
    "transposed": "inputs stored transposed (non-contiguous)",
    "strided": "inputs as strided views at an offset (non-contiguous)",
    "rows_apart": "inputs with contiguous rows spaced apart (a narrowed view)",
    "leading_swapped": "inputs with their first and next-to-last dimensions stored swapped (rows contiguous)",
    "sliced": "contiguous inputs at an unaligned storage offset in a larger buffer (a slice; in turn 8, 4 and 12 "
    "bytes past a 16-byte boundary, and on)",
    "channels_last": "4-D inputs stored channels-last (NHWC), 5-D ones channels-last-3d (NDHWC)",
    "first_transposed": "the first input stored transposed, the others as made (layouts differ between inputs)",
    "others_transposed": "every input but the first stored transposed (layouts differ between inputs)",
    "aliased": "one tensor passed for every input of its shape and dtype (as model(x, x), or q = k = v)",
    "broadcast": "floating-point inputs broadcast along their last dimension (stride 0, as x[..., :1].expand)",
    "large": "inputs x 100",
    "small": "inputs x 0.001",
    "offset": "inputs shifted by 4x their RMS",
    "far_below": "inputs shifted down by 100x their RMS",
    "positive": "absolute values of the inputs",
    "masked": "inputs with -inf where a mask would put it",
    "zeros": "inputs with one element in four exactly zero (as after dropout, a ReLU or zero padding)",
    "nan": "inputs with one element in sixteen NaN (as a diverging model's activations)",
}
_WITH_AUTOGRAD = "+" + AUTOGRAD_ON
_perf_counter = time.perf_counter  # bound before a candidate is imported, as timing.py does
_sleep = time.sleep
# Where Python's own code, the installed packages' and forge's lie (forge_sandbox's folder; this file alone
# where an exported module carries it, beside the candidate's): an ALONGSIDE trial's threads take turns at
# every line of any other code (the candidate's), _yielding.
_ROOTS = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
_TRUSTED_CODE = tuple(os.path.join(path, "") for root in _ROOTS for path in {root, os.path.realpath(root)}) + (
    os.path.join(os.path.dirname(__file__), "") if __package__ == "forge_sandbox" else __file__,
    "<frozen ",
)
MASKED_SHARE = 8  # one element in eight, besides the first of every other row
ZEROS_SHARE = 4  # one element in four
NAN_SHARE = 16


def trial_plan(standard: int, with_variants: bool, under_autograd: bool = True) -> list[str]:
    """The variant of each verification trial: ``standard`` of the task's own inputs, then the others;
    with ``under_autograd`` (the base shape's), each layout and distribution but the advisory ones once more
    with autograd enabled."""
    if not with_variants:
        return [STANDARD] * standard
    others = list(LAYOUTS) + list(DISTRIBUTIONS)
    again = [v + _WITH_AUTOGRAD for v in others if v not in ADVISORY] if under_autograd else []
    return [STANDARD] * standard + others + list(CONDITIONS) + again


def in_staged_memory(plan: list[str], i: int) -> bool:
    """Whether trial ``i``'s inputs lie, on the CPU, in memory laid out as the host stages a timed call's
    (runner.ModelHarness.load_trials), or else in PyTorch's allocator's, as a user's do: of a layout or
    distribution verified twice (with autograd on too) one call in each; of every other trial, every
    other one. A kernel that reads which kind it was given (whether its storage can be resized) and is
    wrong on one of them meets it."""
    variant = plan[i]
    if variant.endswith(_WITH_AUTOGRAD):
        return True
    if variant + _WITH_AUTOGRAD in plan:
        return False
    return i % 2 == 1


def grad_enabled(variant: str) -> bool:
    """Whether a trial's call is made with autograd enabled; every other call of forge's is made under
    ``torch.no_grad``."""
    return variant in (AUTOGRAD_ON, FROZEN) or variant.endswith(_WITH_AUTOGRAD)


# The thread counts of an ``other_threads`` trial's plain calls (one call at each but the runner's own): a
# many-core machine's, more than most shapes have rows (a softmax that split each row across the threads
# where a batch had fewer rows than threads, and merged the pieces wrongly, passed at 3, 2026-11-27), and
# prime: no power of two, no even split; and the few of a laptop or a small server (a split of the rows
# into equal chunks that dropped the remainder was wrong at 2, 4 and 8 threads and passed at 67 alone, a
# review, 2026-11-28). The censused call is made at the first of other_thread_counts.
MANY_THREADS = 67
THREAD_COUNTS = (MANY_THREADS, 2, 3, 4, 8)
# ... and, besides those written here, one drawn afresh from each of these ranges for every such trial (the
# counts of common machines: 12, 16, 32, 64, and of the largest: 96, 128, 192) and the machine's own count.
# A kernel that split its work into a table of eight chunks left the tail of its output unwritten from 9 to
# 64 threads and passed at the fixed counts alone (a review, 2026-12-02): a kernel must be right at every
# count, not at a list it can read. The draws come from the operating system's generator, which no seed
# reaches.
DRAWN_THREAD_COUNTS = (range(5, 17), range(17, 65), range(68, 257))
_DRAW = random.SystemRandom()


def other_thread_counts(threads: int, drawn: bool = True) -> list[int]:
    """The CPU thread counts of an ``other_threads`` trial's calls, for a runner that has ``threads``: the
    fixed ones first (the censused call is made at the first), then, where ``drawn``, those drawn."""
    fixed = [max(MANY_THREADS, threads + 1)] + [n for n in THREAD_COUNTS[1:] if n != threads]
    if not drawn:
        return fixed
    extra = [_DRAW.choice(counts) for counts in DRAWN_THREAD_COUNTS] + [os.cpu_count() or 1]
    return fixed + [n for n in dict.fromkeys(extra) if n != threads and n not in fixed]


def as_called(inputs: list, variant: str) -> list:
    """A trial's inputs as its call gets them: where autograd is enabled, each floating-point tensor as one
    that requires grad (views of the same memory), as a layer's input in training is the output of the
    layers before it (a kernel wrong only on such inputs passed, 2026-11-27); in a REFILLED trial, copies
    that hold other values until call_under writes the inputs' into them (_Refilled)."""
    if variant == REFILLED:
        return _Refilled([_stale_copy(x) for x in inputs], inputs)
    if not grad_enabled(variant):
        return inputs
    return [x.detach().requires_grad_() if isinstance(x, torch.Tensor) and x.is_floating_point() else x
            for x in inputs]  # fmt: skip


class _Refilled(list):
    """A REFILLED trial's inputs as called: tensors holding other values (_stale_copy), and the values
    that :meth:`refill` writes into them between the trial's two calls."""

    def __init__(self, stale: list, values: list) -> None:
        super().__init__(stale)
        self.values = values

    def refill(self) -> None:
        # through .data: in place, behind autograd's version counter, as a numpy view's writes or another
        # kernel's go
        with torch.no_grad():
            for held, value in zip(self, self.values):
                if isinstance(held, torch.Tensor) and held is not value:
                    held.data.copy_(value)


# The share of a REFILLED trial's input that differs from the value written in afterwards: a run of this
# many elements, at a place drawn afresh, reversed (values of the input's own kind, in its own range). A
# kernel that compared a few of an input's values with its last call's before reusing that call's result
# misses the run unless it reads within it.
REFILL_SHARE = 64


def _stale_copy(x):
    """A copy of a floating-point input in the same layout, a run of its elements (REFILL_SHARE) in
    reverse order; any other input as it is."""
    if not isinstance(x, torch.Tensor) or not x.is_floating_point() or x.numel() < 2:
        return x
    copy = torch.empty_like(x)
    copy.data.copy_(x)
    if not copy.is_contiguous():
        return copy
    flat = copy.data.view(-1)
    length = max(2, flat.numel() // REFILL_SHARE)
    start = int.from_bytes(os.urandom(8), "little") % (flat.numel() - length + 1)
    flat[start : start + length] = flat[start : start + length].flip(0).clone()
    return copy


def call_under(variant: str, call, threads: int | None = None, inputs: list | None = None):
    """``call()`` as a trial of ``variant`` is made: with autograd enabled or not (grad_enabled), under
    call_condition, and in a thread started for it in an ``another_thread`` trial (a serving worker's:
    forge's other calls come from the process's main thread, and a kernel right only there passed,
    2026-11-27). Autograd's and inference mode are the calling thread's, so they are set in that thread.
    An ALONGSIDE trial's plain call is made by calls_alongside; here it is one call as any other (the
    reference's, and the candidate's under the operator census). In a REFILLED trial whose ``inputs`` (the
    call's, as_called made them) hold other values, ``call()`` is made on those first, its output let go,
    then again once the inputs' own values are written into the same tensors."""

    def made() -> object:
        with torch.set_grad_enabled(grad_enabled(variant)), call_condition(variant, threads):
            return call()

    if variant == REFILLED and isinstance(inputs, _Refilled):
        made()
        inputs.refill()
        return made()
    if variant != ANOTHER_THREAD:
        return made()
    outcome: dict = {}

    def worker() -> None:
        try:
            outcome["value"] = made()
        except BaseException as exc:  # raised again in the caller's thread, as its own
            outcome["error"] = exc

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


# Until when (perf_counter) an ALONGSIDE trial's threads take turns at each line: its time, no longer (a
# candidate whose Python runs many lines per call ran past the stage's time limit with turns at every line
# of all its calls).
_TURNS_UNTIL = [0.0]


def _yield_at_each_line(frame, event, arg):
    if _perf_counter() > _TURNS_UNTIL[0]:
        return None
    if event == "line":
        _sleep(0)  # lets the other thread take Python's lock here
    return _yield_at_each_line


def _yielding(frame, event, arg):
    """The trace function of an ALONGSIDE trial's threads: at each line of code outside _TRUSTED_CODE,
    the thread offers Python's lock to the other. Two calls' Python then interleaves line by line: a plan
    cached on the module for the last shape seen, read back by a call of another shape after the other
    thread's call had changed it, went wrong in about 1 call in 300 with threads taking turns every 5 ms
    (Python's default) or every 20 us (a quarter of a second's trial passed it), and at once with turns at
    every line (a review, 2026-11-28). Only the candidate's lines: a shorter switch interval for all code
    would also break Triton's autotuner, whose state is not safe across threads."""
    if _perf_counter() > _TURNS_UNTIL[0] or frame.f_code.co_filename.startswith(_TRUSTED_CODE):
        return None
    return _yield_at_each_line


def calls_alongside(call, companion, seen, calls: int = ALONGSIDE_CALLS, seconds: float = ALONGSIDE_SECONDS,
                    least: int = 1) -> tuple:  # fmt: skip
    """``call()`` made again and again (for ``seconds``, ``calls`` times at most, ``least`` at least), each
    output handed to ``seen`` as it returns, while ALONGSIDE_COMPANIONS other threads make ``companion()``
    (the same model on other inputs, without autograd) over and over, from before the first of them until
    after the last: an ALONGSIDE trial's plain call. Returns how many calls were finished (this thread's,
    the others' together). An error in any thread is raised in the caller's, as its own."""
    going, done = threading.Event(), threading.Event()
    companion_state: dict = {}
    finished = [0] * ALONGSIDE_COMPANIONS  # each companion's own count: two threads never add to one

    def worker(at: int) -> None:
        sys.settrace(_yielding)
        try:
            with torch.no_grad():
                while not done.is_set():
                    going.set()  # the caller starts as this call starts (at the latest)
                    companion()
                    finished[at] += 1
        except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
            companion_state["error"] = exc
        finally:
            sys.settrace(None)
            going.set()

    tracing = sys.gettrace()
    _TURNS_UNTIL[0] = _perf_counter() + seconds
    threads = [threading.Thread(target=worker, args=(at,), name="alongside", daemon=True)
               for at in range(ALONGSIDE_COMPANIONS)]  # fmt: skip
    for thread in threads:
        thread.start()
    going.wait()
    made = 0
    sys.settrace(_yielding)
    try:
        deadline = _perf_counter() + seconds
        while "error" not in companion_state:
            seen(call())
            made += 1
            if made >= calls or (_perf_counter() >= deadline and made >= least):
                break
    finally:
        sys.settrace(tracing)
        done.set()
        for thread in threads:
            thread.join()
    if "error" in companion_state:
        raise companion_state["error"]
    return made, sum(finished)


def alongside_partners(group: list[str], at: int) -> list[int]:
    """The trials of a group (their variants, ``group``) whose inputs the ALONGSIDE trial at ``at`` calls
    the model on in turn: its own (the task's) and each layout's, so that a path of the kernel's taken
    only on one layout runs in both threads at once too (a staging buffer shared by calls, used only for
    non-contiguous inputs, passed, a review, 2026-11-28). Each has an envelope of its own."""
    return [at] + [k for k, variant in enumerate(group) if variant in LAYOUTS]


def calls_at_thread_counts(call, seen) -> list[int]:
    """``call()`` once at each of other_thread_counts (an ``other_threads`` trial's plain calls), each
    output handed to ``seen``; returns the counts."""
    counts = other_thread_counts(torch.get_num_threads())
    for threads in counts:
        out = call_under(OTHER_THREADS, call, threads)
        size, device = (out.untyped_storage().nbytes(), out.device) if type(out) is torch.Tensor else (0, None)
        seen(out)
        del out
        scrub(size, device)
    return counts


def scrub(size: int, device) -> None:
    """``size`` bytes taken from the allocator on ``device``, every byte set (NaN in any float, -1 in any
    integer), and given back: where the last call's output was just freed, the next call's output is likely
    to get its memory. Calls on the same inputs one after another returned the right values in memory a
    kernel never wrote: the last call's (a review, 2026-12-02: a kernel that left the tail of its output
    unwritten at some thread counts passed where the allocator handed it the output of the call before)."""
    if size > 0 and device is not None:
        junk = torch.full((size,), 255, dtype=torch.uint8, device=device)
        del junk


class Envelope:
    """The element-wise least and greatest of outputs of one shape and dtype, folded in as they come (NaN
    where any is NaN; a complex output's real and imaginary parts apart): where both lie within a
    tolerance of the reference's, every output folded in does. ``bounds`` is None where they were not all
    plain tensors of one shape and dtype."""

    def __init__(self) -> None:
        self.first = None
        self.low = self.high = None
        self.mixed = False

    def add(self, output) -> None:
        if self.first is None and not self.mixed:
            self.first = output
            if type(output) is torch.Tensor:
                self.low, self.high = self._comparable(output).clone(), self._comparable(output).clone()
            else:
                self.mixed = True
            return
        first = self.first
        if (self.mixed or type(output) is not torch.Tensor or output.shape != first.shape
                or output.dtype != first.dtype):  # fmt: skip
            self.mixed = True
            return
        torch.minimum(self.low, self._comparable(output), out=self.low)
        torch.maximum(self.high, self._comparable(output), out=self.high)

    @staticmethod
    def _comparable(x: torch.Tensor) -> torch.Tensor:
        x = x.detach()
        return torch.view_as_real(x) if x.is_complex() else x.to(torch.uint8) if x.dtype == torch.bool else x

    def bounds(self) -> tuple | None:
        if self.mixed or self.low is None:
            return None

        def back(x: torch.Tensor) -> torch.Tensor:
            first = self.first
            return torch.view_as_complex(x) if first.is_complex() else x.bool() if first.dtype == torch.bool else x

        return back(self.low), back(self.high)


@contextlib.contextmanager
def model_state(variant: str, *models):
    """Each of ``models`` (the reference and the candidate alike) as an ``eval_mode`` or ``served`` trial has
    it, in evaluation mode (``model.eval()``), and a ``frozen_parameters`` or ``served`` one, its parameters
    not requiring grad; put back after, through the model's own ``train()`` (a model that folds a
    normalization into its weights on ``eval()`` unfolds them there). Nothing in any other trial, and
    nothing for a model that is no ``torch.nn.Module``."""
    evaluating, freezing = _STATES.get(variant, (False, False))
    modules = [m for m in models if isinstance(m, torch.nn.Module)]
    tops = [(model, model.training) for model in modules] if evaluating else []
    modes = [(m, m.training) for model in modules for m in model.modules()] if evaluating else []
    flags = [(p, p.requires_grad) for model in modules for p in model.parameters()] if freezing else []
    for model in modules if evaluating else ():
        model.eval()
    for p, _ in flags:
        p.requires_grad_(False)
    try:
        yield
    finally:
        for p, required in flags:
            p.requires_grad_(required)
        for model, training in tops:
            model.train(training)
        for m, training in modes:
            if m.training != training:
                m.training = training


def evaluation_mode_unmatchable(variant: str, model) -> str:
    """Why an ``eval_mode`` or ``served`` trial is dropped for this reference model, '' when it is not:
    normalization layers with running statistics, which its other trials moved in training mode by as
    many calls as it made (more than the candidate), so that in evaluation mode the two models normalize
    by different figures and no kernel could match."""
    if not _STATES.get(variant, (False, False))[0] or not isinstance(model, torch.nn.Module):
        return ""
    if any(isinstance(m, torch.nn.modules.batchnorm._NormBase) and m.track_running_stats for m in model.modules()):
        return (
            "the reference keeps running statistics (BatchNorm), which its other trials moved by more calls "
            "than the candidate's: in evaluation mode no kernel could match"
        )
    return ""


@contextlib.contextmanager
def call_condition(variant: str, threads: int | None = None):
    """What a trial's call is made under besides autograd's mode (grad_enabled): ``torch.inference_mode``
    in an ``inference_mode`` trial; torch's CPU threads set to ``threads`` (by default the first of
    other_thread_counts) in an ``other_threads`` trial (put back after the call); nothing else in any
    other."""
    if variant in (INFERENCE_MODE, SERVED):
        with torch.inference_mode():
            yield
        return
    if variant != OTHER_THREADS:
        yield
        return
    own, runtimes = torch.get_num_threads(), _openmp_runtimes()
    put_back = _set_threads(threads or other_thread_counts(own, drawn=False)[0], runtimes)
    try:
        yield
    finally:
        put_back()
        _shrink_thread_pools(own, runtimes)


def _set_threads(count: int, openmp_runtimes: list):
    """Sets the CPU threads of torch and of every OpenMP runtime in the process (``openmp_runtimes``,
    _openmp_runtimes) to ``count``, as a machine with that many cores would have them; returns what puts
    them back.

    Through the OpenMP runtimes themselves where torch parallelizes with one: torch.set_num_threads also
    makes a pthreadpool of that many workers at once, which stay when the count goes back down (66 idle
    threads after a trial at 67, torch 2.13). Idle threads in the candidate's runner lengthen every host
    window of its timed calls (the freezer stops and resumes every task of its group: an echo's window
    measured 41 us with none, 73 us beside 66, 2026-11-29), time the reference never pays. A kernel sees
    the count either way: torch.get_num_threads() and ATen's parallel regions are OpenMP's."""
    runtimes = [(r, r.omp_get_max_threads()) for r in openmp_runtimes]
    for runtime, _ in runtimes:
        runtime.omp_set_num_threads(count)
    own = None
    if torch.get_num_threads() != count:  # torch parallelizes otherwise
        own = torch.get_num_threads()
        torch.set_num_threads(count)

    def put_back() -> None:
        for runtime, previous in runtimes:
            runtime.omp_set_num_threads(previous)
        if own is not None:
            torch.set_num_threads(own)

    return put_back


def _openmp_runtimes() -> list:
    """The OpenMP runtimes mapped in this process (torch's among them where it parallelizes with OpenMP)."""
    paths = []
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split(maxsplit=5)[-1].strip()
                name = os.path.basename(path)
                if name.startswith(("libgomp", "libomp", "libiomp")) and path not in paths:
                    paths.append(path)
    except OSError:
        return []
    runtimes = []
    for path in paths:
        try:
            runtime = ctypes.CDLL(path)
            runtime.omp_set_num_threads.argtypes = [ctypes.c_int]
            runtime.omp_get_max_threads.restype = ctypes.c_int
        except (OSError, AttributeError):
            continue
        runtimes.append(runtime)
    return runtimes


# Elements of one operation that ATen splits across threads (at::internal::GRAIN_SIZE is 32768).
_SPLIT_ELEMENTS = 1 << 16


def _shrink_thread_pools(own: int, openmp_runtimes: list) -> None:
    """Let the workers that a call at more threads left idle in torch's OpenMP pool exit (see
    _set_threads): the pool keeps them until its next parallel region at fewer threads, which a small
    task's timed calls may never enter. At one thread ATen makes no parallel region at all, so the region
    is made at two."""
    put_back = _set_threads(max(own, 2), openmp_runtimes)
    try:
        torch.empty(_SPLIT_ELEMENTS).fill_(0.0)
    finally:
        put_back()


@contextlib.contextmanager
def fresh_memory_filled():
    """PyTorch's deterministic mode (warnings only, no error), in which every tensor torch.empty hands out
    is filled first (NaN, or an integer type's largest value): an output element that a kernel never
    writes shows, whatever the memory held before. Where that memory held the right value by chance (a
    kernel that skipped exact zeros, its output in the memory of a freed copy of its input, passed,
    2026-11-27), the plain call of a trial is right and this one is not. Put back as it was after. Here
    so that the exported module's selftest (which carries this module's source) makes the same call."""
    enabled, warn_only = (
        torch.are_deterministic_algorithms_enabled(),
        torch.is_deterministic_algorithms_warn_only_enabled(),
    )
    fill = torch.utils.deterministic.fill_uninitialized_memory
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an operator without a deterministic implementation only warns
        torch.use_deterministic_algorithms(True, warn_only=True)
        torch.utils.deterministic.fill_uninitialized_memory = True
        try:
            yield
        finally:
            torch.utils.deterministic.fill_uninitialized_memory = fill
            torch.use_deterministic_algorithms(enabled, warn_only=warn_only)


def inputs_of(variant: str) -> str:
    """The variant of a trial's inputs: its layout or distribution, without the call's condition."""
    return STANDARD if variant in CONDITIONS else variant.removesuffix(_WITH_AUTOGRAD)


def describe(variant: str) -> str:
    if variant == AUTOGRAD_ON:
        return "the task's own inputs, called with autograd enabled (as in training's forward pass)"
    if variant == INFERENCE_MODE:
        return "the task's own inputs, called under torch.inference_mode() (as a model is often served)"
    if variant == OTHER_THREADS:
        return "the task's own inputs, called with torch's CPU threads set to other counts (as on other machines)"
    if variant == ANOTHER_THREAD:
        return "the task's own inputs, called from a thread other than the process's main one (as a serving worker)"
    if variant == ALONGSIDE:
        return (
            "the task's own inputs, called while another thread called the same model on other inputs "
            "(as a server's workers share one model)"
        )
    if variant == EVAL_MODE:
        return "the task's own inputs, both models in evaluation mode (model.eval(), as a model is served)"
    if variant == FROZEN:
        return (
            "the task's own inputs requiring grad, called with autograd enabled, both models' parameters "
            "frozen (requires_grad False, as around a LoRA adapter)"
        )
    if variant == SERVED:
        return (
            "the task's own inputs, both models in evaluation mode with their parameters frozen, called under "
            "torch.inference_mode() (as a model is served)"
        )
    if variant == REFILLED:
        return (
            "the task's own inputs, written in place (behind autograd's version counter) into tensors that held "
            "other values in the call before (as a batch buffer refilled through numpy or by another kernel)"
        )
    if variant.endswith(_WITH_AUTOGRAD):
        return f"{DESCRIPTIONS[inputs_of(variant)]}, called with autograd enabled"
    return DESCRIPTIONS[variant]


def transform_values(inputs: list, variant: str, seed: int = 0) -> list:
    """The distribution variants (done once, by the reference runner, before the inputs are saved);
    ``seed``, the trial's, draws where ``masked`` puts -inf. And the broadcast layout's values: one per row,
    the row's first, which apply_layout then broadcasts from memory of one element per row."""
    variant = inputs_of(variant)
    if variant == "broadcast":  # the inputs apply_layout broadcasts (_relaid)
        relaid = set(_relaid(inputs, variant))
        return [x[..., :1].expand(x.shape).contiguous() if i in relaid else x for i, x in enumerate(inputs)]
    if variant not in DISTRIBUTIONS:
        return inputs
    out = []
    for x in inputs:
        if isinstance(x, torch.Tensor) and x.is_floating_point() and x.numel():
            if variant == "large":
                x = x * 100
            elif variant == "small":
                x = x * 1e-3
            elif variant in ("offset", "far_below"):  # all of one sign; far below, exp() underflows
                rms = float(x.double().pow(2).mean().sqrt()) or 1.0
                x = x + 4 * rms if variant == "offset" else x - 100 * rms
            elif variant == "masked":
                x = x.masked_fill(_mask(x, seed + len(out)), float("-inf"))
            elif variant == "zeros":
                x = x.masked_fill(_drawn(x, seed + len(out), ZEROS_SHARE).to(x.device), 0.0)
            elif variant == "nan":
                x = x.masked_fill(_drawn(x, seed + len(out), NAN_SHARE).to(x.device), float("nan"))
            else:
                x = x.abs()
        out.append(x)
    return out


def _mask(x: torch.Tensor, seed: int) -> torch.Tensor:
    """Where ``masked`` puts -inf, row by row (the last dimension) as real masks do, in turn: padding on the
    left (a run of -inf at the row's start), padding on the right (at its end), a causal mask's row (all
    after the row's own position), and one element in MASKED_SHARE drawn anywhere; each run's length drawn
    from ``seed``, from one element to all but one (every row keeps a finite value). A blocked online
    softmax that took a first block of -inf for NaN passed with -inf at a row's first element alone, a
    review, 2026-11-28: a run as long as a block never came up."""
    if x.dim() == 0 or x.shape[-1] < 2:
        return _drawn(x, seed, MASKED_SHARE).to(x.device)
    cols = x.shape[-1]
    rows = x.numel() // cols
    generator = torch.Generator(device="cpu").manual_seed((seed + 1) % 2**63)
    length = torch.randint(1, cols, (rows, 1), generator=generator)
    at, row = torch.arange(cols), torch.arange(rows).unsqueeze(1)
    kind = row % 4
    mask = torch.where(kind == 0, at < length, at >= cols - length)  # left padding, right padding
    mask = torch.where(kind == 2, at > (row // 4) % cols, mask)  # a causal mask's row, each position in turn
    scattered = _drawn(x, seed, MASKED_SHARE).view(rows, cols)
    scattered[:, -1] &= ~scattered[:, :-1].all(-1)  # a narrow row drawn all masked keeps its last element
    mask = torch.where(kind == 3, scattered, mask)
    return mask.view(x.shape).to(x.device)


def _drawn(x: torch.Tensor, seed: int, one_in: int) -> torch.Tensor:
    """About one element of ``x`` in ``one_in``, drawn from ``seed`` (a boolean mask on the CPU)."""
    generator = torch.Generator(device="cpu").manual_seed(seed % 2**63)
    return torch.randint(0, one_in, tuple(x.shape), generator=generator) == 0


def rounded_differently(inputs: list, seed: int, variant: str = STANDARD) -> list:
    """The inputs with every floating-point value moved by about one unit in its last place (random sign);
    on a broadcast trial's (``variant``), the broadcast ones by as much as a sum along a row may round."""
    broadcast = inputs_of(variant) == "broadcast"
    out = []
    for x in inputs:
        if isinstance(x, torch.Tensor) and x.is_floating_point() and x.numel():
            generator = torch.Generator(device=x.device).manual_seed(seed)
            # in place, in the noise's own memory: at a task's full size each temporary is an input's size;
            # float64 in float64 (one plus its epsilon in float32 is one: its inputs were never moved)
            wide = torch.float64 if x.dtype == torch.float64 else torch.float32
            moved = torch.randn(x.shape, generator=generator, device=x.device, dtype=wide)
            if broadcast and _broadcastable(x):
                moved.sign_().mul_(broadcast_move(x))
            else:
                moved.mul_(torch.finfo(x.dtype).eps)
            moved.add_(1).mul_(x if x.dtype == wide else x.to(wide))
            x = moved.to(x.dtype)
        out.append(x)
    return out


# A broadcast row is one value, so every step of a sum along it rounds the same way: a kernel's sum of L
# of them is off by up to L ulps where PyTorch's may be exact, and where the output cancels that sum (a
# LayerNorm's row less its mean, over the square root of its epsilon) an honest one-thread-per-row
# LayerNorm missed by 6% (2026-12-04). So a broadcast trial's inputs are moved by L ulps of the sum's
# float32 or float64 (each by exactly that, with a random sign: none is left almost still), up to this.
BROADCAST_MOVE_MAX = 1e-2


def broadcast_move(x: torch.Tensor) -> float:
    """How far (relative) a broadcast trial's rounding moves each value of ``x`` (BROADCAST_MOVE_MAX)."""
    wide = torch.float64 if x.dtype == torch.float64 else torch.float32
    return min(max(x.shape[-1] * torch.finfo(wide).eps, torch.finfo(x.dtype).eps), BROADCAST_MOVE_MAX)


SPREAD_CHUNK = 1 << 22  # elements of the output compared at a time in float64 (32 MiB)


def rounding_spread(forward, inputs: list, output, variant: str = STANDARD) -> torch.Tensor | None:
    """Per element, how far ``forward`` moves ``output`` when its inputs are rounded differently (as for
    ``variant``'s trial: rounded_differently); None where there is nothing to measure (not a floating-point
    tensor)."""
    if type(output) is not torch.Tensor or not output.is_floating_point() or not output.numel():
        return None
    dtype = torch.float64 if output.dtype == torch.float64 else torch.float32
    spread = torch.zeros(output.shape, dtype=dtype, device=output.device)
    # The differences are taken in float64 a chunk at a time: at a task's full size a float64 copy of
    # the whole output is twice its size, and the reference runner holds a group's trials besides.
    # Rounding to ``dtype`` is monotonic, so the maximum of the rounded differences is the rounded maximum.
    flat_output, flat_spread = output.reshape(-1), spread.view(-1)
    for seed in range(ROUNDINGS):
        other = forward(rounded_differently(inputs, seed, variant))
        if type(other) is not torch.Tensor or other.shape != output.shape:
            return None
        flat_other = other.reshape(-1)
        for start in range(0, flat_output.numel(), SPREAD_CHUNK):
            end = start + SPREAD_CHUNK
            moved = flat_other[start:end].double().sub_(flat_output[start:end].double()).abs_()
            moved.nan_to_num_(nan=0.0, posinf=0.0, neginf=0.0)
            torch.maximum(flat_spread[start:end], moved.to(dtype), out=flat_spread[start:end])
        del other, flat_other
    return spread


def unstable(spread: torch.Tensor, output: torch.Tensor, variant: str = STANDARD) -> float | None:
    """The spread's share of the output's norm when it exceeds ``UNSTABLE`` (see the module doc), else None;
    never on a broadcast trial, whose spread is wide by design (broadcast_move) and which is kept for its
    layout: a kernel that reads a stride-0 row as a dense one reads values no rounding makes."""
    if inputs_of(variant) == "broadcast":
        return None
    moved = float(torch.linalg.vector_norm(spread.double()))
    if moved == 0:
        return None
    norm = float(torch.linalg.vector_norm(output.double().nan_to_num(nan=0.0, posinf=0.0, neginf=0.0)))
    share = moved / norm if norm > 0 else math.inf
    return share if share > UNSTABLE else None


def apply_layout(inputs: list, variant: str) -> list:
    """The layout variants, made on the device (saving or moving a tensor may make it contiguous)."""
    variant = inputs_of(variant)
    if variant not in LAYOUTS:
        return inputs
    if variant == "aliased":
        # A kernel that borrowed an input's memory as scratch and put it back (a square weight transposed in
        # place) was right on inputs of their own and wrong on x @ x, a review, 2026-11-28.
        first = {}
        return [first.setdefault(_alias_key(x), x) if _alias_key(x) else x for x in inputs]
    relaid = _relaid(inputs, variant)
    if variant in MIXED_LAYOUTS:
        chosen = set(relaid[MIXED_LAYOUTS[variant]])
        return [_relayout(x, "transposed") if i in chosen else x for i, x in enumerate(inputs)]
    return [_relayout(x, variant) if i in relaid else x for i, x in enumerate(inputs)]


def applies(inputs: list, variant: str) -> bool:
    """Whether a variant makes inputs of its own: layouts that differ between inputs need two tensors,
    channels-last a 4-D or 5-D one (not_applying says why not)."""
    variant = inputs_of(variant)
    if variant in MIXED_LAYOUTS:
        return len(_relaid(inputs)) >= 2
    if variant == "aliased":
        keys = [_alias_key(x) for x in inputs if _alias_key(x)]
        return len(set(keys)) < len(keys)
    return variant not in ("channels_last", "broadcast") or bool(_relaid(inputs, variant))


def _alias_key(x) -> tuple | None:
    """What a tensor input must share with another for one tensor to be passed for both (aliased)."""
    return (tuple(x.shape), x.dtype, str(x.device)) if isinstance(x, torch.Tensor) and x.numel() > 1 else None


def not_applying(variant: str) -> str:
    """Why a variant that does not apply (applies) was dropped."""
    if inputs_of(variant) == "channels_last":
        return "the task has no 4-D or 5-D tensor input to store channels-last"
    if inputs_of(variant) == "aliased":
        return "no two tensor inputs of one shape and dtype: none to pass for another"
    if inputs_of(variant) == "broadcast":
        return "the task has no floating-point tensor input whose last dimension is longer than one"
    return "the task has one tensor input: nothing to store differently from it"


def _relaid(inputs: list, variant: str = "") -> list[int]:
    """Which inputs a layout variant stores otherwise: the tensors of more than one element (channels-last:
    those of 4 or 5 dimensions; broadcast: the floating-point ones whose last dimension is longer than one)."""
    dims = (4, 5) if variant == "channels_last" else None
    return [i for i, x in enumerate(inputs)
            if isinstance(x, torch.Tensor) and x.numel() > 1 and (dims is None or x.dim() in dims)
            and (variant != "broadcast" or _broadcastable(x))]  # fmt: skip


def _broadcastable(x: torch.Tensor) -> bool:
    return x.is_floating_point() and x.dim() >= 1 and x.shape[-1] > 1


def _relayout(x: torch.Tensor, variant: str) -> torch.Tensor:
    if variant == "transposed":
        if x.dim() < 2:
            return _relayout(x, "strided")
        return x.transpose(-1, -2).contiguous().transpose(-1, -2)
    if variant == "leading_swapped":
        if x.dim() < 3 or x.shape[-3] == 1:  # nothing to swap: rows apart at another width (the last third)
            return _within(x, width=3, start=2)
        return x.transpose(-3, -2).contiguous().transpose(-3, -2)
    if variant == "rows_apart":
        return _within(x, width=2, start=1)
    if variant == "channels_last":
        return x.contiguous(memory_format=torch.channels_last if x.dim() == 4 else torch.channels_last_3d)
    if variant == "sliced":
        offset = _next_slice_offset(x.element_size())
        buffer = torch.zeros(x.numel() + offset, dtype=x.dtype, device=x.device)
        view = buffer[offset:].view(x.shape)
        view.copy_(x)
        return view
    if variant == "broadcast":  # its values are one per row already (transform_values); its memory holds one
        return x[..., :1].clone().expand(x.shape)  # per row, so that a kernel that reads it dense reads others
    return _within(x, width=2, start=1, step=2)


# A sliced trial's storage offset, in turn: a review, 2026-12-04, passed a kernel whose unaligned path was
# wrong 8 and 12 bytes past a 16-byte boundary, where forge sliced one element in (4 bytes of a float) alone.
_SLICES = itertools.count()


def slice_offsets(element_size: int) -> list[int]:
    """The storage offsets (in elements) the sliced trials take in turn: one of each residue of 16 bytes
    first (8 bytes, then 4 and 12, then the odd ones), then the rest below 64 bytes, then 16, 32 and 48."""
    by_residue: dict[int, list[int]] = {}
    for offset in range(1, max(64 // element_size, 2)):
        by_residue.setdefault(offset * element_size % 16, []).append(offset)
    order = sorted(by_residue, key=lambda r: (r == 0, -(r & -r), r))
    rounds = max(len(offsets) for offsets in by_residue.values())
    return [by_residue[r][k] for k in range(rounds) for r in order if k < len(by_residue[r])]


def _next_slice_offset(element_size: int) -> int:
    offsets = slice_offsets(element_size)
    return offsets[next(_SLICES) % len(offsets)]


def _within(x: torch.Tensor, width: int, start: int, step: int = 1) -> torch.Tensor:
    """``x`` copied into a buffer ``width`` times as wide in its last dimension: every ``step``-th
    element from ``start`` (step 1: the ``start``-th of ``width`` equal parts of each row)."""
    wide = list(x.shape) or [1]
    n = wide[-1]
    wide[-1] = width * n
    buffer = torch.zeros(wide, dtype=x.dtype, device=x.device)
    view = buffer[..., start::step] if step > 1 else buffer[..., start * n : (start + 1) * n]
    view.copy_(x)
    return view


def nonfinite(output) -> int:
    """How many elements of a floating-point or complex output are NaN or infinite (0 for anything else)."""
    if isinstance(output, torch.Tensor) and (output.is_floating_point() or output.is_complex()):
        return int((~torch.isfinite(output)).sum())
    return 0


def acceptable(output, variant: str, standard_nonfinite: int) -> bool:
    """Whether the reference's output on a variant holds the candidate to anything (see the module doc)."""
    if inputs_of(variant) == STANDARD:
        return True
    if not isinstance(output, torch.Tensor):
        return False
    return nonfinite(output) == 0 or standard_nonfinite > 0 or inputs_of(variant) in ADVISORY
