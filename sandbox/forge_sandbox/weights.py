"""New weights after construction, as real use brings them: the verification steps that find a
kernel computing with a copy of its weights rather than the module's own parameters.

Real use builds a module, then loads trained weights into it (``load_state_dict``) or trains it
(an optimizer changes the parameters in place). Both models are built under the same seed, so a
candidate that packs its weights into a plain attribute in ``__init__`` is right on every input
forge draws, and wrong on any checkpoint. So once the base shape is verified, the reference runner
moves every floating-point parameter of the reference by a seeded amount (:func:`move_parameters`)
and describes each by a digest of its old value; the candidate's runner puts the moved values into
the entries of ModelNew that are named as the reference's parameters, or else into one entry each
that holds the old value (as it is, reshaped, or transposed: a layout chosen at construction), as a
checkpoint converted for it would be: once through the module's own ``load_state_dict``
(:func:`load_moved`), and once more, with other moves, in place (:func:`change_in_place`), past any
load hook. Both sides compute the same moved values from the same old ones (on the CPU, in float64),
and run a trial again; the host compares the outputs as any other trial's. A second copy, made at
construction or repacked on load, is not written: a kernel that reads it is caught.

Only trainable parameters move: buffers and frozen parameters are often constants of the
architecture (a causal mask) that a kernel may rightly build in.
"""

from __future__ import annotations

import hashlib
from collections import Counter

import torch

# How far a parameter moves, in units of its own spread (or, where every value is positive, as a
# factor of about exp(MOVE): it stays positive): well past any tolerance, yet weights of the same kind.
MOVE = 0.25


def digest(t: torch.Tensor) -> str:
    """The value of a tensor, whatever its shape: its dtype and its elements in row-major order."""
    data = t.detach().cpu().contiguous().reshape(-1)
    h = hashlib.blake2b(str(data.dtype).encode(), digest_size=20)
    if data.numel():
        h.update(data.view(torch.uint8).numpy().data)
    return h.hexdigest()


# A partial move (``move["partial"]``, the in-place step's) changes one element in PARTIAL_SHARE of each
# parameter, drawn from its seed (one at least), and leaves the rest as they were: as a sparse or partial
# update does (an embedding's rows, a fine-tune of some rows). A kernel that repacks its weights only when a
# few elements it watches change keeps a stale copy through it; every element moved, it never does (a
# review, 2026-12-02).
PARTIAL_SHARE = 16


def moved(old: torch.Tensor, move: dict) -> torch.Tensor:
    """``old`` (on the CPU, in the move's shape) moved by seeded normal noise, in float64, then rounded back;
    where the move is partial, at its drawn elements only."""
    generator = torch.Generator(device="cpu").manual_seed(int(move["seed"]) % 2**63)
    noise = torch.randn(tuple(old.shape), generator=generator, dtype=torch.float64, device="cpu")
    if move.get("partial") and noise.numel():
        kept = torch.randint(0, PARTIAL_SHARE, tuple(old.shape), generator=generator) != 0
        kept.view(-1)[int(torch.randint(0, kept.numel(), (1,), generator=generator))] = False
        noise[kept] = 0.0
    if move["positive"]:
        return (old.double() * torch.exp(MOVE * noise)).to(old.dtype)
    return (old.double() + float(move["scale"]) * noise).to(old.dtype)


def _scale(values: torch.Tensor) -> float:
    spread = float(values.std()) if values.numel() > 1 else 0.0
    if not spread > 0:
        spread = abs(float(values.mean())) or 1.0  # a constant (a bias's zeros)
    return MOVE * spread


def _plain(t) -> bool:
    """A floating-point tensor with elements to read (not on the meta device, which has none)."""
    return (isinstance(t, torch.Tensor) and t.layout == torch.strided and t.is_floating_point()
            and t.device.type != "meta")  # fmt: skip


