"""Local refinement: hill-climb from the best pairs found so far through small edits of the pair.

A pair's neighbourhood (all moves keep a valid neighbouring pair under the relation):

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

from typing import Any, Callable, Iterator

import numpy as np

from dpaudit.claims import Domain, Neighbours
from dpaudit.neighbours.relations import Pair, allowed_sizes, are_neighbours

__all__ = ["neighbourhood", "refine"]


def _vector_moves(rel: Neighbours, a: np.ndarray, b: np.ndarray, dom: Domain,
                  rng: np.random.Generator) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    d = a.size
    s = b - a
    m = (dom.lo + dom.hi) / 2
    for j in rng.permutation(d)[: min(d, 6)]:
        for v in (dom.lo, dom.hi, m, a[j] + 1, a[j] - 1, a[j] + 5, a[j] - 5):
            a2, b2 = a.copy(), b.copy()
            a2[j] = v
            b2[j] = v + s[j]
            yield a2, b2
        if rel is Neighbours.LINF:
            for t in (-1.0, 0.0, 1.0):
                b2 = b.copy()
                b2[j] = a[j] + t
                yield a, b2
        else:
            k = int(rng.integers(d))
            if k != j:
                b2 = a.copy()
                b2[k] = a[k] + s[j]
                yield a, b2
    for t in (-1.0, 1.0):
        yield a + t, b + t


def _record_moves(rel: Neighbours, a: np.ndarray, b: np.ndarray, dom: Domain, n_max: int,
                  rng: np.random.Generator) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    m = (dom.lo + dom.hi) / 2
    ends = (dom.lo, dom.hi, m)
    if rel is Neighbours.ADD_REMOVE:
        big, small, flip = (a, b, False) if a.size > b.size else (b, a, True)
        extra = None
        rest = list(big)
        for v in small:  # the extra record: the one left after removing the smaller multiset
            rest.remove(v)
        extra = rest[0]
        shared = small

        def out(sh: np.ndarray, z: float):
            bb = np.append(sh, z)
            return (sh, bb) if flip else (bb, sh)

        for z in ends:
            yield out(shared, z)
        for j in rng.permutation(shared.size)[:4]:
            for v in ends:
                sh = shared.copy()
                sh[j] = v
                yield out(sh, extra)
            yield out(np.delete(shared, j), extra)
        if shared.size + 1 < n_max:
            for v in ends:
                yield out(np.append(shared, v), extra)
        return
    diff = np.flatnonzero(a != b)
    i = int(diff[0]) if diff.size else int(rng.integers(a.size))
    for v in ends:
        b2 = b.copy()
        b2[i] = v
        yield a, b2
        a2 = a.copy()
        a2[i] = v
        yield a2, b
    for j in rng.permutation(a.size)[:4]:
        if j == i:
            continue
        for v in ends:
            a2, b2 = a.copy(), b.copy()
            a2[j] = b2[j] = v
            yield a2, b2


def neighbourhood(relation: Any, pair: Pair, domain: Any, size: int,
                  rng: np.random.Generator) -> list[Pair]:
    """The valid, distinct neighbours of ``pair`` (module docstring), in a seeded random order."""
    rel, dom = Neighbours.parse(relation), Domain.parse(domain)
    a, b = np.asarray(pair.dataset, dtype=float), np.asarray(pair.neighbour, dtype=float)
    if rel in (Neighbours.LINF, Neighbours.L1):
        gen = _vector_moves(rel, a, b, dom, rng)
    else:
        gen = _record_moves(rel, a, b, dom, allowed_sizes(rel, size)[1], rng)
    seen = {pair.key}
    out = []
    label = pair.label if pair.label.startswith("refined") else f"refined from {pair.label}"
    for x, y in gen:
        x, y = np.clip(x, dom.lo, dom.hi), np.clip(y, dom.lo, dom.hi)
        p = Pair.of(x, y, label)
        if p.key in seen or p.dataset == p.neighbour:
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
