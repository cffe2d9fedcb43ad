"""Record order as a draw of its own: the same neighbouring pair with its records permuted.

A dataset is a multiset, so a claim ``‖f(D) − f(D')‖ ≤ Δ`` covers every order in which f may meet
the records. A float sum is not associative: the naive left-to-right sum of 10^16, 1, −10^16 is 0
while 10^16, −10^16, 1 gives 1, so which records meet which partial sums decides the rounding
(Casacuberta, Shoemate, Vadhan and Wagaman, "Widespread underestimation of sensitivity in
differentially private libraries and how to fix it", CCS 2022, on float sums).
The search therefore draws, besides the pair, an order of the larger dataset's records: as drawn
(the shrink target), sorted ascending or descending by value (large records of both signs at the
two ends and the small ones between them, where a cancelling sum exposes what the large partial
sums rounded away), or any permutation. The permutation π is applied to both datasets so that
they stay neighbours position by position, the way the relations and the simplifier read them:

* same size (``replace``, ``linf``, ``l1``): D ↦ D∘π and D' ↦ D'∘π; the changed record moves from
  ``index`` to π⁻¹(index);
* ``add-remove``: the larger dataset L ↦ L∘π, with the extra record now at π⁻¹(index); the smaller
  one is L∘π without that position (its records in the same relative order as in L∘π).

The individual model is left in identity order (its ``data`` is indexed by identity).
"""

from __future__ import annotations

from typing import Optional

import numpy as np
from hypothesis import strategies as st

from dpaudit.neighbours.pair import Pair

__all__ = ["ORDERS", "order_of", "permuted", "reorder"]


def permuted(pair: Pair, order: np.ndarray) -> Pair:
    """``pair`` with the larger dataset's records taken in ``order`` (a permutation of its
    positions), the other dataset and ``index`` following as in the module docstring."""
    order = np.asarray(order, dtype=np.intp)
    x, y = pair.dataset, pair.neighbour
    if len(x) == len(y):
        index = None if pair.index is None else int(np.flatnonzero(order == pair.index)[0])
        return Pair(x[order], y[order], pair.label, pair.relation, index,
                    pair.dataset_ids, pair.neighbour_ids, pair.individual)
    if pair.index is None:
        raise ValueError("an add-remove pair needs the index of its extra record to be permuted")
    big_first = len(x) > len(y)
    big = x if big_first else y
    new_big = big[order]
    index = int(np.flatnonzero(order == pair.index)[0])
    new_small = np.delete(new_big, index, axis=0)
    d, n = (new_big, new_small) if big_first else (new_small, new_big)
    return Pair(d, n, pair.label, pair.relation, index, pair.dataset_ids, pair.neighbour_ids,
                pair.individual)


#: order kinds: as drawn, ascending, descending, any permutation
ORDERS = ("drawn", "ascending", "descending", "permutation")
_KIND = st.integers(0, len(ORDERS) - 1)


def order_of(kind: str, records: np.ndarray) -> Optional[np.ndarray]:
    """The permutation of ``records`` (rows) that ``kind`` names (None: as drawn; for records in
    domain^k, sorted by their sums)."""
    if kind == "drawn":
        return None
    key = records.reshape(len(records), -1).sum(axis=1)
    order = np.argsort(key, kind="stable")
    return order if kind == "ascending" else order[::-1].copy()


def reorder(draw, pair: Pair) -> Pair:
    """One hypothesis draw: keep the order (the shrink target), sort, or permute the records."""
    n = max(len(pair.dataset), len(pair.neighbour))
    if n < 2 or pair.individual is not None or pair.dataset_ids is not None:
        return pair
    if len(pair.dataset) != len(pair.neighbour) and pair.index is None:
        return pair
    kind = ORDERS[draw(_KIND)]
    if kind == "permutation":
        return permuted(pair, np.asarray(draw(st.permutations(range(n))), dtype=np.intp))
    big = pair.dataset if len(pair.dataset) >= len(pair.neighbour) else pair.neighbour
    order = order_of(kind, big)
    return pair if order is None else permuted(pair, order)
