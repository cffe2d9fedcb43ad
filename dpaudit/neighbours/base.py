"""What a neighbour relation is: the :class:`Relation` protocol and the checks every relation shares.

Each relation module (:mod:`.add_remove`, :mod:`.replace`, :mod:`.linf`, :mod:`.l1`) implements the
protocol on top of this module, :mod:`._common` (shared building blocks) and :mod:`.draws`
(hypothesis drawing); :mod:`.registry` imports the four and registers them. Nothing here imports
a relation or the registry, so the relations never import what looks them up.

What a relation provides (every method works on float arrays; ``dom`` is a
:class:`~dpaudit.claims.Domain`, ``n`` the declared ``size``):

``sizes(n)``                        inclusive (min, max) dataset size;
``reason(a, b, dom, n)``            why (a, b) is not a neighbouring pair, or "" when it is;
``patterns(dom, n)``                the structured candidate pairs ``(label, D, D')`` (StatDP §5.1);
``draw(draw, codec, sizes, dim, both_orders)``  one :class:`~dpaudit.neighbours.pair.Pair` from
                                    hypothesis choices (:mod:`.draws`);
``moves(a, b, dom, n_max, rng)``    local edits ``(D, D')`` for the refinement hill-climb;
``deletions(pair, min_size)`` / ``value_changes(pair, lo, hi, integers)``  simpler pairs for the
                                    sensitivity counterexample simplifier (:mod:`dpaudit.sensitivity.simplify`).
"""

from __future__ import annotations

from typing import Any, Iterator, Protocol, runtime_checkable

import numpy as np

from dpaudit.claims import Domain, Neighbours

__all__ = ["Relation", "TOLERANCE", "size_reason"]

#: slack for floating-point round-off in the distance of linf / l1 pairs
TOLERANCE = 1e-9


@runtime_checkable
class Relation(Protocol):
    """A neighbour relation (module docstring)."""

    name: Neighbours

    def sizes(self, n: int) -> tuple[int, int]: ...

    def reason(self, a: np.ndarray, b: np.ndarray, dom: Domain, n: int) -> str: ...

    def patterns(self, dom: Domain, n: int) -> Iterator[tuple[str, np.ndarray, np.ndarray]]: ...

    def draw(self, draw: Any, codec: Any, sizes: Any, dim: Any, both_orders: bool) -> Any: ...

    def moves(self, a: np.ndarray, b: np.ndarray, dom: Domain, n_max: int,
              rng: np.random.Generator) -> Iterator[tuple[np.ndarray, np.ndarray]]: ...

    def deletions(self, pair: Any, min_size: int) -> Iterator[Any]: ...

    def value_changes(self, pair: Any, lo: float, hi: float, integers: bool) -> Iterator[Any]: ...


def size_reason(rel: Relation, a: np.ndarray, b: np.ndarray, dom: Domain, n: int) -> str:
    """The checks every relation shares: sizes in range and records inside the domain."""
    lo_n, hi_n = rel.sizes(n)
    for name, x in (("dataset", a), ("neighbour", b)):
        if not (lo_n <= x.size <= hi_n):
            return f"{name} has {x.size} records; {rel.name.value} allows {lo_n}..{hi_n}"
        if x.size and not (np.all(np.isfinite(x)) and dom.contains(x)):
            return f"{name} has a record outside the domain {dom}"
    return ""
