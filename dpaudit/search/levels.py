"""Level search: climb over the base levels and steps of a few blocks of coordinates, steered by
the cheap loss estimate, then shrink the winner toward simpler levels.

For ``linf`` and ``l1`` the structured patterns move answers by ±1 around a few fixed levels (the
midpoint and the domain's ends). A threshold mechanism's worst pair also depends on *where* the
answers sit relative to its threshold (Lyu, Su and Li 2017, §4: all queries at one level against
all one step above, blocks shifted in opposite directions, one query moved across the threshold
while the others sit far below it). Up to :data:`MAX_STARTS` of the best pairs so far, unlike
in which way how many coordinates move, are each read as blocks of coordinates
(:func:`dpaudit.neighbours.levels.from_pair`: D_i = a_g, D'_i = a_g + s_g on block g), and a
pattern search (Hooke and Jeeves 1961, "Direct search" solution of numerical and statistical
problems, J. ACM 8(2)) moves one parameter at a time, taking the first move that raises the
estimate:

1. climb: the levels, all together or one block at a time, ±δ
   (:func:`~dpaudit.neighbours.levels.shift_moves`), δ a quarter of the domain's width first and
   halved when no move helps, down to the relation's unit step (or an eighth of the width); then
   one structural move (:func:`~dpaudit.neighbours.levels.structure_moves`: a block to an end of
   the domain, split into halves moved in opposite directions, its step reversed), after which
   the levels are searched again;
2. shrink: take each :func:`~dpaudit.neighbours.levels.simplifications` move (a block's step
   dropped, its level made simpler) while the estimate stays within :data:`SHRINK_TOLERANCE` of
   the climb's best.

Every candidate is checked with the relation's own predicate (:func:`are_neighbours`) before it
is scored, and every (pair, value) scored is returned, so the caller's selection can race them on
fresh samples. The search only proposes pairs; it never sees a validation sample.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Optional

import numpy as np

from dpaudit.claims import Domain, Neighbours
from dpaudit.neighbours.levels import (Levels, from_pair, shift_moves, simplifications,
                                       structure_moves)
from dpaudit.neighbours.relations import Pair, are_neighbours

__all__ = ["level_search", "LEVEL_RELATIONS", "SHRINK_TOLERANCE"]

#: the relations whose pairs are vectors of answers with a level and a step per coordinate
LEVEL_RELATIONS = (Neighbours.LINF, Neighbours.L1)
#: a shrinking move is kept while the estimate stays above (1 − this) × the climb's best
SHRINK_TOLERANCE = 0.02
#: starts of different structure (:func:`_signature`) climbed, the evaluations split among them
MAX_STARTS = 3
#: evaluations spent shrinking the best pair found (at most a sixth of the budget)
MAX_SHRINK = 3


class _Done(Exception):
    """The evaluation budget is spent."""


def _base_label(label: str) -> str:
    """The pattern a level-search label started from (``"levels from X: …"`` → ``"X"``)."""
    if label.startswith("levels from "):
        return label.split(": ", 1)[0].removeprefix("levels from ")
    return label


class _Scorer:
    """Scores valid, new pairs (the relation's own predicate; each pair once) until ``max_evals``
    or the caller's budget is spent, then raises :class:`_Done`; keeps every (pair, value)."""

    def __init__(self, evaluate: Callable[[Pair], float], rel: Neighbours, dom: Domain, size: int,
                 max_evals: int, budget_left: Callable[[], bool]) -> None:
        self.evaluate, self.rel, self.dom, self.size = evaluate, rel, dom, size
        self.max_evals, self.budget_left = max_evals, budget_left
        self.seen: dict = {}
        self.out: list[tuple[Pair, float]] = []

    def count(self) -> int:
        return len(self.out)

    def __call__(self, lv: Levels, label: str) -> Optional[float]:
        p = lv.pair(label)
        if p.identical or not are_neighbours(self.rel, p.dataset, p.neighbour, self.dom, self.size):
            return None
        hit = self.seen.get(p.key)
        if hit is not None:
            return hit
        if len(self.out) >= self.max_evals or not self.budget_left():
            raise _Done
        v = float(self.evaluate(p))
        self.seen[p.key] = v
        self.out.append((p, v))
        return v


def level_search(evaluate: Callable[[Pair], float], relation: Any, domain: Any, size: int,
                 starts: list[tuple[Pair, float]], *, max_evals: int,
                 budget_left: Callable[[], bool],
                 shrink_evals: Optional[int] = None) -> list[tuple[Pair, float]]:
    """Climb from up to :data:`MAX_STARTS` of ``starts`` unlike in structure, then shrink the best
    pair found (module docstring); every (pair, value) evaluated, in order. ``shrink_evals`` caps
    the evaluations spent shrinking (default :data:`MAX_SHRINK`, at most a sixth of
    ``max_evals``)."""
    rel, dom = Neighbours.parse(relation), Domain.parse(domain)
    if rel not in LEVEL_RELATIONS or max_evals <= 0:
        return []
    unit = min(1.0, dom.width)
    if not unit > 0:
        return []
    shrink_cap = min(MAX_SHRINK, max(0, max_evals // 6)) if shrink_evals is None else shrink_evals
    score = _Scorer(evaluate, rel, dom, size, max_evals, budget_left)
    for p, v in starts:  # already scored, in either order (every event is tested both ways)
        score.seen.setdefault(p.key, v)
        score.seen.setdefault((p.key[1], p.key[0]), v)
    todo = _diverse(starts, MAX_STARTS)
    best: Optional[tuple] = None
    try:
        for i, (lv, start, v0) in enumerate(todo):
            origin = _base_label(start.label) or "a pair"
            limit = score.count() + (max_evals - shrink_cap - score.count()) // (len(todo) - i)
            lv, v = _climb(lv, v0, dom, unit, origin, score, limit)
            if best is None or v > best[1]:
                best = (lv, v, origin)
        if best is not None:
            _shrink(*best, dom, score, score.count() + shrink_cap)
    except _Done:
        pass
    return score.out


def _signature(lv: Levels) -> tuple:
    """How many coordinates move one way and how many the other (the larger count first, so a
    pair and its mirror image agree): pairs alike in it are alike to a level search."""
    up = sum(len(g.index) for g in lv.blocks if g.step > 0)
    down = sum(len(g.index) for g in lv.blocks if g.step < 0)
    return (max(up, down), min(up, down))


def _diverse(starts: list[tuple[Pair, float]], k: int) -> list[tuple]:
    """Up to ``k`` starts, best first, no two with the same :func:`_signature` (the best pairs of a
    search are often one structure at several places; a threshold found late needs another)."""
    out, sigs = [], set()
    for p, v in sorted(starts, key=lambda pv: -pv[1]):
        lv = from_pair(p) if np.isfinite(v) else None
        if lv is None or _signature(lv) in sigs:
            continue
        sigs.add(_signature(lv))
        out.append((lv, p, v))
        if len(out) == k:
            break
    return out


def _label(origin: str, x: Levels) -> str:
    return f"levels from {origin}: {x.describe()}"


def _climb(lv: Levels, v: float, dom: Domain, unit: float, origin: str, score: _Scorer,
           limit: int) -> tuple[Levels, float]:
    """Step 1 of the module docstring from one start, until ``limit`` evaluations in all: the
    levels at spacings δ, δ/2, … first (where a threshold sits matters most), then one structural
    move (end, split, step), after which the levels are searched again from δ/2."""
    finite = math.isfinite(dom.width)
    top = dom.width / 4 if finite else 16 * unit
    smallest = min(unit, dom.width / 8) if finite else unit

    def first_better(moves) -> bool:
        nonlocal lv, v
        for _, cand in moves:
            if score.count() >= limit:
                return False
            cand = from_pair(cand.pair("")) or cand  # blocks that have met are merged
            w = score(cand, _label(origin, cand))
            if w is not None and w > v:
                lv, v = cand, w
                return True
        return False

    delta = top
    while score.count() < limit:
        while delta >= smallest and score.count() < limit:
            if not first_better(shift_moves(lv, dom, delta)):
                delta /= 2
        if not first_better(structure_moves(lv, dom, unit)):
            break
        delta = top / 2
    return lv, v


def _shrink(lv: Levels, v: float, origin: str, dom: Domain, score: _Scorer, limit: int) -> None:
    """Step 2 of the module docstring, until ``limit`` evaluations in all."""
    top = v
    changed = True
    while changed and score.count() < limit:
        changed = False
        for _, cand in simplifications(lv, dom):
            if score.count() >= limit:
                break
            cand = from_pair(cand.pair("")) or cand
            w = score(cand, _label(origin, cand))
            if w is not None and w >= top - SHRINK_TOLERANCE * abs(top):
                lv, v, changed = cand, w, True
                break
