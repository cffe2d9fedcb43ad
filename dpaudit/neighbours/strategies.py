"""Hypothesis strategies for datasets and neighbouring pairs under every relation (docs/math.md#neighbour-relations).

Public API (stable; shared by the sensitivity search and the privacy auditor's pair search)::

    from dpaudit.neighbours.strategies import (
        SizeRange, NeighbourPair, size_range, elements, datasets, neighbouring_pairs)

    pairs = neighbouring_pairs("add-remove", (0.0, 1.0), (0, 50))   # SearchStrategy[NeighbourPair]
    pairs = neighbouring_pairs("add-remove", (0, 10), 8, individuals=12)  # Cummings and Durfee (2020) i-neighbours

* :func:`size_range` parses ``sizes`` (an int ``N`` means 0..N; a pair ``(lo, hi)`` or a
  ``range`` gives the inclusive bounds).
* :func:`elements` draws one record of a :class:`~dpaudit.claims.Domain`: a special value (the
  ends, the midpoint, 0, ±1 and the smallest subnormals when inside, the floats next to the ends,
  so values near the float limits when the domain reaches them) or a point of a 2^20-step grid
  on [lo, hi]. It is one integer choice, which hypothesis draws, hill-climbs and shrinks cheaply.
* :func:`datasets` draws a dataset (a fresh float ``numpy`` array of shape ``(n,)``, or
  ``(n, dim)`` with ``dim``) whose size lies in the range. Its *shape* is drawn too: free values,
  duplicates of a few values, the domain ends only, a tight cluster, uniform spread, a cluster with
  one outlier, and extreme values: float-limit / subnormal / binade-edge values, or mixed
  magnitudes (huge and tiny values together). The first :data:`HEAD` records are
  drawn one by one by hypothesis (so small counterexamples shrink value by value); longer tails are filled
  by numpy from a hypothesis-drawn seed, which keeps generation fast for large sizes.
* :func:`neighbouring_pairs` draws a :class:`~dpaudit.neighbours.pair.Pair` ``(dataset, neighbour)`` such that
  both lie in the domain, both sizes lie in the range, and they are neighbours:

  Each relation's drawing rule lives in its module (:mod:`dpaudit.neighbours.registry`):

  - ``add-remove``: the neighbour has one record more or less, inserted at / removed from a drawn
    position (``index``, counted in the larger dataset); the added record is any element or a copy
    of an existing one. Both orders are drawn unless ``both_orders=False`` (then the dataset is
    always the larger one).
  - ``replace``: same size, the record at ``index`` changed (to any element or a copy of another).
  - ``linf``: a vector of answers; every coordinate moves by at most 1 (patterns: one up or down,
    all up or down, one up and the rest down, half up and half down, the X shape, random signs),
    by a magnitude that is usually exactly 1, clipped to the domain.
  - ``l1``: coordinates move by at most 1 in total (one coordinate by ±t, or two sharing t).
  - With ``individuals=N`` (``add-remove`` only): Cummings and Durfee (2020)'s individual model (docs/math.md#individual-model). A
    universe of N individuals 0..N-1 each holds a fixed record; a dataset is the records of a set
    of individuals D (in identity order) and its *i*-neighbour is D ∪ {i} with i ∉ D. The pair
    carries ``dataset_ids``, ``neighbour_ids`` and ``individual = i``.

Every array handed out is a fresh copy, so callers may mutate it. The strategies shrink toward
small sizes, the "free" shape, the first relation pattern and simple values. The choice-level
primitives (the value codec, datasets of a drawn shape, a linf move) live in
:mod:`dpaudit.neighbours.draws`, which the relations use too.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any, Optional, Union

import numpy as np
from hypothesis import strategies as st

from dpaudit.claims import Domain, Neighbours, check_size
from dpaudit.errors import InvalidArgument
from dpaudit.neighbours.draws import (BOOL, GRID, HEAD, LINF_PATTERNS, SEEDS, SHAPES, Codec, draw_dataset, ints,
                                      special_values)
from dpaudit.neighbours.pair import Pair
from dpaudit.neighbours.registry import relation as lookup

__all__ = [
    "SizeRange",
    "NeighbourPair",
    "size_range",
    "elements",
    "special_values",
    "datasets",
    "neighbouring_pairs",
    "HEAD",
    "SHAPES",
    "LINF_PATTERNS",
    "GRID",
]


@dataclass(frozen=True, slots=True)
class SizeRange:
    """Inclusive bounds ``lo ≤ n ≤ hi`` on the number of records of every dataset drawn."""

    lo: int
    hi: int

    def __contains__(self, n: object) -> bool:
        return isinstance(n, numbers.Integral) and self.lo <= int(n) <= self.hi


def size_range(sizes: Any, name: str = "sizes") -> SizeRange:
    """Parse ``sizes``: an int N (0..N), a pair ``(lo, hi)`` (inclusive), a ``range`` or a SizeRange."""
    if isinstance(sizes, SizeRange):
        return sizes
    if isinstance(sizes, range):
        if sizes.step != 1 or len(sizes) == 0:
            raise InvalidArgument.bad(name, sizes, "a non-empty range with step 1")
        return SizeRange(check_size(sizes.start, name), check_size(sizes[-1], name))
    if isinstance(sizes, numbers.Integral) and not isinstance(sizes, bool):
        return SizeRange(0, check_size(sizes, name))
    try:
        lo, hi = sizes
    except (TypeError, ValueError):
        raise InvalidArgument.bad(name, sizes, "an int N (sizes 0..N), a pair (lo, hi) or a range") from None
    for v in (lo, hi):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or int(v) < 0:
            raise InvalidArgument.bad(name, sizes, "a pair of integers 0 <= lo <= hi")
    if int(lo) > int(hi):
        raise InvalidArgument.bad(name, sizes, "a pair of integers 0 <= lo <= hi")
    return SizeRange(int(lo), int(hi))


#: The pair type the strategies hand out (one type for the whole harness).
NeighbourPair = Pair


# --------------------------------------------------------------------------- validation

def _domain(domain: Any) -> Domain:
    return Domain.parse(domain)


def _check_dim(dim: Any) -> Optional[int]:
    if dim is None:
        return None
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral) or int(dim) < 1:
        raise InvalidArgument.bad("dim", dim, "None or an integer >= 1")
    return int(dim)


def elements(domain: Any, *, integers: bool = False) -> st.SearchStrategy[float]:
    """One record of ``domain``: a special value (:func:`special_values`) or a point of the grid
    lo + (hi − lo)·j / 2^20 (any integer of the domain with ``integers=True``). Shrinks toward
    the special values (0 or lo first)."""
    codec = Codec(_domain(domain), integers)
    return codec.strategy.map(codec.value)


def datasets(domain: Any, sizes: Any, *, integers: bool = False,
             dim: Optional[int] = None) -> st.SearchStrategy[np.ndarray]:
    """A dataset with ``n`` records, ``n`` in ``sizes``, values in ``domain``: a float array of
    shape ``(n,)`` (or ``(n, dim)``). See the module docstring for the shapes drawn."""
    d, r, k = _domain(domain), size_range(sizes), _check_dim(dim)
    c = Codec(d, integers)
    n_strategy = st.integers(r.lo, r.hi)

    @st.composite
    def _datasets(draw):
        return draw_dataset(draw, c, draw(n_strategy), k)

    return _datasets()


def _individual(draw, c, r, dim, n_ind, both_orders) -> NeighbourPair:
    universe = draw_dataset(draw, c, n_ind, dim)
    i = draw(ints(0, n_ind - 1))
    k = draw(ints(r.lo, min(r.hi - 1, n_ind - 1)))
    members = np.delete(np.arange(n_ind), i)
    seed = draw(SEEDS)   # drawn even when unused (fixed-length choices)
    if k < len(members):  # the first k others (choice 0), or a random k-subset of them
        pick = members[:k] if seed == 0 else np.random.default_rng(seed).permutation(members)[:k]
        members = np.sort(pick)
    with_i = np.sort(np.append(members, i))
    small, large = universe[members], universe[with_i]
    index = int(np.searchsorted(with_i, i))
    if both_orders and draw(BOOL):
        return Pair(large, small, "", Neighbours.ADD_REMOVE, index, with_i, members, int(i))
    return Pair(small, large, "", Neighbours.ADD_REMOVE, index, members, with_i, int(i))


def neighbouring_pairs(relation: Union[str, Neighbours], domain: Any, sizes: Any, *,
                       integers: bool = False, dim: Optional[int] = None,
                       both_orders: bool = True,
                       individuals: Optional[int] = None) -> st.SearchStrategy[NeighbourPair]:
    """Neighbouring pairs under ``relation`` over ``domain`` with sizes in ``sizes``.

    ``integers=True`` draws integer-valued records (count vectors for ``l1``; then moves are ±1);
    ``dim`` draws records in domain^dim; ``individuals=N`` uses Cummings and Durfee (2020)'s individual model
    (``add-remove`` only). For ``add-remove``, both datasets' sizes lie in ``sizes``, so it needs
    ``hi ≥ 1`` and ``lo < hi``; the other relations need ``hi ≥ 1``. In the default order
    (``both_orders=False`` fixes it) ``dataset`` is the larger dataset for ``add-remove`` and the
    one without ``individual`` in the individual model.
    """
    rel = Neighbours.parse(relation)
    d, r, k = _domain(domain), size_range(sizes), _check_dim(dim)
    c = Codec(d, integers)
    if r.hi < 1:
        raise InvalidArgument.bad("sizes", (r.lo, r.hi), "a range that allows at least one record")
    if rel is Neighbours.ADD_REMOVE and r.lo >= r.hi:
        raise InvalidArgument.bad("sizes", (r.lo, r.hi),
                                  "a range with lo < hi for add-remove (a pair has sizes n and n+1)")
    if individuals is not None:
        if rel is not Neighbours.ADD_REMOVE:
            raise InvalidArgument.bad("neighbours", rel.value,
                                      "add-remove for the individual model (D and D ∪ {i})")
        if isinstance(individuals, bool) or not isinstance(individuals, numbers.Integral) \
                or int(individuals) < 1:
            raise InvalidArgument.bad("individuals", individuals, "an integer >= 1")
        if r.lo > int(individuals) - 1:
            raise InvalidArgument.bad("sizes", (r.lo, r.hi),
                                      f"a range whose lo is at most individuals - 1 = {int(individuals) - 1}")
        n_ind = int(individuals)

        @st.composite
        def _ind(draw):
            return _individual(draw, c, r, k, n_ind, both_orders)

        return _ind()

    rule = lookup(rel)

    @st.composite
    def _pairs(draw):
        return rule.draw(draw, c, r, k, both_orders)

    return _pairs()
