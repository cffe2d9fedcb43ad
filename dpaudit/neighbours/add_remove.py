"""``add-remove``: D' = D ∪ {z} or D = D' ∪ {z} (multisets; |D Δ D'| = 1), docs/math.md#neighbour-relations.

``size`` bounds the larger dataset, so every size 0..size is allowed.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterator

import numpy as np

from dpaudit.claims import Domain, Neighbours
from dpaudit.neighbours._common import (backgrounds, fresh_value, key_backgrounds, median_index,
                                       simpler, with_)
from dpaudit.neighbours.base import size_reason
from dpaudit.neighbours.draws import draw_dataset, ints, new_record
from dpaudit.neighbours.pair import Pair


class AddRemove:
    name = Neighbours.ADD_REMOVE

    def sizes(self, n: int) -> tuple[int, int]:
        return (0, n)

    def reason(self, a: np.ndarray, b: np.ndarray, dom: Domain, n: int) -> str:
        why = size_reason(self, a, b, dom, n)
        if why:
            return why
        small, big = (a, b) if a.size < b.size else (b, a)
        if big.size != small.size + 1:
            return "sizes must differ by exactly one record"
        extra = Counter(big.tolist())
        extra.subtract(Counter(small.tolist()))
        if any(v < 0 for v in extra.values()):
            return "the smaller dataset is not contained in the larger one"
        return ""

    def patterns(self, dom: Domain, n_max: int) -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
        """Empty vs. one record (lo, hi, m); every background with an end or the median record
        removed, at the largest size and at sizes 2, 3; duplicates with one end record added;
        a few keys, each several times (or distinct values), with one record of a new key added
        (:func:`~dpaudit.neighbours._common.fresh_value`: a value found nowhere in D, in an
        integer and a tenth of its own), at the largest size and at size 4: the pairs where a
        mechanism that releases only the keys its data holds shows that key with probability
        that must stay below δ."""
        lo, hi, m = dom.lo, dom.hi, (dom.lo + dom.hi) / 2
        if n_max >= 1:
            for v, name in ((lo, "lo"), (hi, "hi"), (m, "the midpoint")):
                yield f"empty vs one record at {name}", np.empty(0), np.array([v])
        sizes = sorted({n_max, *(k for k in (2, 3) if k < n_max)})
        for n in sizes:
            for label, b in backgrounds(dom, n):
                for what, idx in (("a lo", int(np.argmin(b))), ("a hi", int(np.argmax(b))),
                                  ("the median", median_index(b))):
                    yield f"{label} (n={n}), {what} record removed", b, np.delete(b, idx)
            if n >= 1:
                b = np.full(n - 1, m)
                for v, name in ((lo, "lo"), (hi, "hi")):
                    yield f"duplicates at the midpoint (n={n}), one {name} added", b, np.r_[b, [v]]
        # after the patterns above, so that the pairs they give keep their places
        for n in sorted({n_max, *(k for k in (4,) if k < n_max)}):
            if n < 3:
                continue
            for label, b in key_backgrounds(dom, n - 1):
                z = fresh_value(dom, b)
                if z is not None:
                    yield (f"{label} (n={n}), one record of a new key ({z:g}) added", b,
                           np.r_[b, [z]])

    def draw(self, draw, c, r, dim, both_orders: bool) -> Pair:
        """The neighbour has one record more or less, inserted at / removed from a drawn position
        (``index``, in the larger dataset); the added record is any element or a copy."""
        big = draw(ints(max(r.lo + 1, 1), r.hi))
        small = draw_dataset(draw, c, big - 1, dim)
        # one choice for the position and the order: big + p puts the smaller dataset first
        where = draw(ints(0, 2 * big - 1 if both_orders else big - 1))
        index = where % big
        larger = np.insert(small, index, new_record(draw, c, small, dim), axis=0)
        if where >= big:
            return Pair(small, larger, relation=self.name, index=index)
        return Pair(larger, small, relation=self.name, index=index)

    def moves(self, a: np.ndarray, b: np.ndarray, dom: Domain, n_max: int,
              rng: np.random.Generator) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Change the extra record, or a shared record, to lo, hi or the midpoint; drop a shared
        record; add a shared record at lo, hi or the midpoint (up to the size allowed)."""
        ends = (dom.lo, dom.hi, (dom.lo + dom.hi) / 2)
        big, small, flip = (a, b, False) if a.size > b.size else (b, a, True)
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

    def deletions(self, pair: Pair, min_size: int) -> Iterator[Pair]:
        """One shared record removed from both datasets (largest positions first)."""
        x, y = pair.dataset, pair.neighbour
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
                yield with_(pair, nb, ns, q, nbi, nsi)
            else:
                yield with_(pair, ns, nb, q, nsi, nbi)

    def value_changes(self, pair: Pair, lo: float, hi: float, integers: bool) -> Iterator[Pair]:
        """One value made simpler in the larger dataset (and in the smaller one when shared)."""
        x, y = pair.dataset, pair.neighbour
        x_big = len(x) > len(y)
        big, small = (x, y) if x_big else (y, x)
        p = pair.index
        for k in range(len(big)):
            row = big[k].reshape(-1)
            for j, v in enumerate(row):
                for c in simpler(float(v), lo, hi, integers):
                    nb = big.copy()
                    nb.reshape(len(big), -1)[k, j] = c
                    ns = small
                    if k != p:
                        ns = small.copy()
                        ns.reshape(len(small), -1)[k if k < p else k - 1, j] = c
                    yield with_(pair, nb, ns) if x_big else with_(pair, ns, nb)
