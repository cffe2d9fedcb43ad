"""Vector pairs as a few blocks of coordinates, each at a base level and moved by a step: the
parameter space of the level search (:mod:`dpaudit.search.levels`).

A threshold mechanism's loss depends on where the answers sit relative to its (noisy) threshold,
not only on which way they move. Lyu, Su and Li (2017, "Understanding the sparse vector
technique", §3 and the counterexamples of §4) build their worst pairs from blocks of queries:
every query at one level against every query one step above, two blocks shifted in opposite
directions (the ⊥ answers one way, the ⊤ answers the other), one query moved across the threshold
while the rest sit far below it. A :class:`Levels` is such a pair::

    D_i = a_g,   D'_i = a_g + s_g        for every coordinate i of block g,

with level a_g ∈ [lo, hi] and step s_g (|s_g| ≤ 1 under ``linf``; Σ_g |B_g|·|s_g| ≤ 1 under
``l1``). :func:`from_pair` reads any pair of at most :data:`MAX_BLOCKS` such blocks (every
structured pattern is one), :meth:`Levels.pair` writes it back, and :func:`shift_moves`,
:func:`structure_moves` and :func:`simplifications` are the moves of the steered search and of
its shrinking. Whether a result is a neighbouring pair is left to the relation's own predicate
(the caller checks it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Optional

import numpy as np

from dpaudit.claims import Domain, Neighbours
from dpaudit.neighbours._common import simpler
from dpaudit.neighbours.pair import Pair

__all__ = ["Block", "Levels", "MAX_BLOCKS", "from_pair", "shift_moves", "structure_moves",
           "simplifications",
           "base_level_patterns"]

#: pairs with more distinct (level, step) blocks than this are not searched over levels
MAX_BLOCKS = 3


@dataclass(frozen=True, slots=True)
class Block:
    """Coordinates ``index`` at level ``level`` on D, moved by ``step`` on D'."""

    index: tuple
    level: float
    step: float


@dataclass(frozen=True, slots=True)
class Levels:
    """A vector pair as blocks (module docstring); ``size`` coordinates in all."""

    blocks: tuple
    size: int

    def pair(self, label: str) -> Pair:
        a, b = np.empty(self.size), np.empty(self.size)
        for g in self.blocks:
            idx = list(g.index)
            a[idx] = g.level
            b[idx] = g.level + g.step
        return Pair.of(a, b, label)

    def describe(self) -> str:
        """``"5 at 10 down, 5 at -10 up"``: each block's size, level and step."""
        parts = []
        for g in self.blocks:
            n = len(g.index)
            who = f"#{g.index[0]}" if n == 1 else f"{n}"
            move = "fixed" if g.step == 0 else (f"{'up' if g.step > 0 else 'down'}"
                                                + ("" if abs(g.step) == 1 else f" {abs(g.step):g}"))
            parts.append(f"{who} at {g.level:g} {move}")
        return ", ".join(parts)

    def replace(self, k: int, **kw) -> "Levels":
        g = self.blocks[k]
        new = Block(kw.get("index", g.index), kw.get("level", g.level), kw.get("step", g.step))
        return Levels(self.blocks[:k] + (new,) + self.blocks[k + 1:], self.size)


def from_pair(pair: Pair) -> Optional[Levels]:
    """The blocks of a same-size flat pair, or None when it has more than :data:`MAX_BLOCKS`."""
    a = np.asarray(pair.dataset, dtype=float).reshape(-1)
    b = np.asarray(pair.neighbour, dtype=float).reshape(-1)
    if a.size != b.size or a.size == 0:
        return None
    groups: dict = {}
    for i, (x, y) in enumerate(zip(a.tolist(), b.tolist())):
        groups.setdefault((x, y - x), []).append(i)
        if len(groups) > MAX_BLOCKS:
            return None
    blocks = tuple(Block(tuple(ix), lv, st) for (lv, st), ix in groups.items())
    return Levels(blocks, a.size)


def _level_ok(level: float, step: float, dom: Domain) -> bool:
    return dom.lo <= level <= dom.hi and dom.lo <= level + step <= dom.hi


def _fit(level: float, step: float, dom: Domain) -> float:
    """The level nearest ``level`` at which both ``level`` and ``level + step`` lie in the domain."""
    return float(np.clip(level, dom.lo - min(step, 0.0), dom.hi - max(step, 0.0)))


