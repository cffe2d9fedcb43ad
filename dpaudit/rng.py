"""Randomness: one recorded root seed, children spawned per audit, pair and batch.

Every random draw in dpaudit comes from a ``numpy.random.Generator`` built from a child of one
root ``numpy.random.SeedSequence`` (randomness is passed, never global). The same root seed therefore gives the same
numbers, whatever the number of worker processes, provided work is split into batches whose
boundaries depend only on the sample count (never on the worker count).
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from dpaudit.errors import InvalidArgument

__all__ = ["DEFAULT_SEED", "root_sequence", "generator", "spawn", "spawn_generators", "check_seed",
           "check_generator"]

#: The seed used when none is given. It is always recorded in results, so runs replay.
DEFAULT_SEED = 20261122


def check_seed(seed: Any) -> int:
    """A seed is an integer ≥ 0 (``None`` means :data:`DEFAULT_SEED`)."""
    if seed is None:
        return DEFAULT_SEED
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or int(seed) < 0:
        raise InvalidArgument.bad("seed", seed, "an integer >= 0")
    return int(seed)


def root_sequence(seed: Any = None) -> np.random.SeedSequence:
    """The root ``SeedSequence`` of a run, from a recorded integer seed."""
    return np.random.SeedSequence(check_seed(seed))


def generator(seq: np.random.SeedSequence) -> np.random.Generator:
    """A PCG64 generator on ``seq``."""
    return np.random.Generator(np.random.PCG64(seq))


def spawn(seq: np.random.SeedSequence, n: int) -> list[np.random.SeedSequence]:
    """``n`` independent children of ``seq`` (``SeedSequence.spawn``)."""
    return seq.spawn(n)


def spawn_generators(seq: np.random.SeedSequence, n: int) -> list[np.random.Generator]:
    """``n`` independent generators built on children of ``seq``."""
    return [generator(s) for s in seq.spawn(n)]


def check_generator(rng: Any, name: str = "rng") -> np.random.Generator:
    """Samplers take an explicit ``numpy.random.Generator`` and never fall back to a global one."""
    if not isinstance(rng, np.random.Generator):
        raise InvalidArgument.bad(name, rng, "a numpy.random.Generator (numpy.random.default_rng(seed))")
    return rng
