"""The candidate runner: imports untrusted code and runs ``ModelNew`` on the host's command.

Everything it reports is the candidate's claim: the host checks outputs against
the reference's, bounds the times with its own clock and stops this process
while the reference is timed. The evidence gathered here (inputs unchanged,
threads, launches of its own kernels, the operators PyTorch ran, timing
primitives untouched) is a speed bump the static check backs up, never the
verdict on its own.
"""

from __future__ import annotations

import itertools
import os
import secrets
import threading
import time

import torch

from forge_sandbox import (
    census,
    compare,
    file_writes,
    generators,
    isolation,
    op_census,
    own_code,
    process_settings,
    protocol,
    static_check,
    taskfile,
    timing,
    variants,
    weights,
)
from forge_sandbox.runner import ModelHarness, cpu, profile_kernels, to_device

_perf_counter = time.perf_counter  # bound before the candidate is imported


def import_candidate(path: str, module_name: str | None = None):
    """Import the candidate (this is where load_inline compiles) with the census hooks in place, as the
    module ``module_name`` (taskfile.kernel_module_name: an exported module's kernel's name).

    The profiled run (profile_target.py) imports it the same way, so that the same compile flags
    hit the same build cache. Returns the module and the launch counter."""
    with open(path) as f:
        source = f.read()
    counter = census.install(static_check.check_source(source).backends)
    module = taskfile.load_module(path, "candidate", source=source, name=module_name)
    if not callable(getattr(module, "ModelNew", None)):
        raise LookupError("the candidate defines no ModelNew class")
    return module, counter


def build_model(module, init_inputs: list, init_seed: int, device: torch.device) -> tuple[object, list[str]]:
    """``ModelNew`` from the reference's constructor arguments, its parameters drawn from ``init_seed``;
    and the global generators its construction seeded or set rather than drew from (review 47: a
    ``torch.manual_seed`` at the end of ``__init__``, after its weights were drawn, made every later draw
    of a user's process repeat from the model's construction on)."""
    seeded = generators.seed_all(init_seed)
    model = module.ModelNew(*to_device(init_inputs, device))
    reseeded = generators.reseeded(seeded, device)
    return (model.to(device) if isinstance(model, torch.nn.Module) else model), reseeded


