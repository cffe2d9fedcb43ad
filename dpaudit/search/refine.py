"""Local refinement: hill-climb from the best pairs found so far through small edits of the pair.

A pair's neighbourhood is its relation's ``moves`` (:mod:`dpaudit.neighbours.registry`); every
move kept is a valid neighbouring pair under the relation:

``linf`` / ``l1``
    move one coordinate of both datasets to lo, hi, the midpoint or by ±1, ±5 (keeping its
    difference); change one coordinate's difference to −1, 0 or +1 (``linf``); move the difference
    of one coordinate onto another (``l1``); shift everything by ±1.
``add-remove``
    change the extra record, or a shared record, to lo, hi or the midpoint; drop a shared record;
    add a shared record at lo, hi or the midpoint (up to the size allowed).
``replace``
    change either side of the replaced record, or a shared record, to lo, hi or the midpoint.

Each step evaluates up to ``width`` random moves (from a seeded generator) and takes the best if it
improves the estimate (steepest ascent over a sampled neighbourhood); a start ends when no sampled
move improves it or the evaluation budget is spent.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from dpaudit.claims import Domain
from dpaudit.neighbours.registry import relation as lookup
from dpaudit.neighbours.relations import Pair, are_neighbours

__all__ = ["neighbourhood", "refine"]


def neighbourhood(relation: Any, pair: Pair, domain: Any, size: int,
                  rng: np.random.Generator) -> list[Pair]:
    """The valid, distinct neighbours of ``pair`` (module docstring), in a seeded random order."""
    rule, dom = lookup(relation), Domain.parse(domain)
    rel = rule.name
    a, b = np.asarray(pair.dataset, dtype=float), np.asarray(pair.neighbour, dtype=float)
    gen = rule.moves(a, b, dom, rule.sizes(size)[1], rng)
    seen = {pair.key}
    out = []
    label = pair.label if pair.label.startswith("refined") else f"refined from {pair.label}"
    for x, y in gen:
        x, y = np.clip(x, dom.lo, dom.hi), np.clip(y, dom.lo, dom.hi)
        p = Pair.of(x, y, label)
        if p.key in seen or p.identical:
            continue
        seen.add(p.key)
        if are_neighbours(rel, p.dataset, p.neighbour, dom, size):
            out.append(p)
    order = rng.permutation(len(out))
    return [out[k] for k in order]


def refine(evaluate: Callable[[Pair], float], relation: Any, domain: Any, size: int,
           starts: list[tuple[Pair, float]], *, max_evals: int, rng: np.random.Generator,
           budget_left: Callable[[], bool], width: int = 10) -> list[tuple[Pair, float]]:
    """Hill-climb from each start; return every (pair, value) evaluated (module docstring)."""
    seen: list[tuple[Pair, float]] = []
    evals = 0
    for start, value in starts:
        cur, cur_v = start, value
        while evals < max_evals and budget_left():
            cands = neighbourhood(relation, cur, domain, size, rng)[:width]
            best, best_v = None, cur_v
            for p in cands:
                if evals >= max_evals or not budget_left():
                    break
                v = float(evaluate(p))
                evals += 1
                seen.append((p, v))
                if v > best_v:
                    best, best_v = p, v
            if best is None:
                break
            cur, cur_v = best, best_v
    return seen
