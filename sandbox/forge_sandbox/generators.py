"""The process's global random generators: PyTorch's, Python's ``random`` and numpy's legacy one.

A kernel module may draw from them (a dropout mask, a random start), which moves their state; it must
never seed or set them, which makes every later draw of the importing process repeat (a review,
2026-11-29: ``torch.manual_seed`` in a forward; 2026-12-01: torch's seeded at import, Python's and
numpy's in every forward, so a user's augmentation and shuffling repeated after each call). So the
candidate's runner seeds each afresh with a seed it draws (:func:`seed_all`) before the import and before
every verification call, and afterwards asks whether the state can still be reached from that seed by
draws alone (:func:`reseeded`). PyTorch's generators keep the seed they were given (``initial_seed``);
the Mersenne Twisters of Python and numpy keep no seed, so their state is followed forward from the
seeded one, a generation of 624 words at a time.
"""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass

import torch

# Generations of the Mersenne Twister followed forward (624 words each, some 160,000 draws in all): a
# call that draws more than that from Python's or numpy's global generator is taken for one that set it.
GENERATIONS = 256
_WORDS = 624


@dataclass(frozen=True)
class Seeded:
    """What :func:`seed_all` seeded: its seed, and whether numpy was loaded to be seeded."""

    seed: int
    numpy: bool


def seed_all(seed: int) -> Seeded:
    """Seed every global generator there is: torch's (every device's), Python's, and numpy's where
    numpy is loaded."""
    torch.manual_seed(seed)
    random.seed(seed)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(seed % 2**32)
    return Seeded(seed, numpy is not None)


def reseeded(seeded: Seeded, device: torch.device) -> list[str]:
    """The global generators that were seeded or set since :func:`seed_all` (``seeded``), not drawn from."""
    found, seed = [], seeded.seed
    if torch.initial_seed() != seed or device.type == "cuda" and torch.cuda.initial_seed() != seed:
        found.append("torch's")
    if not _python_reachable(seed):
        found.append("Python's random")
    numpy = sys.modules.get("numpy")
    if seeded.numpy and numpy is not None and not _numpy_reachable(numpy, seed % 2**32):
        found.append("numpy's")
    return found


def _reachable(start: tuple[tuple, int], end: tuple[tuple, int], advance) -> bool:
    """Whether the twister's ``end`` (key, position) follows ``start`` by draws alone; ``advance(n)``
    draws n words from a copy that starts at ``start`` and returns its (key, position) after them."""
    key, position = start
    for _ in range(GENERATIONS):
        if key == end[0]:
            return end[1] >= position
        key, position = advance(_WORDS - position + 1)  # to the end of this generation, and one into the next
    return False


def _python_reachable(seed: int) -> bool:
    copy = random.Random(seed)

    def advance(words: int) -> tuple[tuple, int]:
        copy.getrandbits(32 * words)
        return _python_state(copy)

    return _reachable(_python_state(copy), _python_state(random), advance)


def _python_state(generator) -> tuple[tuple, int]:
    internal = generator.getstate()[1]
    return internal[:_WORDS], internal[_WORDS]


def _numpy_reachable(numpy, seed: int) -> bool:
    try:
        now = numpy.random.get_state(legacy=True)
    except (TypeError, ValueError, AttributeError):
        return False  # no longer a Mersenne Twister: set to another generator
    if now[0] != "MT19937":
        return False
    start = numpy.random.RandomState(seed).get_state(legacy=True)
    copy = numpy.random.MT19937()
    copy.state = {"bit_generator": "MT19937", "state": {"key": start[1], "pos": start[2]}}

    def advance(words: int) -> tuple[tuple, int]:
        copy.random_raw(words)
        state = copy.state["state"]
        return tuple(state["key"].tolist()), int(state["pos"])

    return _reachable((tuple(start[1].tolist()), int(start[2])), (tuple(now[1].tolist()), int(now[2])), advance)