def movable(p) -> bool:
    """Whether :func:`move_parameters` moves this parameter: not one frozen as a constant of the
    architecture (``requires_grad=False``, a mask say), which no training changes."""
    return _plain(p) and p.numel() > 0 and p.requires_grad


def move_parameters(model: torch.nn.Module, seed: int, partial: bool = False) -> list[dict]:
    """Move every trainable floating-point parameter of ``model`` in place, each by a seed of its own
    (two that start equal, a pair of LayerNorms' ones, end apart, as trained ones would: a kernel
    that merged them is caught); one description per parameter: its old value's digest, dtype,
    shape, how it moves, its seed and its names (a parameter under several names, tied weights,
    moves once, under all); ``partial``: some of its elements only (moved)."""
    moves: list[dict] = []
    seen: dict[int, dict] = {}
    with torch.no_grad():
        for name, p in model.named_parameters(remove_duplicate=False):
            if not movable(p):
                continue
            if id(p) in seen:
                seen[id(p)]["names"].append(name)
                continue
            old = p.detach().cpu()
            values = old.double()
            move = {"digest": digest(old), "dtype": str(old.dtype), "shape": list(old.shape),
                    "positive": bool((values > 0).all()), "scale": _scale(values), "seed": seed + len(moves),
                    "names": [name], "partial": partial}  # fmt: skip
            moves.append(move)
            seen[id(p)] = move
            p.copy_(moved(old, move).to(p.device))
    return moves


# How an entry holds a parameter's old value: ("as is",), ("transposed",), or a block of rows of it,
# ("rows", start, stop, transposed): one part of a fused projection (q, k and v in one weight).
AS_IS, TRANSPOSED, ROWS = "as is", "transposed", "rows"


class _Entries:
    """The candidate's state_dict entries that could hold a moved parameter's old value, each read
    and digested once: as it is, (a matrix) transposed, and, where it is larger, in blocks of rows of
    the parameter's size (of it or of its transpose), as a fused projection holds its parts."""

    def __init__(self, state: dict, moves: list[dict]) -> None:
        sizes = {(m["dtype"], _numel(m["shape"])) for m in moves}
        blocks = {(m["dtype"], tuple(m["shape"])) for m in moves if len(m["shape"]) >= 1 and m["shape"][0] > 0}
        self.forms: dict[str, dict[str, tuple]] = {}
        for key, entry in state.items():
            if not _plain(entry):
                continue
            old = entry.detach().cpu()
            forms: dict[str, tuple] = {}
            if (str(entry.dtype), entry.numel()) in sizes:
                forms[digest(old)] = (AS_IS,)
                if old.dim() == 2:
                    forms.setdefault(digest(old.t()), (TRANSPOSED,))
            for view, transposed in ((old, False), *(((old.t(), True),) if old.dim() == 2 else ())):
                for dtype, shape in blocks:
                    rows = shape[0]
                    if (dtype != str(entry.dtype) or view.dim() != len(shape) or tuple(view.shape[1:]) != shape[1:]
                            or view.shape[0] <= rows or view.shape[0] % rows):  # fmt: skip
                        continue
                    for start in range(0, view.shape[0], rows):
                        forms.setdefault(digest(view[start : start + rows]), (ROWS, start, start + rows, transposed))
            if forms:
                self.forms[key] = forms

    def form(self, key: str, move: dict) -> tuple | None:
        """How entry ``key`` holds the move's old value (AS_IS, TRANSPOSED or ROWS ...), or None."""
        return self.forms.get(key, {}).get(move["digest"])


