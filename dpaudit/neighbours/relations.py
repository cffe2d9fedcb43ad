"""Neighbour relations as predicates on pairs of datasets, and the sizes each relation allows.

For records in a domain [lo, hi] (docs/math.md#neighbour-relations); each relation lives
in a module of its own behind :class:`~dpaudit.neighbours.registry.Relation`:

* ``add-remove``: D' = D ∪ {z} or D = D' ∪ {z} (multisets; |D Δ D'| = 1). ``size`` bounds the
  larger dataset, so every size 0..size is allowed;
* ``replace``: |D| = |D'| = size and the multisets differ in one record (Hamming distance 1);
* ``linf``: D, D' ∈ [lo, hi]^size with max_i |D_i − D'_i| ≤ 1 (vectors of query answers);
* ``l1``: D, D' ∈ [lo, hi]^size with Σ_i |D_i − D'_i| ≤ 1 (count vectors).

:class:`Pair` is a candidate neighbouring pair with a human label (``"one above"``).
"""

from __future__ import annotations

from typing import Any, Union

import numpy as np

from dpaudit.claims import Domain, Neighbours, check_size
from dpaudit.errors import InvalidArgument
from dpaudit.neighbours.pair import Pair
from dpaudit.neighbours.registry import TOLERANCE, relation

__all__ = ["Pair", "are_neighbours", "check_pair", "allowed_sizes", "TOLERANCE"]


def allowed_sizes(rel: Union[str, Neighbours], size: int) -> tuple[int, int]:
    """Inclusive (min, max) dataset size under ``rel`` for a declared ``size``."""
    return relation(rel).sizes(check_size(size))


def _reason(rel: Union[str, Neighbours], dataset: Any, neighbour: Any, domain: Any,
            size: int) -> tuple[str, np.ndarray, np.ndarray]:
    r, dom = relation(rel), Domain.parse(domain)
    a = np.asarray(dataset, dtype=float).reshape(-1)
    b = np.asarray(neighbour, dtype=float).reshape(-1)
    return r.reason(a, b, dom, check_size(size)), a, b


def are_neighbours(rel: Union[str, Neighbours], dataset: Any, neighbour: Any,
                   domain: Any, size: int) -> bool:
    """True when (dataset, neighbour) is a neighbouring pair under ``rel`` (module docstring)."""
    return _reason(rel, dataset, neighbour, domain, size)[0] == ""


def check_pair(rel: Union[str, Neighbours], dataset: Any, neighbour: Any,
               domain: Any, size: int) -> Pair:
    """The pair as a :class:`Pair`, or InvalidArgument saying why it is not a neighbouring pair."""
    why, a, b = _reason(rel, dataset, neighbour, domain, size)
    if why:
        raise InvalidArgument(f"({a.tolist()!r}, {b.tolist()!r}) is not a "
                              f"{Neighbours.parse(rel).value} pair: {why}")
    return Pair.of(a, b)
