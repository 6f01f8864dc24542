"""`forge export`: the best verified kernel of a task as a module that imports without forge.

The module carries the candidate's source and the task's source, and needs
only torch and the kernel's own backend (triton, a C++ toolchain, cupy). On
first import it runs the candidate's code (compiling into a cache directory of
its own); it exposes ``ModelNew``, a plain function, a ``torch.library``
custom op with a fake implementation (so ``torch.compile`` can trace through
it), its provenance, and ``selftest()``, which re-verifies it against the
task's reference as forge did: on the task's own inputs, on other memory
layouts, on other value distributions (forge_sandbox.variants) and after new
weights were loaded into both models (forge_sandbox.weights), whose sources the
module carries too, so that both check exactly the same.
"""

from __future__ import annotations

import inspect
import json

from forge import __version__
from forge.history import leaderboard
from forge.store import Store, source_hash
from forge_sandbox import compare, static_check, variants, weights
from forge_sandbox.taskfile import export_name, kernel_module_name


class ExportError(ValueError):
    """Nothing to export, or an ambiguous choice; one line."""


def choose(store: Store, task: str, device: str | None = None) -> dict:
    rows = leaderboard(store, task=task, device=device)
    if not rows:
        raise ExportError(
            f"no verified kernel for task {task!r}{' on ' + device if device else ''} (see forge leaderboard)"
        )
    if len({(r["device"], r["torch"]) for r in rows}) > 1 and device is None:
        devices = ", ".join(sorted({r["device"] for r in rows}))
        raise ExportError(f"task {task!r} has winners on several devices ({devices}): pick one with --device")
    # Several rows on one device mean the task file changed between runs: its latest version wins.
    return max(rows, key=lambda r: r["evaluated_at"] or "")


def render_module(store: Store, row: dict) -> str:
    candidate = store.candidate(row["candidate_id"])
    task = store.db["tasks"].get(row["task_id"])
    name = export_name(row["task"])
    provenance = {
        "task": row["task"],
        "task_sha256": row["task_id"],
        "candidate_sha256": source_hash(candidate["code"]),
        "device": row["device"],
        "torch": row["torch"],
        "speedup": row["speedup"],
        "candidate_ms": row["candidate_ms"],
        "reference_ms": row["reference_ms"],
        "model": row["model"],
        "backend": row["backend"],
        "run": row["run_id"],
        "evaluated_at": row["evaluated_at"],
        "forge_version": __version__,
    }
    return module_text(name, provenance, candidate["code"], task["source"])


def module_text(name: str, provenance: dict, candidate_code: str, task_code: str) -> str:
    """The exported module's source: the kernel and the task, with ``provenance`` (see render_module)."""
    return MODULE_TEMPLATE.format(
        task=provenance["task"],
        speedup=provenance["speedup"],
        device=provenance["device"],
        name=name,
        kernel_module=kernel_module_name(provenance["task"]),
        provenance=json.dumps(provenance, indent=4),
        candidate_source=repr(candidate_code),
        task_source=repr(task_code),
        variants_source=repr(inspect.getsource(variants)),
        weights_source=repr(inspect.getsource(weights)),
        cache_key=provenance["candidate_sha256"][:16],
        uses_triton="triton" in static_check.check_source(candidate_code).backends,
        spread_margin=repr(compare.SPREAD_MARGIN),
    )