def _moved_entry(entry: torch.Tensor, move: dict, form: tuple, as_is: bool = False) -> torch.Tensor:
    """The entry with the moved value in its own form (``as_is``: in the reference's form, the entry's
    shape); of a block of rows, the whole entry with that block moved."""
    old = entry.detach().cpu()
    if form[0] == ROWS:
        _, start, stop, transposed = form
        whole = old.t().clone() if transposed else old.clone()
        whole[start:stop] = moved(whole[start:stop].contiguous(), move)
        return whole.t() if transposed else whole
    if form[0] == TRANSPOSED:
        value = moved(old.t().contiguous().reshape(move["shape"]), move)
        return value.reshape(old.shape) if as_is else value.reshape(old.t().shape).t()
    return moved(old.reshape(move["shape"]), move).reshape(old.shape)


def _numel(shape: list) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n


def stored_otherwise(t: torch.Tensor) -> torch.Tensor:
    """``t``'s values in another layout of its memory, as real use brings weights in: a convolution's
    channels-last (``model.to(memory_format=torch.channels_last)``, which every 4-D and 5-D parameter
    follows), a matrix's transposed (a checkpoint saved from a view, a fused weight split), so that a kernel
    that reads a weight's memory as row-major is caught (review 47: every weight step gave contiguous
    weights). Other tensors as they are."""
    if not _plain(t) or t.dim() < 2:
        return t
    if t.dim() in (4, 5):
        return t.contiguous(memory_format=torch.channels_last if t.dim() == 4 else torch.channels_last_3d)
    return t.transpose(-1, -2).contiguous().transpose(-1, -2)


def load_moved(
    model, moves: list[dict], by_order: list | None = None, checkpoint: dict | None = None, assign: bool = False
) -> list[str]:
    """Load the moved values into ``model`` with its own ``load_state_dict``: the reference's own
    ``checkpoint`` as it is, where the module takes it (its keys, or a load hook that converts them:
    a layout of its own, blocked or fused), else the values put into its own state as a checkpoint
    converted for it would be (see :func:`_assign`); the reference's parameter names that no entry
    took. With ``assign``, as ``load_state_dict(..., assign=True)`` (meta-device and memory-mapped
    loading): new tensors take the entries' places, where the others copy into the memory they had,
    so a kernel that kept a view of a weight's old memory reads the old values (a review, 2026-11-27); each
    of them stored in another layout (:func:`stored_otherwise`)."""
    names = [name for move in moves for name in move["names"]]
    if not isinstance(model, torch.nn.Module):
        return names
    if checkpoint is not None:
        # A strict load that fails has loaded the keys it took already: put them back before the other way.
        held = [(t, t.detach().clone()) for t in _tensors(model)]
        try:
            if assign:
                own = model.state_dict()
                checkpoint = {k: stored_otherwise(v.to(device=own[k].device, dtype=own[k].dtype)) if k in own else v
                              for k, v in checkpoint.items()}  # fmt: skip
            model.load_state_dict(checkpoint, strict=True, assign=assign)
            return []
        except Exception:  # noqa: BLE001 - keys it does not take, in whatever way its hooks say so
            with torch.no_grad():
                for t, value in held:
                    t.copy_(value)
            del held
    state = model.state_dict()
    parameters = {name for name, _ in model.named_parameters(remove_duplicate=False)}
    taken, missing = _assign(state, parameters, moves, by_order)
    state.update(
        {key: value.to(device=state[key].device, dtype=state[key].dtype, copy=True) for key, value in taken.items()}
    )
    if assign:
        state = {key: stored_otherwise(value) for key, value in state.items()}
    model.load_state_dict(state, strict=True, assign=assign)
    return missing


def _tensors(model: torch.nn.Module) -> list[torch.Tensor]:
    """Every parameter and buffer of a module, once each."""
    seen: dict[int, torch.Tensor] = {}
    for t in [*model.parameters(), *model.buffers()]:
        seen.setdefault(id(t), t)
    return list(seen.values())