class CandidateRunner:
    def __init__(self, workdir: str, device: str, files: str) -> None:
        self.workdir = workdir
        self.device = torch.device(device)
        self.harness = ModelHarness(self.device)
        self.files = files  # what isolation.settle achieved, for the host's probe
        self.module = None
        self.settings: dict[str, str] = {}  # the process-wide settings before the candidate was imported
        self.bindings: dict = {}  # the installed libraries' functions and classes then (process_settings.bindings)
        self.reseeded_at_import: list[str] = []  # the global generators its import seeded or set (generators)
        self.reseeded_when_built: list[str] = []  # ... and ModelNew's construction, in any configuration
        self.file_watch: file_writes.FileWatch | None = None  # its changes to files beyond its caches
        self.own_code: list = []  # forge's own functions, classes and modules then (own_code)
        self.counter = census.LaunchCounter()
        self.payload = b""  # raw bytes to send after the next reply
        self.channel = None  # runner.Channel, set by serve: the steps inside a timed block
        self.held: list = []  # the configuration's verification outputs, as returned, for cmd_recheck
        self.held_bytes = 0
        self.hold_bytes = 0  # the most the host has them held (evaluate.HeldOutputs)
        self.clean = True  # no trial so far showed what rejects it anyway (_later_calls)
        self.per_call_s = 0.0  # the slowest group's time per verification call
        # The task's own inputs of the configurations set up before, while their init inputs were the same
        # as now (same_init): what an ALONGSIDE trial's other thread calls the model on besides this
        # configuration's, so that two calls of other shapes run at once (_companion_inputs).
        self.earlier_shapes: list[list] = []
        self.init_inputs: list | None = None
        self.shape_kept = False
        self.second_model = None  # a second ModelNew built beside the first (cmd_another), kept while it lives

    def cmd_hello(self, msg: dict) -> dict:
        """Before any candidate code: how its files are restricted, and whether CUDA works here."""
        cuda = self._cuda_works() if self.device.type == "cuda" else None
        return {"files": self.files, "cuda": cuda, "pid": os.getpid()}

    @staticmethod
    def _cuda_works() -> bool | str:
        """True, or why not: the error, for the verdict's warning (isolation's first GPU runs needed it)."""
        try:
            torch.zeros(1, device="cuda").add_(1)
            torch.cuda.synchronize()
            return True
        except Exception as exc:  # noqa: BLE001 - any failure is the answer
            return f"{type(exc).__name__}: {exc}"[:500]

    def cmd_load(self, msg: dict) -> dict:
        self.settings = process_settings.snapshot()
        # The objects the timed calls go through, by identity and class: forge's, not stand-ins of the
        # candidate's (own_code.snapshot's pinned).
        instances, pinned = [self, self.harness], [(self, ("harness", "channel"))]
        if self.channel is not None:
            instances += [self.channel, self.channel.reader]
            pinned += [(self.channel, ("reader", "reply_fd"))]
        self.own_code = own_code.snapshot(instances=tuple(instances), pinned=tuple(pinned))
        # Triton's interpreter (the CPU's) rebinds triton.language's functions for good as it runs a kernel
        self.bindings = process_settings.bindings(skip=("triton",) if self.device.type == "cpu" else ())
        if self.file_watch is None:  # an audit hook stays for the process's life: one
            self.file_watch = file_writes.FileWatch([os.environ.get(name, "") for name in isolation.CACHE_VARIABLES])
            self.file_watch.install()
        seed = self._fresh_seed()
        self.module, self.counter = import_candidate(msg["candidate"], msg.get("module"))
        self.reseeded_at_import = self._reseeded(seed)
        return self._evidence()

    def cmd_setup(self, msg: dict) -> dict:
        """``ModelNew`` for one configuration, and its timing inputs; its verification outputs are held
        up to ``hold_bytes`` (cmd_forward)."""
        self.held, self.held_bytes, self.hold_bytes = [], 0, int(msg.get("hold_bytes", 0))  # the last's freed first
        self.clean, self.per_call_s = True, 0.0
        init_inputs = protocol.load_tensors(msg["init_inputs"])
        if self.init_inputs is not None and not _same_init(self.init_inputs, init_inputs):
            self.earlier_shapes = []  # a model of other sizes: not its inputs
        self.init_inputs, self.shape_kept = init_inputs, False
        self.harness.load_pool(protocol.load_tensors(msg["pool_inputs"]))
        self.second_model = None  # the last configuration's (cmd_another), let go before this one's is built
        self.harness.model, reseeded = build_model(self.module, init_inputs, msg["init_seed"], self.device)
        self._built_reseeding(reseeded)
        return {}

    def cmd_forward(self, msg: dict) -> dict:
        """One group of verification trials (those of ``verify_inputs`` the reference ``kept``, of
        ``variants``), each called as a user calls it and then once more under the operator census (a
        dispatch mode, which a kernel can see): the outputs (on the pipe, the plain calls', the censused
        ones' and then the envelope of each ENVELOPED trial's plain calls, least and greatest) and what was
        seen meanwhile; with ``split``, the time of the candidate's own launches in one call (_split)."""
        h = self.harness
        group = protocol.load_tensors(msg["verify_inputs"])
        h.load_trials([group[k] for k in msg["kept"]], msg["variants"], msg.get("staged"))
        # Every output is held as returned until all of the group's trials have run, as a caller keeps a
        # result while it makes the next: a kernel that writes each call's result into one buffer of its
        # own shows the last trial's result for all of them. The configuration's outputs stay held after
        # that, as many as ``hold_bytes`` allows, for cmd_recheck.
        outputs, trials, ops, elements = [], [], {}, {}
        censused, censused_trials, bounds = [], [], []
        started = _perf_counter()
        for i, (inputs, variant) in enumerate(zip(h.trials, h.variants)):
            partners = [h.trials[k] for k in variants.alongside_partners(h.variants, i)]
            (out, trial, envelope), (again, censused_trial, record) = self._trial_twice(inputs, variant, partners)
            outputs.append(out)
            trials.append(trial)
            censused.append(again)
            censused_trials.append(censused_trial)
            ops[str(i)], elements[str(i)] = dict(record.counts), dict(record.elements)
            if variant in variants.ENVELOPED:
                bounds.extend(envelope)
        calls = len(censused_trials) + sum(t.get("alongside", {}).get("calls", len(t.get("thread_counts", [0])))
                                           for t in trials)  # fmt: skip
        self.per_call_s = max(self.per_call_s, (_perf_counter() - started) / max(calls, 1))
        self.clean = self.clean and not any(t["threads_started"] or t["inputs_changed"] or t["launches"] == 0
                                            for t in trials + censused_trials)  # fmt: skip
        for i, (trial, out) in enumerate(zip(trials, outputs)):
            others = outputs[:i] + outputs[i + 1 :] + self.held
            if out is not None:
                trial["reused_storage"] = any(type(o) is torch.Tensor and _same_storage(o, out) for o in others)
        self.payload = protocol.tensors_to_bytes(
            [None if o is None else cpu(o).detach().clone() for o in outputs + censused + bounds]
        )
        for out in outputs:  # the host follows the same rule (evaluate.HeldOutputs)
            size = out.numel() * out.element_size() if out is not None else 0
            if out is not None and self.held_bytes + size <= self.hold_bytes:
                self.held.append(out.detach())  # its memory, not an autograd graph kept alive with it
                self.held_bytes += size
        self._keep_shape(h.trials)
        split = self._split() if msg.get("split") else None
        return {"trials": trials, "censused_trials": censused_trials, "ops": ops, "elements": elements,
                "split": split, **self._evidence()}  # fmt: skip

    def cmd_later(self, msg: dict) -> dict:
        """More calls while the configuration's outputs are held (_later_calls), each on fresh copies of a
        timing input, its result let go at once: a kernel that cycles through a ring of buffers of its own
        writes a later result into a held output once the ring is shorter than the calls made since. How
        many are held (the host knows) and, per held output, whether another held one or a later result
        shares its memory; the values follow in cmd_recheck."""
        h = self.harness
        shared = [
            any(_same_storage(o, out) for o in self.held[:i] + self.held[i + 1 :]) for i, out in enumerate(self.held)
        ]
        calls = _later_calls(self.held, self.clean, self.per_call_s, h, deep=msg.get("deep") is True)
        for k in range(calls):
            inputs = [x.clone() if isinstance(x, torch.Tensor) else x for x in h.pool[k % len(h.pool)]]
            out = h.forward(h.model, inputs, census=False)[0]
            if type(out) is torch.Tensor:
                shared = [seen or _same_storage(out, held) for seen, held in zip(shared, self.held)]
            del out, inputs
        return {"held": len(self.held), "reused": shared, "calls": calls, **self._evidence()}

    def cmd_recheck(self, msg: dict) -> dict:
        """The configuration's held outputs at the host's ``positions`` (flat indices, one list per output
        in the order they were held), after cmd_later; then they are let go."""
        values = [_at(out, where) for out, where in zip(self.held, msg["positions"])]
        self.held, self.held_bytes = [], 0
        self.payload = protocol.tensors_to_bytes(values)
        return self._evidence()

    def _trial_twice(self, inputs: list, variant: str = variants.STANDARD, partners: list | None = None) -> tuple:
        """A verification trial's two calls: as a user makes it, then under the operator census (a
        dispatch mode, which a kernel can see): ((output, trial, bounds), (output, trial, census)); the
        bounds of an ENVELOPED trial's plain calls (_trial), else None."""
        out, trial, _, bounds = self._trial(inputs, variant, census=False, partners=partners)
        return (out, trial, bounds), self._trial(inputs, variant, census=True)[:3]

    def _trial(self, inputs: list, variant: str = variants.STANDARD, census: bool = True,
               partners: list | None = None) -> tuple:  # fmt: skip
        """One verification call, made as ``variant`` says (the model in its state, variants.model_state;
        variants.call_under; an ALONGSIDE trial's plain
        call again and again, on each of ``partners`` (variants.alongside_partners: its own inputs first)
        in turn, while another thread calls the model, variants.calls_alongside; an OTHER_THREADS trial's
        once at each thread count, variants.calls_at_thread_counts): its output (None unless a plain tensor;
        an ENVELOPED trial's first on its own inputs), what was seen meanwhile, its operator census (with
        ``census``, else None) and, of an ENVELOPED trial, the least and greatest value of each element
        over its calls (variants.Envelope), per partner of an ALONGSIDE trial, a flat list (None for
        outputs not all plain tensors of one shape and dtype); else None."""
        with variants.model_state(variant, self.harness.model):
            return self._trial_made(inputs, variant, census, partners)

    def _trial_made(self, inputs: list, variant: str, census: bool, partners: list | None) -> tuple:
        before = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
        seed = self._fresh_seed()
        threads = threading.active_count()
        launches = self.counter.count
        grad, called = variants.grad_enabled(variant), variants.as_called(inputs, variant)
        forward = self.harness.forward
        bounds, alongside = None, {}
        if variant == variants.ALONGSIDE and not census:
            mains = [inputs] + [p for p in partners or [] if p is not inputs]
            others, envelopes = self._companion_inputs(inputs), [variants.Envelope() for _ in mains]
            turns = {"main": 0, "companion": 0}

            def main() -> tuple:
                at = turns["main"] % len(mains)
                turns["main"] += 1
                return at, forward(self.harness.model, called if at == 0 else mains[at], census=False)[0]

            def companion() -> None:
                # every other call on the inputs the main thread is on (both calls on one path of the
                # kernel's at once: a layout's own), the others in turn between
                k = turns["companion"]
                turns["companion"] += 1
                chosen = mains[(turns["main"] - 1) % len(mains)] if k % 2 == 0 else others[k // 2 % len(others)]
                forward(self.harness.model, [x.clone() if isinstance(x, torch.Tensor) else x for x in chosen],
                        census=False)  # fmt: skip

            calls, companion_calls = variants.calls_alongside(
                main, companion, lambda made: envelopes[made[0]].add(made[1]), least=len(mains)
            )
            out, record = envelopes[0].first, None
            bounds = [b for e in envelopes for b in e.bounds() or (None, None)]
            alongside = {"alongside": {"calls": calls, "companion_calls": companion_calls}}
            del envelopes
        elif variant == variants.OTHER_THREADS and not census:
            envelope = variants.Envelope()
            counts = variants.calls_at_thread_counts(lambda: forward(self.harness.model, called, census=False,
                                                                     grad=grad)[0], envelope.add)  # fmt: skip
            out, record, bounds = envelope.first, None, list(envelope.bounds() or (None, None))
            alongside = {"thread_counts": counts}
            del envelope
        else:
            out, record = variants.call_under(
                variant, lambda: forward(self.harness.model, called, census=census, grad=grad), inputs=called
            )
        trial = {
            "threads_started": threading.active_count() - threads,
            "launches": self.counter.count - launches,
            "reseeded": self._reseeded(seed),
            "output_type": f"{type(out).__module__}.{type(out).__qualname__}",
            "exact_tensor": type(out) is torch.Tensor,
            "inputs_changed": [
                k
                for k, (a, b) in enumerate(zip(before, inputs))
                if isinstance(a, torch.Tensor) and not compare.bitwise_equal(a, b)
            ],
            **alongside,
        }
        if type(out) is not torch.Tensor:
            return None, trial, record, bounds
        trial["storage_ok"] = out.untyped_storage().nbytes() >= out.numel() * out.element_size()
        trial["requires_grad"] = out.requires_grad
        return out, trial, record, bounds

    def _built_reseeding(self, reseeded: list[str]) -> None:
        self.reseeded_when_built += [name for name in reseeded if name not in self.reseeded_when_built]

    def _fresh_seed(self) -> generators.Seeded:
        """Seeds the process's global random number generators afresh (generators.seed_all), with a seed
        drawn here, before a trial's call or the import: one that sets them to a state of its own
        (torch.manual_seed, random.seed, a saved state put back) then leaves a state behind that the seed
        does not lead to (_reseeded), whatever state it chose."""
        return generators.seed_all(secrets.randbits(63))

    def _reseeded(self, seed: generators.Seeded) -> list[str]:
        """The global generators that the call (or import) since _fresh_seed(``seed``) seeded or set, rather
        than drew from: every dropout mask, torch.randn and random.random of a user's process that imports
        it would repeat from call to call (a review, 2026-11-29: a GELU that called torch.manual_seed in its
        forward passed; 2026-12-01: one that seeded Python's and numpy's)."""
        return generators.reseeded(seed, self.device)

    def _companion_inputs(self, inputs: list) -> list[list]:
        """What the other thread of an ALONGSIDE trial calls the model on in turn, between its calls on the
        inputs the main thread is on (_trial): the group's other trials
        (other layouts and values, the same shapes) and, every other call, the task's own inputs of
        earlier configurations (other shapes: a plan cached on the module for the last shape seen, used by
        a call of another shape that was planned meanwhile, passed with the other thread on this shape
        alone, a review, 2026-11-28); without other trials, a timing input of the configuration, or the
        trial's values moved one element along. (Not the timing inputs besides: at the task's full size
        they made an interpreted kernel's trial several times longer.)"""
        chosen = [t for t in self.harness.trials if t is not inputs] or self.harness.pool[:1]
        if not chosen:
            chosen = [[x.reshape(-1).roll(1).view(x.shape) if isinstance(x, torch.Tensor) and x.numel() > 1 else x
                       for x in inputs]]  # fmt: skip
        if self.earlier_shapes:
            chosen = [s for pair in zip(chosen, itertools.cycle(self.earlier_shapes)) for s in pair]
        return chosen

    def _keep_shape(self, trials: list) -> None:
        """The configuration's first trial (the task's own inputs), kept for later configurations'
        ALONGSIDE trials (earlier_shapes): the last EARLIER_SHAPES of them, as many of the latest as hold
        EARLIER_BYTES at most."""
        if self.shape_kept or not trials:
            return
        self.shape_kept = True
        if _bytes_of(trials[0]) > EARLIER_BYTES:
            return
        kept = self.earlier_shapes + [[x.clone() if isinstance(x, torch.Tensor) else x for x in trials[0]]]
        kept = kept[-EARLIER_SHAPES:]
        while kept and sum(_bytes_of(s) for s in kept) > EARLIER_BYTES:
            kept.pop(0)
        self.earlier_shapes = kept

    def cmd_reload(self, msg: dict) -> dict:
        """The reference's moved parameters put into ModelNew (weights.py), through its load_state_dict
        or (``how: in_place``) written into its parameters as a training step does, or (``how: assign``)
        loaded as new tensors in place of the old (``load_state_dict(assign=True)``); then one trial again."""
        by_order: list = []
        if msg.get("how") == "in_place":
            unmatched = weights.change_in_place(self.harness.model, msg["moves"], by_order)
        else:
            checkpoint = protocol.load_tensors(msg["checkpoint"]) if msg.get("checkpoint") else None
            unmatched = weights.load_moved(self.harness.model, msg["moves"], by_order, checkpoint,
                                           assign=msg.get("how") == "assign")  # fmt: skip
        # (a kernel that refreshed a copy of its weights only under a dispatch mode, such as forge's
        # census, computed with the old ones in the plain call)
        (out, trial, _), (again, censused_trial, record) = self._trial_twice(self.harness.first_trial)
        self.payload = protocol.tensors_to_bytes([None if o is None else cpu(o).clone() for o in (out, again)])
        return {"trial": trial, "censused_trial": censused_trial, "ops": dict(record.counts),
                "elements": dict(record.elements), "unmatched": unmatched, "by_order": by_order,
                **self._evidence()}  # fmt: skip

    def cmd_another(self, msg: dict) -> dict:
        """A second ModelNew built beside the first under ``init_seed``, the reference's moved parameters
        loaded into it (weights.load_moved, from the second reference's ``checkpoint``), and the
        configuration's first trial run on it, then on the first model again, each as a user calls it
        and then under the census: the four outputs on the pipe, in that order. The second model is
        kept, as a network keeps its layers, until the next configuration."""
        by_order: list = []
        second, reseeded = build_model(self.module, self.init_inputs, msg["init_seed"], self.device)
        self.second_model = second
        self._built_reseeding(reseeded)
        unmatched = []
        if msg.get("moves"):
            checkpoint = protocol.load_tensors(msg["checkpoint"]) if msg.get("checkpoint") else None
            unmatched = weights.load_moved(second, msg["moves"], by_order, checkpoint)
        first, calls = self.harness.model, []
        for model in (second, first):
            self.harness.model = model  # the model _trial calls
            try:
                calls.append(self._trial_twice(self.harness.first_trial))
            finally:
                self.harness.model = first
        outputs = [out for plain, censused in calls for out in (plain[0], censused[0])]
        self.payload = protocol.tensors_to_bytes([None if o is None else cpu(o).clone() for o in outputs])
        return {"trials": [plain[1] for plain, _ in calls], "censused_trials": [censused[1] for _, censused in calls],
                "ops": {str(k): dict(censused[2].counts) for k, (_, censused) in enumerate(calls)},
                "elements": {str(k): dict(censused[2].elements) for k, (_, censused) in enumerate(calls)},
                "unmatched": unmatched, "by_order": by_order, **self._evidence()}  # fmt: skip

    def _split(self) -> dict:
        """The host-clock time of one forward pass (outside the census) and of its own launches in it."""
        launches, own = self.counter.count, self.counter.seconds
        start = _perf_counter()
        self.harness.forward(self.harness.model, self.harness.first_trial, census=False)
        return {"forward_ms": (_perf_counter() - start) * 1e3, "own_ms": (self.counter.seconds - own) * 1e3,
                "launches": self.counter.count - launches}  # fmt: skip

    def cmd_time(self, msg: dict) -> dict:
        threads = threading.active_count()
        self.counter.interpreted_spans.clear()  # the block's own: verification launched many
        reply = self.harness.time_block(self.harness.model, msg, self.channel, hold_outputs=True)
        return {
            **reply,
            "threads_started": threading.active_count() - threads,
            "interpreted_spans": [list(span) for span in self.counter.interpreted_spans],
            # the libraries' registries read after the timed blocks, not their warm-ups too: what a warm-up
            # changes is still changed at the block after it (process_settings.rebound reads some 200,000
            # entries)
            **self._evidence(registries=bool(msg.get("keep_last"))),
        }

    def cmd_share(self, msg: dict) -> dict:
        """Map the memory the host stages the timed inputs in (hosted_calls)."""
        self.harness.share_inputs(msg["layout"])
        return {}

    def cmd_kept(self, msg: dict) -> dict:
        self.payload = self.harness.kept_payload()
        return {}

    def cmd_kernels(self, msg: dict) -> dict:
        """The device kernels one forward pass launches, with their times, from torch.profiler (CUDA)."""
        return {"kernels": profile_kernels(self.harness.model, self.harness.first_trial, self.device)}

    def _evidence(self, registries: bool = True) -> dict:
        """Timing primitives replaced since import, forge's own code rebound since (own_code), graphs
        torch.compile compiled, the process-wide settings changed since import, the installed libraries'
        functions and classes rebound (process_settings) and files changed (file_writes)."""
        bound, live = timing.bound_primitives(), timing.live_primitives()
        patched = [name for name in bound if live[name] is not bound[name]]
        settings = process_settings.changed(self.settings) if self.settings else []
        if self.reseeded_at_import:
            settings.append(f"the global random generators ({', '.join(self.reseeded_at_import)}): seeded or set at "
                            "import, so that every draw of the process that imports it starts over")  # fmt: skip
        if self.reseeded_when_built:
            settings.append(f"the global random generators ({', '.join(self.reseeded_when_built)}): seeded or set "
                            "as ModelNew was built, so that every draw of the process that builds one starts over")  # fmt: skip
        rebound = own_code.changed(self.own_code)[:20] if self.own_code else []
        files = list(self.file_watch.found) if self.file_watch else []
        return {"patched": patched, "compiled_graphs": op_census.compiled_graphs(), "settings_changed": settings,
                "own_code_rebound": rebound, "files_changed": files,
                "library_rebound": process_settings.rebound(self.bindings, registries=registries) if self.bindings
                else []}  # fmt: skip


# Calls made in verification while a configuration's results are held, the trials' included: a ring of
# buffers at least this long stays out of sight. HELD_RESULTS within HELD_SECONDS at the trials' pace for
# every shape; at the base shape ("deep") as many as RING_RESULTS within RING_SECONDS more, where the
# calls are fast enough (a ring of 256 results passed, 2026-11-27, wrong for a caller that keeps more: an
# evaluation loop collecting each batch's output). A deeper ring holds that many outputs' memory.
HELD_RESULTS = 64
HELD_SECONDS = 10.0
RING_RESULTS = 1024
RING_SECONDS = 1.0


def _later_calls(held: list, clean: bool, per_call_s: float, harness, deep: bool = False) -> int:
    """How many more calls to make while the configuration's results are held (see HELD_RESULTS); none
    once a trial has shown what rejects it anyway (``clean`` false: a thread left running, changed
    inputs, no launch of its own)."""
    if not held or not harness.pool or not clean:
        return 0
    pace = max(per_call_s, 1e-6)
    calls = min(HELD_RESULTS - len(held), int(HELD_SECONDS / pace))
    if deep:
        calls = max(calls, min(RING_RESULTS - len(held), int(RING_SECONDS / pace)))
    return max(0, calls)


def _at(out: torch.Tensor, where: list) -> torch.Tensor:
    """``out``'s values at the flat (row-major) indices ``where``, on the CPU, without a copy of the
    whole of it (an expanded or transposed output is read where it lies)."""
    index = torch.tensor(where, dtype=torch.long, device=out.device)
    if out.dim() == 0:
        return cpu(out.reshape(1)[index]).clone()
    return cpu(out[torch.unravel_index(index, out.shape)]).clone()


def _same_storage(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether two outputs share memory (an empty output shares nothing)."""
    if a.numel() == 0 or b.numel() == 0:
        return False
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


# Earlier configurations' inputs kept for ALONGSIDE trials' other thread (CandidateRunner._keep_shape).
EARLIER_SHAPES = 3
EARLIER_BYTES = 64 << 20


def _bytes_of(inputs: list) -> int:
    return sum(x.numel() * x.element_size() for x in inputs if isinstance(x, torch.Tensor))


def _same_init(a: list, b: list) -> bool:
    """Whether two configurations' init inputs are the same (so a model of one takes the other's inputs)."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if isinstance(x, torch.Tensor) or isinstance(y, torch.Tensor):
            if not (isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor) and x.shape == y.shape
                    and x.dtype == y.dtype and torch.equal(x, y)):  # fmt: skip
                return False
        else:
            try:
                if type(x) is not type(y) or not bool(x == y):
                    return False
            except Exception:  # noqa: BLE001 - a container of tensors: not known to be the same
                return False
    return True