def shift_moves(lv: Levels, dom: Domain, delta: float) -> Iterator[tuple[str, Levels]]:
    """All levels together, then every block's level, up and down by ``delta`` (toward and
    across a threshold); levels are kept where both sides of every block lie in the domain."""
    for t in (delta, -delta):
        if len(lv.blocks) > 1:
            moved = Levels(tuple(Block(g.index, _fit(g.level + t, g.step, dom), g.step)
                                 for g in lv.blocks), lv.size)
            if moved != lv:
                yield f"all {'up' if t > 0 else 'down'} {delta:g}", moved
    for k, g in enumerate(lv.blocks):
        for t in (delta, -delta):
            new = _fit(g.level + t, g.step, dom)
            if new != g.level:
                yield f"block {k} {'up' if t > 0 else 'down'} {delta:g}", lv.replace(k, level=new)


def structure_moves(lv: Levels, dom: Domain, unit: float) -> Iterator[tuple[str, Levels]]:
    """Every block to the far ends of the domain (answers "far below" or "far above"); every
    block of two or more coordinates split into two halves shifted in opposite directions, and
    into its first coordinate against the rest (moved the other way); every block's step
    reversed, or set to ±``unit`` where it was 0."""
    for k, g in enumerate(lv.blocks):
        for end in (dom.lo, dom.hi) if np.isfinite(dom.width) else ():
            new = _fit(end, g.step, dom)
            if new != g.level:
                yield f"block {k} to {end:g}", lv.replace(k, level=new)
    for k, g in enumerate(lv.blocks):
        if len(g.index) < 2 or len(lv.blocks) >= MAX_BLOCKS:
            continue
        s = g.step if g.step != 0 else unit
        h = len(g.index) // 2
        for head, tail in ((g.index[:h], g.index[h:]), (g.index[:1], g.index[1:])):
            first = Block(head, _fit(g.level, s, dom), s)
            second = Block(tail, _fit(g.level, -s, dom), -s)
            yield (f"block {k} split {len(head)}/{len(tail)} opposite",
                   Levels(lv.blocks[:k] + (first, second) + lv.blocks[k + 1:], lv.size))
    for k, g in enumerate(lv.blocks):
        steps = (-g.step,) if g.step != 0 else (unit, -unit)
        for s in steps:
            yield f"block {k} step {s:g}", lv.replace(k, level=_fit(g.level, s, dom), step=s)


def simplifications(lv: Levels, dom: Domain) -> Iterator[tuple[str, Levels]]:
    """Shrinking moves: a block's step set to 0 (its coordinates no longer differ), then its level
    moved to a simpler value (0, an end of the domain, ±1, or the level rounded) with its step
    kept."""
    for k, g in enumerate(lv.blocks):
        if g.step != 0 and sum(1 for h in lv.blocks if h.step != 0) > 1:
            yield f"block {k} fixed", lv.replace(k, step=0.0)
    for k, g in enumerate(lv.blocks):
        for c in simpler(g.level, dom.lo, dom.hi, False):
            if _level_ok(c, g.step, dom):
                yield f"block {k} at {c:g}", lv.replace(k, level=c)
                break


def base_level_patterns(rel: Neighbours, dom: Domain,
                        d: int) -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
    """Structured pairs of d ≥ 2 answers at the quarter levels q = m ∓ (hi − lo)/4 of a finite
    domain (a threshold rarely sits at the midpoint or an end, where the relation's own patterns
    are):

    ``linf``: all up at q; the X shape at q (half the answers at q moving up, half at q + 1
    moving down); one answer at q moved up while the rest sit at lo, and moved down while the
    rest sit at hi.
    ``l1``: the first coordinate moved up at q with the rest at q, and with the rest at lo; moved
    down at q with the rest at hi.
    """
    if not np.isfinite(dom.width) or dom.width <= 0 or d < 2:
        return  # a single answer has no rest to sit apart from it: the level search moves it
    u = min(1.0, dom.width)
    m = (dom.lo + dom.hi) / 2
    for q in (m - dom.width / 4, m + dom.width / 4):
        up = _fit(q, u, dom)
        one = np.zeros(d)
        one[0] = 1.0
        if rel is Neighbours.LINF:
            yield f"all up at {up:g}", np.full(d, up), np.full(d, up + u)
            h = d // 2
            yield (f"X shape at {up:g}", np.r_[np.full(h, up), np.full(d - h, up + u)],
                   np.r_[np.full(h, up + u), np.full(d - h, up)])
        if rel in (Neighbours.LINF, Neighbours.L1):
            a = np.where(one > 0, up, dom.lo)
            yield f"one up at {up:g}, rest at {dom.lo:g}", a, a + u * one
            down = _fit(q, -u, dom)
            a = np.where(one > 0, down, dom.hi)
            yield f"one down at {down:g}, rest at {dom.hi:g}", a, a - u * one
        if rel is Neighbours.L1:
            yield f"one up at {up:g}", np.full(d, up), np.full(d, up) + u * one
