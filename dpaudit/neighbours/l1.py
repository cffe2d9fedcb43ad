"""``l1``: D, D' ∈ [lo, hi]^size with Σ_i |D_i − D'_i| ≤ 1 (count vectors), docs/math.md#neighbour-relations."""

from __future__ import annotations

from typing import Iterator

import numpy as np

from dpaudit.claims import Domain, Neighbours
from dpaudit.neighbours._common import VectorRelation, rounding_moves
from dpaudit.neighbours.base import TOLERANCE
from dpaudit.neighbours.draws import BOOL, draw_dataset, ints, shift, signs_scaled, unit
from dpaudit.neighbours.pair import Pair


class L1(VectorRelation):
    name = Neighbours.L1

    def _distance_reason(self, a: np.ndarray, b: np.ndarray) -> str:
        d = np.abs(a - b)
        if d.sum() > 1 + TOLERANCE:
            return f"coordinates move by {d.sum():g} > 1 in total"
        return ""

    def patterns(self, dom: Domain, d: int) -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
        """One coordinate ±1 (first, middle, last) around the midpoint and at the ends; two
        coordinates ±½."""
        lo, hi, m = dom.lo, dom.hi, (dom.lo + dom.hi) / 2
        u = min(1.0, dom.width)
        where = [("first", 0), ("last", d - 1), ("middle", d // 2)]
        for bname, b, sign in (("", m, 1.0), ("", m, -1.0), (" from lo", lo, 1.0), (" from hi", hi, -1.0)):
            for wname, k in where:
                s = np.zeros(d)
                s[k] = sign * u
                yield f"{wname} {'up' if sign > 0 else 'down'}{bname}", np.full(d, b), np.full(d, b) + s
        yield from rounding_moves(dom, d, u)
        if d >= 2:
            s = np.zeros(d)
            s[:2] = u / 2
            yield "two up by half", np.full(d, m), np.full(d, m) + s
            s[1] = -u / 2
            yield "one up, one down by half", np.full(d, m), np.full(d, m) + s

    def draw(self, draw, c, r, dim, both_orders: bool) -> Pair:
        """Coordinates move by at most 1 in total (one coordinate by ±t, or two sharing t)."""
        n = draw(ints(max(r.lo, 1), r.hi))
        data = draw_dataset(draw, c, n, dim)
        flat = data.reshape(-1)
        m = flat.size
        step = np.zeros(m)
        # choice 0..m-1: coordinate j moves by ±t; choice m + j: coordinates j and j + 1 share it.
        # The share and the second sign are drawn either way (fixed-length choices).
        choice = draw(ints(0, m - 1 if (c.integers or m == 1) else 2 * m - 1))
        j = choice % m
        sign = -1.0 if draw(BOOL) else 1.0
        share, sign2 = unit(draw), (-1.0 if draw(BOOL) else 1.0)
        step[j] = sign
        if choice >= m:
            step[(j + 1) % m] = sign * (1.0 - share) * sign2
            step[j] = sign * share
        step = signs_scaled(draw, c, step)
        return Pair(data, shift(flat, step, c).reshape(data.shape), relation=self.name)

    @staticmethod
    def _difference_moves(a, b, s, j, rng):
        k = int(rng.integers(a.size))  # move the difference of coordinate j onto coordinate k
        if k != j:
            b2 = a.copy()
            b2[k] = a[k] + s[j]
            yield a, b2
