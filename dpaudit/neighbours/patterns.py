"""Structured candidate pairs per neighbour relation: the first pairs the auditor scores.

Violations of DP usually show on a few extreme pairs, so the auditor starts from these before any
search (StatDP, Ding et al. 2018, §5.1 "generate_databases"; DP-Sniper's PatternGenerator):

``linf`` (vectors of d answers, each moved by at most 1; m is the domain's midpoint)
    one above, one below, one above and the rest below, one below and the rest above (with the
    single coordinate first and last), half up and half down, all up, all down, and the X shape
    (D = (m+1, …, m, …), D' = (m, …, m+1, …)); around m, and the one-coordinate and all-coordinate
    moves also against a background at the domain ends (lo or hi).
``l1`` (count vectors moved by at most 1 in total)
    one coordinate ±1 (first, middle, last), two coordinates ±½, around m and at the ends.
``add-remove`` (size = the largest dataset allowed)
    empty vs. one record (lo, hi, m); records at the domain ends with one end record removed;
    all lo or all hi with one removed; j records at lo and n − j at hi for every split j (as
    duplicates and as tight clusters of distinct records); a cluster around the median with the
    median or an end record removed; duplicates; at the largest size and at sizes 1..3.
``replace``
    the same backgrounds with one record replaced by the opposite end, the median moved to an end.

Every pattern comes in both orders (D, D') and (D', D) unless asked otherwise; duplicates are
dropped.
"""

from __future__ import annotations

from typing import Any, Iterator, Union

import numpy as np

from dpaudit.claims import Domain, Neighbours, check_size
from dpaudit.neighbours.relations import Pair, are_neighbours

__all__ = ["structured_pairs"]


def _linf(dom: Domain, d: int) -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
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
        yield "X shape", np.r_[np.full(h, m + u), np.full(d - h, m)], np.r_[np.full(h, m), np.full(d - h, m + u)]
    # backgrounds at the domain ends
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


def _l1(dom: Domain, d: int) -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
    lo, hi, m = dom.lo, dom.hi, (dom.lo + dom.hi) / 2
    u = min(1.0, dom.width)
    where = [("first", 0), ("last", d - 1), ("middle", d // 2)]
    for bname, b, sign in (("", m, 1.0), ("", m, -1.0), (" from lo", lo, 1.0), (" from hi", hi, -1.0)):
        for wname, k in where:
            s = np.zeros(d)
            s[k] = sign * u
            yield f"{wname} {'up' if sign > 0 else 'down'}{bname}", np.full(d, b), np.full(d, b) + s
    if d >= 2:
        s = np.zeros(d)
        s[:2] = u / 2
        yield "two up by half", np.full(d, m), np.full(d, m) + s
        s[1] = -u / 2
        yield "one up, one down by half", np.full(d, m), np.full(d, m) + s


def _backgrounds(dom: Domain, n: int) -> Iterator[tuple[str, np.ndarray]]:
    lo, hi, m = dom.lo, dom.hi, (dom.lo + dom.hi) / 2
    w = dom.width
    if n == 0:
        return
    yield "all lo", np.full(n, lo)
    yield "all hi", np.full(n, hi)
    yield "duplicates at the midpoint", np.full(n, m)
    if n >= 2:
        yield "cluster around the median", m + w * 1e-3 * np.linspace(-1, 1, n)
        yield "spread", np.linspace(lo, hi, n)
    # j records at lo and n − j at hi, as duplicates and as tight clusters of distinct records:
    # a rank-based mechanism (quantiles, Duff) is worst where the gap between the ends sits at the
    # rank it targets (j ≈ qn), which a black box cannot know, so every split is tried
    # (about 12 spread over 1..n−1 when n is large)
    eta = w * 1e-3
    for j in _splits(n):
        yield f"{j} lo, {n - j} hi", np.r_[np.full(j, lo), np.full(n - j, hi)]
        yield f"clusters of {j} near lo and {n - j} near hi", \
            np.r_[lo + eta * np.arange(j), hi - eta * np.arange(n - j)]


def _splits(n: int) -> list[int]:
    """Split points j in 1..n−1: all of them up to n = 13, else 12 spread evenly."""
    if n < 2:
        return []
    if n <= 13:
        return list(range(1, n))
    return sorted({int(round(x)) for x in np.linspace(1, n - 1, 12)})


def _median_index(x: np.ndarray) -> int:
    return int(np.argsort(x, kind="stable")[(x.size - 1) // 2])


def _add_remove(dom: Domain, n_max: int) -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
    lo, hi, m = dom.lo, dom.hi, (dom.lo + dom.hi) / 2
    if n_max >= 1:
        for v, name in ((lo, "lo"), (hi, "hi"), (m, "the midpoint")):
            yield f"empty vs one record at {name}", np.empty(0), np.array([v])
    sizes = sorted({n_max, *(k for k in (2, 3) if k < n_max)})
    for n in sizes:
        for label, b in _backgrounds(dom, n):
            for what, idx in (("a lo", int(np.argmin(b))), ("a hi", int(np.argmax(b))),
                              ("the median", _median_index(b))):
                yield f"{label} (n={n}), {what} record removed", b, np.delete(b, idx)
        if n >= 1:
            b = np.full(n - 1, m)
            for v, name in ((lo, "lo"), (hi, "hi")):
                yield f"duplicates at the midpoint (n={n}), one {name} added", b, np.r_[b, [v]]


def _replace(dom: Domain, n: int) -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
    lo, hi = dom.lo, dom.hi
    for label, b in _backgrounds(dom, n):
        for what, idx, to in (("a lo record to hi", int(np.argmin(b)), hi),
                              ("a hi record to lo", int(np.argmax(b)), lo),
                              ("the median to hi", _median_index(b), hi),
                              ("the median to lo", _median_index(b), lo)):
            b2 = b.copy()
            b2[idx] = to
            yield f"{label}, {what}", b, b2


def structured_pairs(relation: Union[str, Neighbours], domain: Any, size: int, *,
                     both_orders: bool = True) -> list[Pair]:
    """The structured candidate pairs of ``relation`` (module docstring), deduplicated, every one a
    valid neighbouring pair; with ``both_orders`` each pattern also comes as (D', D) (an auditor
    that tests both directions of every event needs only one order)."""
    rel, dom, n = Neighbours.parse(relation), Domain.parse(domain), check_size(size)
    gen = {Neighbours.LINF: _linf, Neighbours.L1: _l1, Neighbours.ADD_REMOVE: _add_remove,
           Neighbours.REPLACE: _replace}[rel]
    out: list[Pair] = []
    seen: set = set()
    if n == 0 and rel is not Neighbours.ADD_REMOVE:
        return out
    for label, a, b in gen(dom, n):
        a = np.clip(a, dom.lo, dom.hi)
        b = np.clip(b, dom.lo, dom.hi)
        for p in (Pair.of(a, b, label), Pair.of(b, a, label + " (swapped)")):
            if not both_orders and (p.neighbour, p.dataset) in seen:
                continue
            if p.key in seen or p.dataset == p.neighbour:
                continue
            if not are_neighbours(rel, p.dataset, p.neighbour, dom, n):
                continue
            seen.add(p.key)
            out.append(p)
    return out
