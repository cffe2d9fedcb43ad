"""Greedy simplification of a failing neighbouring pair, after hypothesis has shrunk it.

Hypothesis shrinks the *choices* that generated a pair (sizes, shapes, the leading values, the
seed of a numpy-filled tail). Records in the middle of a numpy tail cannot be deleted one by one
that way, so this pass finishes the job on the concrete pair, in the spirit of delta debugging
(Zeller and Hildebrandt 2002): repeatedly

1. delete one record that both datasets share (keeping the pair neighbours under its relation and
   both sizes in range), then
2. replace a value by a simpler one (0, the domain ends, ±1, the value rounded to fewer digits),

keeping a change only when the pair still fails in the same way (still violates the bound, or
``f`` still fails with the same exception type). Every step strictly decreases (records, total
length of the values' reprs), so the pass terminates; it also stops after ``max_evals`` pairs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Iterator, Optional

import numpy as np

from dpaudit.claims import Neighbours
from dpaudit.neighbours.strategies import NeighbourPair

__all__ = ["Case", "simplify"]


@dataclass(frozen=True, slots=True)
class Case:
    """A neighbouring pair plus the utility argument r (None for plain functions)."""

    pair: NeighbourPair
    r: Optional[float] = None


def _complexity(v: float) -> tuple[int, float]:
    return (len(repr(float(v))), abs(float(v)))


def _simpler(v: float, lo: float, hi: float, integers: bool) -> list[float]:
    """Candidate replacements for v that lie in [lo, hi] and are strictly simpler than v."""
    cands = [0.0, lo, hi, 1.0, -1.0, float(np.round(v))]
    for digits in (1, 2, 3):
        cands.append(float(np.round(v, digits)))
        cands.append(float(f"{v:.{digits}g}"))
    out: list[float] = []
    cv = _complexity(v)
    for c in cands:
        if not (lo <= c <= hi) or c in out or c == v or _complexity(c) >= cv:
            continue
        if integers and not float(c).is_integer():
            continue
        out.append(c)
    return sorted(out, key=_complexity)


def _with(pair: NeighbourPair, dataset=None, neighbour=None, index=..., dataset_ids=...,
          neighbour_ids=...) -> NeighbourPair:
    return NeighbourPair(
        pair.dataset if dataset is None else dataset,
        pair.neighbour if neighbour is None else neighbour,
        pair.relation,
        pair.index if index is ... else index,
        pair.dataset_ids if dataset_ids is ... else dataset_ids,
        pair.neighbour_ids if neighbour_ids is ... else neighbour_ids,
        pair.individual,
    )


def _deletions(pair: NeighbourPair, min_size: int) -> Iterator[NeighbourPair]:
    """Pairs with one shared record removed from both datasets (largest positions first)."""
    x, y = pair.dataset, pair.neighbour
    if pair.relation is Neighbours.ADD_REMOVE:
        x_big = len(x) > len(y)
        big, small = (x, y) if x_big else (y, x)
        big_ids, small_ids = ((pair.dataset_ids, pair.neighbour_ids) if x_big
                              else (pair.neighbour_ids, pair.dataset_ids))
        p = pair.index
        if len(small) - 1 < min_size:
            return
        for k in range(len(big) - 1, -1, -1):
            if k == p:
                continue
            ks = k if k < p else k - 1
            nb, ns = np.delete(big, k, axis=0), np.delete(small, ks, axis=0)
            nbi = None if big_ids is None else np.delete(big_ids, k)
            nsi = None if small_ids is None else np.delete(small_ids, ks)
            q = p if k > p else p - 1
            if x_big:
                yield _with(pair, nb, ns, q, nbi, nsi)
            else:
                yield _with(pair, ns, nb, q, nsi, nbi)
        return
    if len(x) - 1 < max(min_size, 1):
        return
    for k in range(len(x) - 1, -1, -1):
        if pair.relation is Neighbours.REPLACE and k == pair.index:
            continue
        index = pair.index
        if index is not None and k < index:
            index -= 1
        yield _with(pair, np.delete(x, k, axis=0), np.delete(y, k, axis=0), index)


def _value_changes(pair: NeighbourPair, lo: float, hi: float, integers: bool) -> Iterator[NeighbourPair]:
    """Pairs with one value made simpler, the pair staying neighbours."""
    x, y = pair.dataset, pair.neighbour
    rel = pair.relation
    if rel is Neighbours.ADD_REMOVE:
        x_big = len(x) > len(y)
        big, small = (x, y) if x_big else (y, x)
        p = pair.index
        for k in range(len(big)):
            row = big[k].reshape(-1)
            for j, v in enumerate(row):
                for c in _simpler(float(v), lo, hi, integers):
                    nb = big.copy()
                    nb.reshape(len(big), -1)[k, j] = c
                    ns = small
                    if k != p:
                        ns = small.copy()
                        ns.reshape(len(small), -1)[k if k < p else k - 1, j] = c
                    yield _with(pair, nb, ns) if x_big else _with(pair, ns, nb)
        return
    n = len(x)
    fx, fy = x.reshape(n, -1), y.reshape(n, -1)
    for k in range(n):
        for j in range(fx.shape[1]):
            a, b = float(fx[k, j]), float(fy[k, j])
            if rel is Neighbours.REPLACE and k == pair.index:
                for which, v in ((0, a), (1, b)):
                    for c in _simpler(v, lo, hi, integers):
                        arr = (x if which == 0 else y).copy()
                        arr.reshape(n, -1)[k, j] = c
                        yield _with(pair, arr, None) if which == 0 else _with(pair, None, arr)
                continue
            if a != b:  # linf / l1: first try dropping the move on this coordinate
                nx = x.copy()
                nx.reshape(n, -1)[k, j] = b
                yield _with(pair, nx, None)
            delta = b - a
            for c in _simpler(a, lo, hi, integers):
                c2 = c + delta
                if not (lo <= c2 <= hi) or abs(c2 - c) > abs(delta):
                    continue
                nx, ny = x.copy(), y.copy()
                nx.reshape(n, -1)[k, j] = c
                ny.reshape(n, -1)[k, j] = c2
                yield _with(pair, nx, ny)


def simplify(case: Case, fails: Callable[[Case], bool], *, lo: float, hi: float, min_size: int,
             integers: bool = False, output_lo: Optional[float] = None,
             output_hi: Optional[float] = None, max_evals: int = 500) -> tuple[Case, int]:
    """The simplest case reachable greedily from ``case`` on which ``fails`` stays true, and the
    number of cases tried. ``fails(case)`` must be true on entry."""
    evals = 0
    improved = True
    while improved and evals < max_evals:
        improved = False
        for stage in (_deletions(case.pair, min_size), _value_changes(case.pair, lo, hi, integers)):
            for cand in stage:
                evals += 1
                if fails(replace(case, pair=cand)):
                    case, improved = replace(case, pair=cand), True
                    break
                if evals >= max_evals:
                    return case, evals
            if improved:
                break
        if not improved and case.r is not None and output_lo is not None:
            for c in _simpler(case.r, output_lo, output_hi, False):
                evals += 1
                if fails(replace(case, r=c)):
                    case, improved = replace(case, r=c), True
                    break
    return case, evals
