"""Neighbour relations as predicates on pairs of datasets, and the sizes each relation allows.

For records in a domain [lo, hi] (SPEC §1, DESIGN.md "Neighbour relations"):

* ``add-remove``: D' = D ∪ {z} or D = D' ∪ {z} (multisets; |D Δ D'| = 1). ``size`` bounds the
  larger dataset, so every size 0..size is allowed;
* ``replace``: |D| = |D'| = size and the multisets differ in one record (Hamming distance 1);
* ``linf``: D, D' ∈ [lo, hi]^size with max_i |D_i − D'_i| ≤ 1 (vectors of query answers);
* ``l1``: D, D' ∈ [lo, hi]^size with Σ_i |D_i − D'_i| ≤ 1 (count vectors).

:class:`Pair` is a candidate neighbouring pair with a human label (``"one above"``), as produced by
the pattern generators and the pair search.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Union

import numpy as np

from dpaudit.claims import Domain, Neighbours, check_size
from dpaudit.errors import InvalidArgument

__all__ = ["Pair", "are_neighbours", "check_pair", "allowed_sizes", "TOLERANCE"]

#: slack for floating-point round-off in the distance of linf / l1 pairs
TOLERANCE = 1e-9


@dataclass(frozen=True, slots=True)
class Pair:
    """Neighbouring datasets (D, D') as tuples of floats, and how they were found."""

    dataset: tuple
    neighbour: tuple
    label: str = ""

    @classmethod
    def of(cls, d: Any, d2: Any, label: str = "") -> "Pair":
        a = tuple(float(v) for v in np.asarray(d, dtype=float).reshape(-1))
        b = tuple(float(v) for v in np.asarray(d2, dtype=float).reshape(-1))
        return cls(a, b, label)

    def swapped(self) -> "Pair":
        return Pair(self.neighbour, self.dataset, self.label)

    @property
    def key(self) -> tuple:
        """Identity of the pair regardless of its label."""
        return (self.dataset, self.neighbour)


def allowed_sizes(relation: Union[str, Neighbours], size: int) -> tuple[int, int]:
    """Inclusive (min, max) dataset size under ``relation`` for a declared ``size``."""
    rel = Neighbours.parse(relation)
    n = check_size(size)
    return (0, n) if rel is Neighbours.ADD_REMOVE else (n, n)


def _reason(rel: Neighbours, a: np.ndarray, b: np.ndarray, dom: Domain, size: int) -> str:
    """Why (a, b) is not a neighbouring pair, or "" when it is."""
    lo_n, hi_n = allowed_sizes(rel, size)
    for name, x in (("dataset", a), ("neighbour", b)):
        if not (lo_n <= x.size <= hi_n):
            return f"{name} has {x.size} records; {rel.value} allows {lo_n}..{hi_n}"
        if x.size and not (np.all(np.isfinite(x)) and dom.contains(x)):
            return f"{name} has a record outside the domain {dom}"
    if rel is Neighbours.ADD_REMOVE:
        small, big = (a, b) if a.size < b.size else (b, a)
        if big.size != small.size + 1:
            return "sizes must differ by exactly one record"
        extra = Counter(big.tolist())
        extra.subtract(Counter(small.tolist()))
        if any(v < 0 for v in extra.values()):
            return "the smaller dataset is not contained in the larger one"
        return ""
    if a.size != b.size:
        return "datasets must have the same size"
    if rel is Neighbours.REPLACE:
        diff = Counter(a.tolist())
        diff.subtract(Counter(b.tolist()))
        if sum(v for v in diff.values() if v > 0) > 1:
            return "more than one record differs"
        return ""
    d = np.abs(a - b)
    if rel is Neighbours.LINF and d.size and d.max() > 1 + TOLERANCE:
        return f"a coordinate moves by {d.max():g} > 1"
    if rel is Neighbours.L1 and d.sum() > 1 + TOLERANCE:
        return f"coordinates move by {d.sum():g} > 1 in total"
    return ""


def are_neighbours(relation: Union[str, Neighbours], dataset: Any, neighbour: Any,
                   domain: Any, size: int) -> bool:
    """True when (dataset, neighbour) is a neighbouring pair under ``relation`` (module docstring)."""
    rel, dom = Neighbours.parse(relation), Domain.parse(domain)
    a = np.asarray(dataset, dtype=float).reshape(-1)
    b = np.asarray(neighbour, dtype=float).reshape(-1)
    return _reason(rel, a, b, dom, check_size(size)) == ""


def check_pair(relation: Union[str, Neighbours], dataset: Any, neighbour: Any,
               domain: Any, size: int) -> Pair:
    """The pair as a :class:`Pair`, or InvalidArgument saying why it is not a neighbouring pair."""
    rel, dom = Neighbours.parse(relation), Domain.parse(domain)
    a = np.asarray(dataset, dtype=float).reshape(-1)
    b = np.asarray(neighbour, dtype=float).reshape(-1)
    why = _reason(rel, a, b, dom, check_size(size))
    if why:
        raise InvalidArgument(f"({a.tolist()!r}, {b.tolist()!r}) is not a {rel.value} pair: {why}")
    return Pair.of(a, b)
