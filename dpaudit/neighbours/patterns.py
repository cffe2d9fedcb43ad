"""Structured candidate pairs per neighbour relation: the first pairs the auditor scores.

Violations of DP usually show on a few extreme pairs, so the auditor starts from these before any
search (StatDP, Ding et al. 2018, §5.1 "generate_databases"; DP-Sniper's PatternGenerator):

``linf`` (vectors of d answers, each moved by at most 1; m is the domain's midpoint)
    one above, one below, one above and the rest below, one below and the rest above (with the
    single coordinate first and last), half up and half down, all up, all down, and the X shape
    (D = (m+1, …, m, …), D' = (m, …, m+1, …)); around m, and the one-coordinate and all-coordinate
    moves also against a background at the domain ends (lo or hi).
``l1`` (count vectors moved by at most 1 in total)
    one coordinate ±1 (first, middle, last), two coordinates ±½, around m and at the ends.
``linf`` and ``l1`` also at base levels (:func:`dpaudit.neighbours.levels.base_level_patterns`)
    the all-up, X-shape and one-against-the-rest moves at the quarter levels m ∓ (hi − lo)/4,
    after the relation's own patterns (a budget that scores only the first patterns keeps them).
``add-remove`` (size = the largest dataset allowed)
    empty vs. one record (lo, hi, m); records at the domain ends with one end record removed;
    all lo or all hi with one removed; j records at lo and n − j at hi for every split j (as
    duplicates and as tight clusters of distinct records); a cluster around the median with the
    median or an end record removed; duplicates; at the largest size and at sizes 1..3. Then a
    record of a new key added: copies of a few values (lo and hi; lo, the midpoint and hi) or
    distinct spread values, plus one record of a value found nowhere in D, in an integer and a
    tenth of its own where the domain has room (``fresh_value`` in ``_common``), at the largest
    size and at size 4: a mechanism that releases only the keys its data holds (partition
    selection by a threshold on noisy counts, a histogram of the keys found) releases that key
    under D' alone, with a probability that an (ε, δ) claim bounds by δ. (Empty vs. one record,
    the median duplicates with an end record added and "n − 1 lo, 1 hi" with the hi removed add
    a new key too, alone or beside one other.)
``replace``
    the same backgrounds with one record replaced by the opposite end, the median moved to an end.

Each relation's patterns live in its module (:mod:`dpaudit.neighbours.registry`). Every pattern
comes in both orders (D, D') and (D', D) unless asked otherwise; duplicates are dropped.
"""

from __future__ import annotations

import itertools
from typing import Any, Union

import numpy as np

from dpaudit.claims import Domain, Neighbours, check_size
from dpaudit.neighbours.levels import base_level_patterns
from dpaudit.neighbours.registry import relation
from dpaudit.neighbours.relations import Pair, are_neighbours

__all__ = ["structured_pairs"]


def structured_pairs(rel: Union[str, Neighbours], domain: Any, size: int, *,
                     both_orders: bool = True, levels: bool = True) -> list[Pair]:
    """The structured candidate pairs of ``rel`` (module docstring), deduplicated, every one a
    valid neighbouring pair; with ``both_orders`` each pattern also comes as (D', D) (an auditor
    that tests both directions of every event needs only one order); ``levels=False`` leaves out
    the base-level patterns of ``linf`` / ``l1``."""
    r, dom, n = relation(rel), Domain.parse(domain), check_size(size)
    out: list[Pair] = []
    seen: set = set()
    if n == 0 and r.name is not Neighbours.ADD_REMOVE:
        return out
    vector = r.name in (Neighbours.LINF, Neighbours.L1)
    extra = base_level_patterns(r.name, dom, n) if levels and vector else ()
    for label, a, b in itertools.chain(r.patterns(dom, n), extra):
        a = np.clip(a, dom.lo, dom.hi)
        b = np.clip(b, dom.lo, dom.hi)
        for p in (Pair.of(a, b, label), Pair.of(b, a, label + " (swapped)")):
            if not both_orders and (p.key[1], p.key[0]) in seen:
                continue
            if p.key in seen or p.identical:
                continue
            if not are_neighbours(r.name, p.dataset, p.neighbour, dom, n):
                continue
            seen.add(p.key)
            out.append(p)
    return out
