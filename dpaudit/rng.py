"""Randomness: one recorded root seed, children spawned per audit, pair and batch.

Every random draw in dpaudit comes from a ``numpy.random.Generator`` built from a child of one
root ``numpy.random.SeedSequence`` (randomness is passed, never global). The same root seed therefore gives the same
numbers, whatever the number of worker processes, provided work is split into batches whose
boundaries depend only on the sample count (never on the worker count).
"""

from __future__ import annotations

from typing import Any

import numpy as np

# the seed checks live with every other check (dpaudit.validation); the names stay here
from dpaudit.validation import DEFAULT_SEED, check_generator, check_seed

__all__ = ["DEFAULT_SEED", "root_sequence", "generator", "spawn", "spawn_generators", "check_seed",
           "check_generator"]


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
