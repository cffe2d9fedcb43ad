"""Subsets of individuals {0, …, n−1} as bitmasks: bit i set ⇔ individual i is in the database.

Individuals are numbered from 0 here (docs/math.md#sensitivity-preprocessing numbers them from 1). The helpers group the 2^n
masks by size, which is the order in which Definition 3.1 / Theorem 3.3 fill in f̂.
"""

from __future__ import annotations

import functools
from typing import Iterable

import numpy as np

from dpaudit.errors import InvalidArgument

__all__ = ["MAX_INDIVIDUALS", "by_size", "membership", "mask_of", "members", "check_subset",
           "population_mask"]

#: The exact algorithms memoise over all 2^n subsets; beyond this they need too much memory.
MAX_INDIVIDUALS = 20


@functools.lru_cache(maxsize=32)
def by_size(n: int) -> tuple[np.ndarray, ...]:
    """``by_size(n)[k]``: the masks of the subsets of size k, in increasing order (read-only)."""
    masks = np.arange(1 << n, dtype=np.int64)
    sizes = np.bitwise_count(masks)
    order = np.argsort(sizes, kind="stable")
    cuts = np.searchsorted(sizes[order], np.arange(n + 2))
    groups = []
    for k in range(n + 1):
        g = order[cuts[k]:cuts[k + 1]]
        g.setflags(write=False)
        groups.append(g)
    return tuple(groups)


def membership(n: int, masks: np.ndarray | None = None) -> np.ndarray:
    """Boolean matrix ``B[m, i] = (bit i of masks[m])`` (all 2^n masks when ``masks`` is None)."""
    if masks is None:
        masks = np.arange(1 << n, dtype=np.int64)
    return ((np.asarray(masks, dtype=np.int64)[:, None] >> np.arange(n)) & 1).astype(bool)


def mask_of(subset: Iterable[int], n: int) -> int:
    """The bitmask of a set of individuals (validated: integers in [0, n), no repeats)."""
    m = 0
    for i in subset:
        i = int(i)
        if not 0 <= i < n:
            raise InvalidArgument.bad("subset", i, f"individuals numbered 0..{n - 1}")
        if m >> i & 1:
            raise InvalidArgument.bad("subset", i, "a set (individual listed twice)")
        m |= 1 << i
    return m


def members(mask: int) -> tuple[int, ...]:
    """The individuals in ``mask``, increasing."""
    mask = int(mask)
    return tuple(i for i in range(mask.bit_length()) if mask >> i & 1)


def check_subset(subset, n: int) -> int:
    """Accept a mask (int) or an iterable of individuals; return the mask."""
    if isinstance(subset, (int, np.integer)) and not isinstance(subset, bool):
        m = int(subset)
        if not 0 <= m < (1 << n):
            raise InvalidArgument.bad("subset", m, f"a bitmask in [0, 2^{n})")
        return m
    return mask_of(subset, n)


def population_mask(population: np.ndarray, data) -> int:
    """The database (bitmask) whose records are ``data``, in a population of fixed records.

    Individual model (docs/math.md#individual-model): individual i has the record ``population[i]``; a dataset lists the
    records of the individuals present, in any order. Equal records are matched to the
    individuals holding them in increasing index order (the first free one first), so with a
    repeated record value the dataset says *how many* of its holders are present, and those are
    taken to be the lowest-numbered. A record not in the population, or listed more often than it
    occurs there, is an :class:`InvalidArgument`.
    """
    pop = np.asarray(population, dtype=float).reshape(-1)
    try:
        d = np.sort(np.asarray(data, dtype=float).reshape(-1))
    except (TypeError, ValueError):
        raise InvalidArgument.bad("data", data, "a 1-D sequence of records from the population") from None
    order = np.argsort(pop, kind="stable")
    ps = pop[order]
    first = np.searchsorted(ps, d, side="left")
    last = np.searchsorted(ps, d, side="right")
    # rank of each record among equal ones in data (d is sorted)
    starts = np.searchsorted(d, d, side="left")
    pos = first + (np.arange(d.size) - starts)
    bad = pos >= last
    if bad.any():
        v = float(d[np.flatnonzero(bad)[0]])
        held = int(np.sum(pop == v))
        why = "is not in the population" if held == 0 else f"is listed more often than the {held} individual(s) holding it"
        raise InvalidArgument(f"data record {v!r} {why}; a dataset lists records of the population's individuals")
    mask = 0
    for i in order[pos]:
        mask |= 1 << int(i)
    return mask
