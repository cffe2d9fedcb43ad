"""``linf``: D, D' ∈ [lo, hi]^size with max_i |D_i − D'_i| ≤ 1 (vectors of query answers), docs/math.md#neighbour-relations."""

from __future__ import annotations

from typing import Iterator

import numpy as np

from dpaudit.claims import Domain, Neighbours
from dpaudit.neighbours._common import VectorRelation, rounding_moves
from dpaudit.neighbours.base import TOLERANCE
from dpaudit.neighbours.draws import (LINF_PATTERN, draw_dataset, ints, linf_signs, shift,
                                      signs_scaled)
from dpaudit.neighbours.pair import Pair


class Linf(VectorRelation):
    name = Neighbours.LINF

    def _distance_reason(self, a: np.ndarray, b: np.ndarray) -> str:
        d = np.abs(a - b)
        if d.size and d.max() > 1 + TOLERANCE:
            return f"a coordinate moves by {d.max():g} > 1"
        return ""

    def patterns(self, dom: Domain, d: int) -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
        """One above / below, one against the rest (first and last coordinate), half up and half
        down, all up / down and the X shape around the midpoint m, and the one- and all-coordinate
        moves against a background at the domain ends."""
        lo, hi, m = dom.lo, dom.hi, (dom.lo + dom.hi) / 2
        u = min(1.0, dom.width)
        e = np.zeros(d)
        e[0] = 1.0
        last = np.zeros(d)
        last[-1] = 1.0
        h = d // 2
        shapes = [("all up", np.ones(d)), ("all down", -np.ones(d)),
                  ("one above", e), ("one below", -e),
                  ("one above, rest below", 2 * e - 1), ("one below, rest above", 1 - 2 * e)]
        if d >= 2:
            shapes += [("last above", last), ("last below", -last),
                       ("last above, rest below", 2 * last - 1), ("last below, rest above", 1 - 2 * last),
                       ("half up, half down", np.r_[np.ones(h), -np.ones(d - h)])]
        base = np.full(d, m)
        for label, s in shapes:
            yield label, base, base + u * s
        if d >= 2:
            yield ("X shape", np.r_[np.full(h, m + u), np.full(d - h, m)],
                   np.r_[np.full(h, m), np.full(d - h, m + u)])
        yield from rounding_moves(dom, d, u)
        yield "all up from lo", np.full(d, lo), np.full(d, lo + u)
        yield "all down from hi", np.full(d, hi), np.full(d, hi - u)
        if d >= 2:
            for label, s in (("one above, rest at lo", e), ("last above, rest at lo", last)):
                b = np.where(s > 0, m, lo)
                yield label, b, b + u * s
            for label, s in (("one below, rest at hi", -e), ("last below, rest at hi", -last)):
                b = np.where(s < 0, m, hi)
                yield label, b, b + u * s
            for label, s in (("last above, rest below from hi", 2 * last - 1),
                             ("last below, rest above from lo", 1 - 2 * last)):
                b = np.where(s > 0, lo, hi) if "from hi" in label else np.where(s < 0, hi, lo)
                yield label, b, b + u * s

    def draw(self, draw, c, r, dim, both_orders: bool) -> Pair:
        """Every coordinate moves by at most 1 (one, all, one against the rest, half, X, random
        signs), by a magnitude that is usually exactly 1, clipped to the domain."""
        n = draw(ints(max(r.lo, 1), r.hi))
        data = draw_dataset(draw, c, n, dim)
        flat = data.reshape(-1)
        step = signs_scaled(draw, c, linf_signs(draw, draw(LINF_PATTERN), flat.size))
        return Pair(data, shift(flat, step, c).reshape(data.shape), relation=self.name)

    @staticmethod
    def _difference_moves(a, b, s, j, rng):
        for t in (-1.0, 0.0, 1.0):  # change one coordinate's difference to −1, 0 or +1
            b2 = b.copy()
            b2[j] = a[j] + t
            yield a, b2
