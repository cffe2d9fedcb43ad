"""``replace``: |D| = |D'| = size and the multisets differ in one record (Hamming distance 1),
docs/math.md#neighbour-relations."""

from __future__ import annotations

from collections import Counter
from typing import Iterator

import numpy as np

from dpaudit.claims import Domain, Neighbours
from dpaudit.neighbours._common import (SameSize, backgrounds, coordinates, median_index,
                                        same_size_deletions, simpler, with_)
from dpaudit.neighbours.draws import draw_dataset, ints, new_record
from dpaudit.neighbours.pair import Pair


class Replace(SameSize):
    name = Neighbours.REPLACE

    def _distance_reason(self, a: np.ndarray, b: np.ndarray) -> str:
        diff = Counter(a.tolist())
        diff.subtract(Counter(b.tolist()))
        if sum(v for v in diff.values() if v > 0) > 1:
            return "more than one record differs"
        return ""

    def patterns(self, dom: Domain, n: int) -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
        """Every background with one record replaced by the opposite end, the median moved to an end."""
        lo, hi = dom.lo, dom.hi
        for label, b in backgrounds(dom, n):
            for what, idx, to in (("a lo record to hi", int(np.argmin(b)), hi),
                                  ("a hi record to lo", int(np.argmax(b)), lo),
                                  ("the median to hi", median_index(b), hi),
                                  ("the median to lo", median_index(b), lo)):
                b2 = b.copy()
                b2[idx] = to
                yield f"{label}, {what}", b, b2

    def draw(self, draw, c, r, dim, both_orders: bool) -> Pair:
        """Same size, the record at ``index`` changed (to any element or a copy of another)."""
        n = draw(ints(max(r.lo, 1), r.hi))
        data = draw_dataset(draw, c, n, dim)
        index = draw(ints(0, n - 1))
        other = data.copy()
        other[index] = new_record(draw, c, data, dim)
        return Pair(data, other, relation=self.name, index=index)

    def moves(self, a: np.ndarray, b: np.ndarray, dom: Domain, n_max: int,
              rng: np.random.Generator) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Change either side of the replaced record, or a shared record, to lo, hi or the midpoint."""
        ends = (dom.lo, dom.hi, (dom.lo + dom.hi) / 2)
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

    def deletions(self, pair: Pair, min_size: int) -> Iterator[Pair]:
        return same_size_deletions(pair, min_size, keep=pair.index)

    def value_changes(self, pair: Pair, lo: float, hi: float, integers: bool) -> Iterator[Pair]:
        """Simplify either side of the replaced record, or a shared value on both sides."""
        x, y = pair.dataset, pair.neighbour
        n = len(x)
        for k, j, a, b in coordinates(pair):
            if k == pair.index:
                for which, v in ((0, a), (1, b)):
                    for c in simpler(v, lo, hi, integers):
                        arr = (x if which == 0 else y).copy()
                        arr.reshape(n, -1)[k, j] = c
                        yield with_(pair, arr, None) if which == 0 else with_(pair, None, arr)
                continue
            if a != b:
                nx = x.copy()
                nx.reshape(n, -1)[k, j] = b
                yield with_(pair, nx, None)
            for c in simpler(a, lo, hi, integers):
                nx, ny = x.copy(), y.copy()
                nx.reshape(n, -1)[k, j] = c
                ny.reshape(n, -1)[k, j] = c
                yield with_(pair, nx, ny)