MODULE_TEMPLATE = '''"""{task}: a kernel exported by forge ({speedup}x over eager PyTorch on {device}).

Needs torch and the kernel's backend only. Use it as a module (`ModelNew`), as a
function (`{name}(*inputs)`), or as the custom op `torch.ops.forge_export.{name}`,
which works under torch.compile. `selftest()` re-verifies it against the task's
reference; `PROVENANCE` says where it came from.
"""

import json
import os
import sys
import types
import warnings

import torch

PROVENANCE = json.loads("""{provenance}""")

_CANDIDATE_SOURCE = {candidate_source}
_TASK_SOURCE = {task_source}
_VARIANTS_SOURCE = {variants_source}
_WEIGHTS_SOURCE = {weights_source}
_CACHE = os.path.join(os.path.expanduser("~"), ".cache", "forge_export", "{cache_key}")
_USES_TRITON = {uses_triton}


def _exec(source, name):
    # Triton's @jit reads a kernel's source back from its file (inspect.getsource),
    # so the source must exist on disk, not only in this module's strings.
    os.makedirs(_CACHE, exist_ok=True)
    path = os.path.join(_CACHE, name + ".py")
    try:
        with open(path) as f:
            current = f.read()
    except OSError:
        current = None
    if current != source:
        temporary = "{{}}.{{}}.tmp".format(path, os.getpid())
        with open(temporary, "w") as f:
            f.write(source)
        os.replace(temporary, path)
    # made as forge's runner made the kernel's module (the same name, a plain module in sys.modules):
    # nothing about its own module tells a kernel which of the two it runs in
    module = types.ModuleType(name)
    module.__file__ = path
    sys.modules[name] = module
    exec(compile(source, path, "exec"), module.__dict__)
    return module


def _load_kernel():
    # Compiled extensions (load_inline) build once, into a cache of this module's own; the variable is
    # set for the import alone, so that the user's own builds afterwards go where they went before.
    before = os.environ.get("TORCH_EXTENSIONS_DIR")
    os.environ.setdefault("TORCH_EXTENSIONS_DIR", os.path.join(_CACHE, "torch_extensions"))
    try:
        return _exec(_CANDIDATE_SOURCE, "{kernel_module}")
    finally:
        if before is None:
            os.environ.pop("TORCH_EXTENSIONS_DIR", None)


_kernel = _load_kernel()
ModelNew = _kernel.ModelNew
_task = _exec(_TASK_SOURCE, "forge_export_{name}_task")
_default = None


def _default_model(device):
    """ModelNew built with the task's own constructor arguments (and its seed-0 parameters)."""
    global _default
    if _default is None or _default[0] != device:
        with torch.random.fork_rng(devices=[]):  # the user's random state is theirs: drawn from, never reseeded
            torch.manual_seed(0)
            _default = (device, ModelNew(*_task.get_init_inputs()).to(device))
    return _default[1]


@torch.library.custom_op("forge_export::{name}", mutates_args=())
def _op(inputs: list[torch.Tensor]) -> torch.Tensor:
    return _default_model(inputs[0].device)(*inputs)


@_op.register_fake
def _(inputs):
    # The reference's own PyTorch code, run on fake tensors, gives the output's shape and dtype.
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        return _task.Model(*_task.get_init_inputs())(*inputs)


def {name}(*inputs):
    """The op as a plain function, through the custom op (so torch.compile sees one opaque call)."""
    return torch.ops.forge_export.{name}(list(inputs))


_TOLERANCE = {{torch.float32: 1e-4, torch.float16: 1e-2, torch.bfloat16: 2e-2, torch.float64: 1e-7}}
# As forge's comparison (forge_sandbox.compare): where the reference's output moves when its inputs are rounded
# differently, both bounds grow by this many times that spread
_SPREAD_MARGIN = {spread_margin}


def selftest(device=None, size="default", trials=3):
    """Re-verify against the task's reference as forge did, at each of its shapes (the base one and its
    CONFIGS, or SMALL and SMALL_CONFIGS): ``trials`` sets of fresh inputs, then every other memory
    layout, value distribution and calling condition that the reference accepts (at the base shape
    each layout and distribution with autograd on too), then fresh inputs on a second model built beside
    the first and on the first again, and once new weights were loaded into both models (as a checkpoint
    is); raises AssertionError on a mismatch. The process's random
    state is put back afterwards: the trials seed the generators, the caller's draws are theirs."""
    device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
        return _selftest(device, size, trials)


def _selftest(device, size, trials):
    # Seeds drawn afresh, as forge draws its own: a kernel that knew the seeds its checks build models and
    # inputs under could be right under them alone (a review, 2026-12-01: exact when its __init__'s first
    # draw was that of a fixed selftest seed, wrong in a user's process)
    seed = int.from_bytes(os.urandom(4), "little")
    variants = _exec(_VARIANTS_SOURCE, "forge_export_{name}_variants")
    weights = _exec(_WEIGHTS_SOURCE, "forge_export_{name}_weights")
    task = _exec(_TASK_SOURCE, "forge_export_{name}_selftest")
    base = dict(getattr(task, "SMALL", {{}}) or {{}}) if size == "small" else {{}}
    extras = getattr(task, "SMALL_CONFIGS" if size == "small" else "CONFIGS", []) or []
    shapes = [{{**base, **extra}} for extra in extras] + [base]  # the base shape last: the weight steps use it
    for overrides in shapes:
        task = _exec(_TASK_SOURCE, "forge_export_{name}_selftest")
        for key, value in overrides.items():
            setattr(task, key, value)
        reference, candidate = _verify_shape(task, device, trials, variants, seed, under_autograd=overrides is base)
    declared = getattr(task, "TOLERANCE", {{}}) or {{}}
    torch.manual_seed(seed + trials + 1)
    inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in task.get_inputs()]
    steps = ((lambda model, moves: weights.load_moved(model, moves, checkpoint=reference.state_dict()),
              "after new weights were loaded into both models"),
             (weights.change_in_place, "after the weights were changed in place in both models"),
             (lambda model, moves: weights.load_moved(
                 model, moves, checkpoint={{k: v.clone() for k, v in reference.state_dict().items()}}, assign=True),
              "after new weights were loaded into both models as new tensors"))
    for step, (put, where) in enumerate(steps, start=1):
        with torch.no_grad():
            # the in-place step as forge's: some elements of each parameter only (weights.moved)
            moves, want = _moved(reference, inputs, weights, variants, seed * 1000 + step, partial=step == 2)
            if not moves:
                break
            put(candidate, moves)
            _check(want, candidate(*inputs), declared, where)
    _beside_another(task, device, weights, variants, reference, candidate, inputs, declared, seed)
    _through_the_op(task, device, inputs, declared)
    return True


def _moved(reference, inputs, weights, variants, seed, partial=False):
    """The reference's trainable parameters moved by ``seed`` (weights.move_parameters): the moves and its
    output with them; or, as forge does, where they break it (it raises, or its output is less finite),
    none: its parameters put back, and no kernel held to them."""
    before = reference(*inputs)
    kept = {{k: v.clone() for k, v in reference.state_dict().items()}}
    moves = weights.move_parameters(reference, seed=seed, partial=partial)
    try:
        want = reference(*inputs)
    except Exception:
        want = None
    if not moves or want is None or variants.nonfinite(want) > variants.nonfinite(before):
        reference.load_state_dict(kept)
        return [], None
    return moves, want


def _through_the_op(task, device, inputs, declared):
    """The op as a user calls it ({name}(*inputs), its model built under seed 0), where the shape checked
    is the one it is built for: a kernel right wherever forge and selftest build it, yet wrong there."""
    if repr(task.get_init_inputs()) != repr(_task.get_init_inputs()):
        return  # SMALL shapes of a model whose constructor takes its sizes: the op's model is of others
    if not all(isinstance(x, torch.Tensor) for x in inputs):
        return  # the op takes a list of tensors
    with torch.random.fork_rng(devices=[]), torch.no_grad():
        torch.manual_seed(0)
        want = task.Model(*task.get_init_inputs()).to(device)(*inputs)
        _check(want, {name}(*inputs), declared, "through the op, as {name}(*inputs) is called")


def _beside_another(task, device, weights, variants, reference, candidate, inputs, declared, seed):
    """A second model of each, built beside the first with weights of its own (a checkpoint's), then the
    first again: a network holds many modules of one kind, and a kernel that keeps state shared by every
    instance (a registry of the modules built, a cache of weights keyed by their sizes) computes one
    module's output with another's weights."""
    init = task.get_init_inputs()
    torch.manual_seed(seed + 2)
    reference2 = task.Model(*init).to(device)
    torch.manual_seed(seed + 2)
    candidate2 = ModelNew(*init).to(device)
    with torch.no_grad():
        moves, _ = _moved(reference2, inputs, weights, variants, seed * 1000 + 4)
        if moves:  # else both keep the weights they were built with
            weights.load_moved(candidate2, moves, checkpoint=reference2.state_dict())
        _check(reference2(*inputs), candidate2(*inputs), declared, "a second model built beside the first")
        _check(reference(*inputs), candidate(*inputs), declared, "the first model, once a second was built beside it")


def _interpreted():
    # Triton kernels interpreted on the CPU (TRITON_INTERPRET=1): forge runs their launches one at a time.
    return _USES_TRITON and os.environ.get("TRITON_INTERPRET") == "1"


def _verify_shape(task, device, trials, variants, seed, under_autograd):
    """One shape's trials (variants.trial_plan) on fresh models built under ``seed``; returns them
    (reference, candidate)."""
    init = task.get_init_inputs()
    torch.manual_seed(seed)
    reference = task.Model(*init).to(device)
    torch.manual_seed(seed)
    candidate = ModelNew(*init).to(device)
    declared = getattr(task, "TOLERANCE", {{}}) or {{}}
    standard_nonfinite = 0
    for trial, variant in enumerate(variants.trial_plan(trials, with_variants=True, under_autograd=under_autograd)):
        torch.manual_seed(seed + trial + 1)
        inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in task.get_inputs()]
        if not variants.applies(inputs, variant):
            continue
        if variants.evaluation_mode_unmatchable(variant, reference):
            continue
        inputs = variants.apply_layout(variants.transform_values(inputs, variant, seed + trial + 1), variant)
        # on NaN inputs (variants.ADVISORY) a kernel that differs from PyTorch is warned of, as by forge
        check = _advise if variants.inputs_of(variant) in variants.ADVISORY else _check
        with variants.model_state(variant, reference, candidate):  # eval mode, frozen weights: both alike
            with torch.no_grad():
                try:
                    want = reference(*inputs)
                except Exception:
                    if variant == variants.STANDARD:
                        raise
                    continue  # the reference does not accept this variant: nor is the kernel held to it
                if variant == variants.STANDARD:
                    standard_nonfinite = max(standard_nonfinite, variants.nonfinite(want))
                if not variants.acceptable(want, variant, standard_nonfinite):
                    continue
                # as forge's reference runner: a variant whose output moves under rounding (attention x 100) holds
                # no kernel to it where it moves much, and widens its bounds by that (a broadcast trial's, kept)
                spread = None
                if variants.inputs_of(variant) != variants.STANDARD:
                    spread = variants.rounding_spread(lambda x: reference(*x), inputs, want, variant)
                    if spread is not None and variants.unstable(spread, want, variant) is not None:
                        continue
            called = variants.as_called(inputs, variant)
            if variant == variants.ALONGSIDE and _interpreted():
                continue  # Triton's interpreter runs one kernel at a time: two threads' launches break it
            if variant in variants.ENVELOPED:  # many calls: their least and greatest value of each element
                envelope = variants.Envelope()
                if variant == variants.ALONGSIDE:  # while another thread calls it on other inputs
                    torch.manual_seed(seed + trial + 1001)
                    others = [x.to(device) if isinstance(x, torch.Tensor) else x for x in task.get_inputs()]
                    variants.calls_alongside(lambda: variants.call_under(variant, lambda: candidate(*called)),
                                             lambda: candidate(*others), envelope.add)
                else:  # once at each of several thread counts
                    variants.calls_at_thread_counts(lambda: candidate(*called), envelope.add)
                bounds = envelope.bounds()
                assert bounds is not None, f"outputs of different types or shapes ({{variants.describe(variant)}})"
                for bound, name in zip(bounds, ("least", "greatest")):
                    _check(want, bound, declared, f"{{variants.describe(variant)}}: each element's {{name}} value", spread)
            else:
                got = variants.call_under(variant, lambda: candidate(*called), inputs=called)
                check(want, got.detach() if isinstance(got, torch.Tensor) else got, declared, variants.describe(variant),
                      spread)
            with variants.fresh_memory_filled():  # an element the kernel never writes shows as NaN
                got = variants.call_under(variant, lambda: candidate(*called), inputs=called)
            where = variants.describe(variant) + ", with fresh memory filled"
            check(want, got.detach() if isinstance(got, torch.Tensor) else got, declared, where, spread)
    return reference, candidate


def _advise(want, got, declared, where, spread=None):
    try:
        _check(want, got, declared, where, spread)
    except AssertionError as exc:
        warnings.warn(f"its output differs from PyTorch's where the inputs hold NaN: {{exc}}", stacklevel=2)


def _check(want, got, declared, where, spread=None):
    assert type(got) is torch.Tensor and got.shape == want.shape and got.dtype == want.dtype, f"shape/dtype ({{where}})"
    tol = _TOLERANCE.get(want.dtype, 0.0)
    finite = torch.isfinite(want.double())
    assert torch.equal(finite, torch.isfinite(got.double())), f"non-finite values ({{where}})"
    # and the same ones: NaN where PyTorch's is NaN, infinities of its sign (as forge's comparison holds them)
    w, g = want.double()[~finite], got.double()[~finite]
    assert torch.equal(w.isnan(), g.isnan()) and torch.equal(w[~w.isnan()], g[~w.isnan()]), (
        f"non-finite values of another kind or sign ({{where}})"
    )
    want_f, got_f = want.double()[finite], got.double()[finite]
    atol = declared.get("atol", tol) * max(1.0, float(want_f.pow(2).mean().sqrt()) if want_f.numel() else 1.0)
    rtol = declared.get("rtol", tol)
    allowance = torch.zeros_like(want_f)
    if spread is not None and spread.shape == want.shape:
        allowance = spread.to(want_f.device).double()[finite] * _SPREAD_MARGIN
    bound = want_f.abs() * rtol + atol + allowance
    assert bool(((got_f - want_f).abs() <= bound).all()), f"values ({{where}})"
    norm = want_f.norm().clamp_min(1e-30)
    err = float((got_f - want_f).norm() / norm)
    limit = max(declared.get("rel_norm", tol), float(allowance.norm() / norm))
    assert err <= limit, f"relative error norm {{err:.3g}} ({{where}})"
'''