def change_in_place(model, moves: list[dict], by_order: list | None = None) -> list[str]:
    """Write the moved values into ``model``'s own parameters and buffers in place, as a training step
    does, past ``load_state_dict`` and its hooks; the reference's parameter names that no entry took.

    A kernel that reads a copy of its weights made when they were built or loaded (a repacked
    layout in a load hook) keeps computing with that copy: caught. The values are written through
    ``.data``, as optimizers and EMA code long did, which leaves a parameter's version counter as it
    was: a copy kept until the counter moves goes stale too (a fresh review, 2026-11-27)."""
    names = [name for move in moves for name in move["names"]]
    if not isinstance(model, torch.nn.Module):
        return names
    parameters = dict(model.named_parameters(remove_duplicate=False))
    entries = {**dict(model.named_buffers(remove_duplicate=False)), **parameters}
    taken, missing = _assign(entries, set(parameters), moves, by_order)
    with torch.no_grad():
        for key, value in taken.items():
            entries[key].data.copy_(value.to(entries[key].device))
    return missing


def _assign(state: dict, parameters: set, moves: list[dict], by_order: list | None) -> tuple[dict, list[str]]:
    """Which of the candidate's entries (``state``: name -> tensor) take which moved value, in their
    own form; and the reference's parameter names that no entry took.

    An entry named as the reference's parameter takes it when it holds its old value in any form;
    where it also has the parameter's shape, it takes the moved value as it is, as a real checkpoint
    would put it there (a square matrix kept transposed under the reference's name is loaded the
    reference's way, and found). A parameter of another name is found by value, each in one entry
    only (parameters before buffers): a second copy made at construction stays what it was, as it
    would under a real checkpoint. Parameters that started equal (a pair of LayerNorms' ones) and are
    found by value go to such entries in order; each pair is added to ``by_order`` (for the verdict's
    reason, where that order was not the candidate's)."""
    entries = _Entries(state, moves)
    order = sorted(state, key=lambda key: key not in parameters)  # stable: the entries' order within each
    taken: dict[str, torch.Tensor] = {}
    blocks_taken: set[tuple[str, int, bool]] = set()  # (entry, first row, transposed) of the blocks taken
    missing: list[str] = []
    pending = []
    placed: set[int] = set()  # the moves some entry took (a parameter tied under several names needs one)

    def take(key: str, move: dict, form: tuple, as_is: bool = False) -> None:
        placed.add(id(move))
        if form[0] == ROWS:  # one block of an entry: the others stay as they are, or as others moved them
            blocks_taken.add((key, form[1], form[3]))
            taken[key] = _moved_entry(taken.get(key, state[key]), move, form)
        else:
            taken[key] = _moved_entry(state[key], move, form, as_is)

    def free(key: str, form: tuple | None) -> bool:
        if form is None:
            return False
        if form[0] == ROWS:  # a block no other move took, of an entry no move took whole
            return (key, form[1], form[3]) not in blocks_taken and (key not in taken or any(
                b[0] == key for b in blocks_taken))  # fmt: skip
        return key not in taken

    for move in moves:
        for name in move["names"]:
            form = entries.form(name, move) if name in state else None
            if form is None:
                pending.append((name, move))
            else:
                take(name, move, form, as_is=list(state[name].shape) == list(move["shape"]))
    equal_at_first = Counter(move["digest"] for move in moves)
    for name, move in pending:
        key = next((k for k in order if free(k, entries.form(k, move))), None)
        if key is None:
            if id(move) not in placed:
                missing.append(name)
            continue
        take(key, move, entries.form(key, move))
        if equal_at_first[move["digest"]] > 1 and by_order is not None:
            by_order.append([name, key])
    # Entries that are one tensor under two names (tied weights) take the same value under both.
    storage = {_where(state[key]): key for key in taken}
    for key, entry in state.items():
        if key not in taken and _plain(entry) and _where(entry) in storage:
            taken[key] = taken[storage[_where(entry)]]
    return taken, missing


def _where(t: torch.Tensor) -> tuple:
    return (t.device.type, t.untyped_storage().data_ptr(), t.storage_offset(), tuple(t.shape), tuple(t.stride()))
