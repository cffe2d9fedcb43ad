"""Building blocks several relations share: dataset backgrounds for the structured patterns,
the refinement moves of vector relations, and the simplifier's edits of same-size pairs."""

from __future__ import annotations

import math
from typing import Any, Callable, Iterator, Optional

import numpy as np

from dpaudit.claims import Domain
from dpaudit.neighbours.base import size_reason
from dpaudit.neighbours.pair import Pair

__all__ = ["backgrounds", "splits", "median_index", "vector_moves", "with_", "same_size_deletions",
           "simpler", "fresh_value", "key_backgrounds"]


def splits(n: int) -> list[int]:
    """Split points j in 1..n−1: all of them up to n = 13, else 12 spread evenly."""
    if n < 2:
        return []
    if n <= 13:
        return list(range(1, n))
    return sorted({int(round(x)) for x in np.linspace(1, n - 1, 12)})


def median_index(x: np.ndarray) -> int:
    return int(np.argsort(x, kind="stable")[(x.size - 1) // 2])


def backgrounds(dom: Domain, n: int) -> Iterator[tuple[str, np.ndarray]]:
    """Datasets of n records that rank-based and sum-based mechanisms find hardest (patterns)."""
    # halves first: a domain as wide as the doubles (−1.7e308, 1.7e308) has hi − lo = inf, which
    # made every midpoint, step and grid below NaN (NaN records, numpy warnings on stderr)
    lo, hi, w = dom.lo, dom.hi, dom.width
    finite = bool(np.isfinite(w))
    m = (lo + hi) / 2 if finite else lo / 2 + hi / 2
    step = w * 1e-3 if finite else (hi / 2 - lo / 2) * 2e-3
    if n == 0:
        return
    yield "all lo", np.full(n, lo)
    yield "all hi", np.full(n, hi)
    yield "duplicates at the midpoint", np.full(n, m)
    if n >= 2:
        yield "cluster around the median", m + step * np.linspace(-1, 1, n)
        yield "spread", (np.linspace(lo, hi, n) if finite
                         else np.clip(m + (hi / 2 - lo / 2) * np.linspace(-1, 1, n), lo, hi))
    # j records at lo and n − j at hi, as duplicates and as tight clusters of distinct records:
    # a rank-based mechanism (quantiles, Duff) is worst where the gap between the ends sits at the
    # rank it targets (j ≈ qn), which a black box cannot know, so every split is tried
    # (about 12 spread over 1..n−1 when n is large)
    if n >= 2 and np.isfinite(w):
        # one large record among tiny ones: sums and means round the small ones away
        yield "mixed magnitudes", np.r_[[hi], np.full(n - 1, lo + w * 2.0 ** -40)]
    eta = step
    for j in splits(n):
        yield f"{j} lo, {n - j} hi", np.r_[np.full(j, lo), np.full(n - j, hi)]
        yield f"clusters of {j} near lo and {n - j} near hi", \
            np.r_[lo + eta * np.arange(j), hi - eta * np.arange(n - j)]


#: the key a mechanism may derive from a record: its integer part (``int``, ``floor``), the
#: nearest integer, its first decimal (``round(x, 1)``, ``floor(10 x)``), and the value itself
_KEYINGS = (lambda x: math.trunc(x), math.floor, round, lambda x: round(x, 1),
            lambda x: math.floor(10 * x), lambda x: x)


def _key(f, x: float) -> object:
    """``f(x)``, or x itself where the keying overflows (10·x past the largest double)."""
    try:
        return f(x)
    except (OverflowError, ValueError):
        return x


def fresh_value(dom: Domain, present: np.ndarray) -> Optional[float]:
    """A value of [lo, hi] found nowhere in ``present`` and, where the domain leaves room, in a
    key of its own under every usual keying of a record (:data:`_KEYINGS`: its integer part, the
    nearest integer, its tenth, itself), farthest from the present values among those; None when
    the domain holds no value other than the present ones (or is not finite).

    A mechanism that releases only the keys its data holds (partition selection, a histogram of
    the keys found) is tested where D' holds one record of a key that D does not (add-remove).
    Candidates: the midpoint, the quarter points, the middle of every gap between the present
    values (and the ends), and k + ½, k + ¼ for the integers k of the domain (at most 2,000 of
    them), so a key derived as ``int(x)`` or ``round(x, 1)`` is new too."""
    lo, hi = float(dom.lo), float(dom.hi)
    w = hi - lo
    if not (math.isfinite(w) and w > 0):
        return None
    have = np.unique(np.asarray(present, dtype=float).reshape(-1))
    cands = [lo + w / 2, lo + w / 4, lo + 3 * w / 4]
    edges = np.unique(np.r_[lo, have, hi])
    cands += (edges[1:] / 2 + edges[:-1] / 2).tolist()  # halves first: no overflow near DBL_MAX
    first, last = math.ceil(lo), math.floor(hi)
    if last - first <= 2000:
        cands += [k + f for k in range(first, last + 1) for f in (0.5, 0.25)]
    used = [{_key(f, float(x)) for x in have} for f in _KEYINGS]
    best, best_score = None, None
    for i, c in enumerate(cands):  # ties go to the earlier candidate (the midpoint first)
        if not (lo <= c <= hi) or c in have:
            continue
        new = sum(_key(f, c) not in u for f, u in zip(_KEYINGS, used))
        gap = float(np.min(np.abs(have - c))) if have.size else w
        score = (new, gap, -i)
        if best_score is None or score > best_score:
            best, best_score = c, score
    return best


def key_backgrounds(dom: Domain, n: int) -> Iterator[tuple[str, np.ndarray]]:
    """Datasets of n records holding a few keys, each several times, for :func:`fresh_value`:
    copies of lo and hi, copies of lo, the midpoint and hi, and n distinct values spread over the
    domain (each a key of its own, once)."""
    lo, hi = float(dom.lo), float(dom.hi)
    if n < 1 or not math.isfinite(hi - lo):
        return
    m = lo + (hi - lo) / 2
    yield "copies of lo and hi", np.r_[np.full((n + 1) // 2, lo), np.full(n // 2, hi)]
    if n >= 3:
        k = n // 3
        yield "copies of lo, the midpoint and hi", np.r_[np.full(n - 2 * k, lo), np.full(k, m),
                                                          np.full(k, hi)]
    if n >= 2:
        yield "distinct values", np.linspace(lo, hi, n)


def rounding_moves(dom: Domain, d: int, u: float) -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
    """One coordinate moved where float rounding changes (Mironov 2012, §3): from 0 to a non-zero
    value, and from just below to just above a power of two (the two sides have different ulps),
    the other coordinates at the midpoint."""
    m = (dom.lo + dom.hi) / 2
    base = np.full(d, m)
    if dom.lo <= 0.0 < dom.hi:
        a = base.copy()
        a[0] = 0.0
        b = a.copy()
        b[0] = min(u, dom.hi)
        yield "zero vs non-zero", a, b
    top = max(abs(dom.lo), abs(dom.hi))
    if top >= 1.0 and np.isfinite(top):
        p2 = 2.0 ** np.floor(np.log2(top))
        for sign in (1.0, -1.0):
            x, y = sign * (p2 - u / 2), sign * (p2 + u / 2)
            if dom.lo <= min(x, y) and max(x, y) <= dom.hi:
                a = base.copy()
                a[0], b = x, base.copy()
                b[0] = y
                yield f"either side of {sign * p2:g}", a, b
                break


def vector_moves(a: np.ndarray, b: np.ndarray, dom: Domain, rng: np.random.Generator,
                 difference_moves: Callable) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Refinement moves of a vector pair: move one coordinate of both datasets to lo, hi, the
    midpoint or by ±1, ±5 (keeping its difference); the relation's own moves of the difference
    (``difference_moves(a, b, s, j, rng)``); shift everything by ±1."""
    d = a.size
    s = b - a
    m = (dom.lo + dom.hi) / 2
    for j in rng.permutation(d)[: min(d, 6)]:
        for v in (dom.lo, dom.hi, m, a[j] + 1, a[j] - 1, a[j] + 5, a[j] - 5):
            a2, b2 = a.copy(), b.copy()
            a2[j] = v
            b2[j] = v + s[j]
            yield a2, b2
        yield from difference_moves(a, b, s, j, rng)
    for t in (-1.0, 1.0):
        yield a + t, b + t


def with_(pair: Pair, dataset=None, neighbour=None, index: Any = ..., dataset_ids: Any = ...,
          neighbour_ids: Any = ...) -> Pair:
    """``pair`` with some parts replaced."""
    return Pair(pair.dataset if dataset is None else dataset,
                pair.neighbour if neighbour is None else neighbour,
                pair.label, pair.relation,
                pair.index if index is ... else index,
                pair.dataset_ids if dataset_ids is ... else dataset_ids,
                pair.neighbour_ids if neighbour_ids is ... else neighbour_ids,
                pair.individual)


def same_size_deletions(pair: Pair, min_size: int, keep: Any = None) -> Iterator[Pair]:
    """Pairs with one shared record (not position ``keep``) removed from both same-size datasets."""
    x, y = pair.dataset, pair.neighbour
    if len(x) - 1 < max(min_size, 1):
        return
    for k in range(len(x) - 1, -1, -1):
        if keep is not None and k == keep:
            continue
        index = pair.index
        if index is not None and k < index:
            index -= 1
        yield with_(pair, np.delete(x, k, axis=0), np.delete(y, k, axis=0), index)


def _complexity(v: float) -> tuple[int, float]:
    return (len(repr(float(v))), abs(float(v)))


def simpler(v: float, lo: float, hi: float, integers: bool) -> list[float]:
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


def coordinates(pair: Pair) -> Iterator[tuple[int, int, float, float]]:
    """``(k, j, a, b)`` for every coordinate j of every record k: a on D, b on D′."""
    x, y = pair.dataset, pair.neighbour
    n = len(x)
    fx, fy = x.reshape(n, -1), y.reshape(n, -1)
    for k in range(n):
        for j in range(fx.shape[1]):
            yield k, j, float(fx[k, j]), float(fy[k, j])


class SameSize:
    """Relations between datasets of one public size: the sizes, the size checks (the relation's
    own distance test is ``_distance_reason``) and record deletions on both sides."""

    def sizes(self, n: int) -> tuple[int, int]:
        return (n, n)

    def reason(self, a: np.ndarray, b: np.ndarray, dom: Domain, n: int) -> str:
        why = size_reason(self, a, b, dom, n)
        if why:
            return why
        if a.size != b.size:
            return "datasets must have the same size"
        return self._distance_reason(a, b)

    def _distance_reason(self, a: np.ndarray, b: np.ndarray) -> str:
        raise NotImplementedError

    def deletions(self, pair: Pair, min_size: int) -> Iterator[Pair]:
        return same_size_deletions(pair, min_size)


class VectorRelation(SameSize):
    """``linf`` and ``l1``: vectors moved coordinate-wise; each relation gives its
    ``_difference_moves`` and shares the rest of the refinement."""

    def moves(self, a: np.ndarray, b: np.ndarray, dom: Domain, n_max: int,
              rng: np.random.Generator) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        return vector_moves(a, b, dom, rng, self._difference_moves)

    def value_changes(self, pair: Pair, lo: float, hi: float, integers: bool) -> Iterator[Pair]:
        return vector_value_changes(pair, lo, hi, integers)


def vector_value_changes(pair: Pair, lo: float, hi: float, integers: bool) -> Iterator[Pair]:
    """linf / l1: drop the move on one coordinate, or simplify a coordinate keeping its move."""
    x, y = pair.dataset, pair.neighbour
    n = len(x)
    for k, j, a, b in coordinates(pair):
        if a != b:
            nx = x.copy()
            nx.reshape(n, -1)[k, j] = b
            yield with_(pair, nx, None)
        delta = b - a
        for c in simpler(a, lo, hi, integers):
            c2 = c + delta
            if not (lo <= c2 <= hi) or abs(c2 - c) > abs(delta):
                continue
            nx, ny = x.copy(), y.copy()
            nx.reshape(n, -1)[k, j] = c
            ny.reshape(n, -1)[k, j] = c2
            yield with_(pair, nx, ny)
