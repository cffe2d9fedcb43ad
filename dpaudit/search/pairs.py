"""The one neighbouring-pair search the engines share: candidate pairs for a relation, domain and
size; hypothesis-driven draws steered by the caller's objective; shrinking a counterexample to the
fewest records.

Each engine keeps its own objective and calls this module for the pairs: the sensitivity search
(:mod:`dpaudit.sensitivity.search`, the gap ‖f(D) − f(D′)‖ against Δ), the replay's
(:mod:`dpaudit.replay.search`, the recorded divergence and the accounting excess), the
stability check's (:mod:`dpaudit.stability.pairs`, d_out against map(d_in)) and the sampled
core's, which the sampled audit and the curve audit share (:mod:`dpaudit.auditing.core`: the
float-rounding patterns and corners, ``structured=False``, scored after its own search on a
budget of their own; a projected ε_LB or curve gap on a small sample). Only the sensitivity
search, the replay's and the stability check's shrink what they find (:func:`shrink`): a sampled
audit's pair is chosen on samples and would need fresh samples for every step of a shrink.

:func:`candidates` yields, in order: a non-finite record first (when asked), the relation's first
structured pattern (:func:`dpaudit.neighbours.patterns.structured_pairs`), the float-rounding
patterns (:func:`rounding_pairs`), then the other structured patterns and the numeric corners
(:func:`corners`) taken in turn, and the other non-finite records last. A caller that scores only
a prefix (a budget) so sees corners and patterns alike.

The **numeric corners** (:func:`corner_values`, :func:`corners`): records where an intermediate
value crosses a rounding boundary (a sum, a mean's sum, a sum of squares or a count times a bound
reaching 2^50 or 2^53, where adding 1 is lost or a halfway case rounds to even; the floats on both
sides of 2^50 and 2^53), values at and just past float32's and float64's largest finite values and
the values whose sum or sum of squares over n records overflows there, the smallest normals and
subnormals of both, ties exactly at a threshold (the midpoint and the floats either side of it,
halves that round to even), at the largest size and the next one down (an odd and an even size),
and one record alone. Only values inside the claimed domain are used; NaN and ±inf only when the
caller asks (``nonfinite``: a mechanism that clamps its inputs claims privacy for any input, since
:class:`~dpaudit.claims.Domain` is always finite). Every pair yielded is a valid neighbouring pair
under the relation.

:func:`shrink` deletes records both datasets share, then makes values simpler (the relation's own
``deletions`` and ``value_changes``, as delta debugging does: Zeller and Hildebrandt 2002),
keeping each change while the caller's ``still_fails`` holds. :func:`run_targeted` runs
hypothesis over a strategy of pairs (:func:`drawn`: the relation's strategy, records in the order
drawn, sorted or reversed) with ``hypothesis.target`` steering left to the caller's probe.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Any, Callable, Iterator, Optional, Sequence, Union

import numpy as np

from dpaudit.claims import Domain, Neighbours
from dpaudit.neighbours.pair import Pair
from dpaudit.neighbours.registry import relation as lookup

__all__ = ["candidates", "corners", "corner_values", "rounding_pairs", "nonfinite_pairs",
           "interior_pairs", "interior_sizes", "grid_pairs", "drawn_pairs", "typical_pairs", "in_turn",
           "shrink", "drawn", "ordered", "run_targeted", "BOUNDARIES"]

#: the rounding boundaries an intermediate may cross: 2^53 (the last integer step of 1 in a
#: double), 2^50 (its quarter: three more doublings of a sum cross 2^53)
BOUNDARIES = (2.0 ** 50, 2.0 ** 53)
_F64_MAX = float(np.finfo(np.float64).max)
_F32_MAX = float(np.finfo(np.float32).max)
#: the smallest double that rounds to inf in float32 (halfway between its max and 2^128)
_F32_OVERFLOW = (2.0 - 2.0 ** -24) * 2.0 ** 127
_TINY = (("float64 smallest normal", float(np.finfo(np.float64).tiny)),
         ("float64 smallest subnormal", 5e-324),
         ("float32 smallest normal", float(np.finfo(np.float32).tiny)),
         ("float32 smallest subnormal", float(np.nextafter(np.float32(0), np.float32(1)))))
_PAST = 1.0 + 2.0 ** -20  # a relative step past an overflow threshold, far above rounding


def _up(x: float) -> float:
    return float(np.nextafter(x, np.inf))


def _down(x: float) -> float:
    return float(np.nextafter(x, -np.inf))


def _size_values(n: int) -> Iterator[tuple[str, float]]:
    """Values at which n records make an intermediate cross a boundary or overflow."""
    if n < 1:
        return
    records = "1 record" if n == 1 else f"{n} records"
    for t in BOUNDARIES:
        k = int(math.log2(t))
        yield f"a sum of {records} just past 2^{k}", _up(t / n)
        yield f"a sum of squares of {records} just past 2^{k}", _up(math.sqrt(t / n))
    for name, top in (("float64", _F64_MAX), ("float32", _F32_MAX)):
        if n > 1:
            yield f"a sum of {records} past the {name} maximum", top / n * _PAST
        yield f"a sum of squares of {records} past the {name} maximum", math.sqrt(top / n) * _PAST


def _fixed_values(dom: Domain) -> Iterator[tuple[str, float]]:
    for t in BOUNDARIES:
        k = int(math.log2(t))
        yield f"2^{k}", t
        yield f"2^{k} - 1", t - 1.0
        yield f"the float above 2^{k}", _up(t)
        yield f"the float below 2^{k}", _down(t)
        yield f"2^{k} + 1 (rounds to even)", t + 1.0
    yield "the float64 maximum", _F64_MAX
    yield "the float below the float64 maximum", _down(_F64_MAX)
    yield "half the float64 maximum, just past", _up(_F64_MAX / 2)
    yield "the float32 maximum", _F32_MAX
    yield "just past the float32 maximum (inf in float32)", _F32_OVERFLOW
    yield from _TINY
    mid = 0.5 * dom.lo + 0.5 * dom.hi
    yield "a tie at the midpoint", mid
    yield "the float above the midpoint", _up(mid)
    yield "the float below the midpoint", _down(mid)
    for half in (0.5, 1.5, 2.5):
        yield f"a tie at {half} (rounds to even)", half


def corner_values(domain: Any, sizes: Any = (), *, integers: bool = False) -> list[tuple[str, float]]:
    """The numeric corners inside ``domain`` (module docstring), labelled, each value once: the
    size-free corners, then those of each size in ``sizes``; both signs where the domain holds
    them; integer values only with ``integers``."""
    dom = Domain.parse(domain)
    out: list[tuple[str, float]] = []
    seen: set = set()
    sources = itertools.chain(_fixed_values(dom), *(_size_values(int(n)) for n in sizes))
    for label, v in sources:
        for sign, x in (("", v), ("minus ", -v)):
            if not (math.isfinite(x) and dom.lo <= x <= dom.hi) or x in seen:
                continue
            if integers and not float(x).is_integer():
                continue
            seen.add(x)
            out.append((sign + label, float(x)))
    return out


def _partner(dom: Domain, v: float) -> float:
    """The record a replaced record at ``v`` becomes: the farther end of the domain."""
    return dom.lo if abs(v - dom.lo) >= abs(v - dom.hi) else dom.hi


def _unit(dom: Domain) -> float:
    """The record whose addition a large sum loses: 1 when inside, else the end nearest 1."""
    return min(max(1.0, dom.lo), dom.hi)


def _pairs_at(rel: Neighbours, dom: Domain, label: str, v: float, n: int) -> Iterator[Pair]:
    """The pairs of one corner value ``v`` at size ``n`` under ``rel``."""
    bg = np.full(n, v)
    if rel is Neighbours.ADD_REMOVE:
        yield Pair(bg, bg[:-1], f"{label}: {n} records, one removed", rel, n - 1)
        if n > 1:
            with_unit = np.r_[bg[:-1], _unit(dom)]
            yield Pair(with_unit, bg[:-1], f"{label}: {n - 1} records and one added", rel, n - 1)
        return
    if rel is Neighbours.REPLACE:
        for w, what in ((_partner(dom, v), "to the far end"), (_up(v), "one float up"),
                        (_down(v), "one float down")):
            other = bg.copy()
            other[-1] = w
            yield Pair(bg, other, f"{label}: {n} records, one {what}", rel, n - 1)
        return
    for step in (1.0, -1.0, 0.5, -0.5):  # linf and l1: one coordinate, then all of them
        w = _moved(v, step)
        one, every = bg.copy(), np.full(n, w)
        one[-1] = w
        yield Pair(bg, one, f"{label}: {n} answers, one moved by {step:+g}", rel)
        yield Pair(bg, every, f"{label}: {n} answers, all moved by {step:+g}", rel)


def _moved(v: float, step: float) -> float:
    """``v + step`` rounded toward ``v`` where float64 rounding carried it farther than ``step``:
    a pair is a neighbouring pair by its exact distance (0.9999999999999999 + 1 rounds to 2.0, an
    exact move of 1 + 2⁻⁵³, which an integer mechanism's ⌊x⌋ turns into a move of 2)."""
    w = v + step
    if math.isfinite(w) and abs(Fraction(w) - Fraction(v)) > abs(Fraction(step)):
        w = float(np.nextafter(w, v))
    return w


def _sizes_of(rel: Neighbours, size: int, sizes: Optional[tuple[int, int]]) -> list[int]:
    """The largest size, the one below it (the other parity) and a single record."""
    lo, hi = sizes if sizes is not None else (0, size)
    if rel is not Neighbours.ADD_REMOVE and sizes is None:
        return [size] if size >= 1 else []
    least = lo + 1 if rel is Neighbours.ADD_REMOVE else max(lo, 1)
    return [n for n in dict.fromkeys((hi, hi - 1, 1)) if least <= n <= hi]


def _checker(rel: Neighbours, dom: Domain, size: int,
             sizes: Optional[tuple[int, int]]) -> Callable[[Pair], bool]:
    """Whether a pair is a valid neighbouring pair: at the declared ``size``, or with both sizes in
    ``sizes`` (a range, as the sensitivity search states them)."""
    from dpaudit.neighbours.relations import are_neighbours

    def valid(p: Pair) -> bool:
        if p.identical:
            return False
        if sizes is None:
            return are_neighbours(rel, p.dataset, p.neighbour, dom, size)
        n = max(p.sizes)
        return all(sizes[0] <= k <= sizes[1] for k in p.sizes) \
            and are_neighbours(rel, p.dataset, p.neighbour, dom, n)

    return valid


def _mixed(rel: Neighbours, dom: Domain, values: list[float], n: int, seed: int) -> Iterator[Pair]:
    """n corner values of unlike magnitudes together, in an order drawn from ``seed`` (a float
    sum's rounding depends on which records meet which partial sums), with the last one removed,
    moved to the far end or moved by 1."""
    if n < 2 or len(values) < 2:
        return
    rng = np.random.default_rng(np.random.SeedSequence([seed, n]))
    bg = rng.choice(np.asarray(values, dtype=float), size=n, replace=len(values) < n)
    label = f"mixed corner values, {n} records in a drawn order"
    if rel is Neighbours.ADD_REMOVE:
        yield Pair(bg, bg[:-1], label + ", one removed", rel, n - 1)
        return
    other = bg.copy()
    other[-1] = _partner(dom, bg[-1]) if rel is Neighbours.REPLACE else bg[-1] + 1.0
    yield Pair(bg, other, label + ", one moved", rel, n - 1 if rel is Neighbours.REPLACE else None)


def corners(relation: Any, domain: Any, size: int, seed: int = 0, *,
            sizes: Optional[tuple[int, int]] = None, integers: bool = False) -> list[Pair]:
    """The numeric-corner pairs of ``relation`` (module docstring): each kind of pair (one record
    removed, one added; moved to the far end, by one float; moved by ±1, ±½) at the largest size,
    the next size down and one record, every corner value in turn (so a prefix of the list already
    holds every value); then, at each size, the corner values mixed in an order drawn from
    ``seed``. Every pair is valid (at ``size``, or with both sizes in ``sizes``)."""
    rel, dom = Neighbours.parse(relation), Domain.parse(domain)
    ns = _sizes_of(rel, size, sizes)
    valid = _checker(rel, dom, size, sizes)
    out, seen = [], set()
    values = corner_values(dom, ns, integers=integers)
    ranked: dict = {}  # (kind of pair, size) -> its pairs, one per value: every value early
    for label, v in values:
        for j, n in enumerate(ns):
            for k, p in enumerate(_pairs_at(rel, dom, label, v, n)):
                ranked.setdefault((k, j), []).append(p)
    every = itertools.chain.from_iterable(ranked[key] for key in sorted(ranked))
    mixed = (p for n in ns for p in _mixed(rel, dom, [v for _, v in values], n, seed))
    for p in itertools.chain(every, mixed):
        if p.key not in seen and valid(p):
            seen.add(p.key)
            out.append(p)
    return out


#: the most interior sizes :func:`interior_pairs` visits
INTERIOR_SIZES = 8


def interior_sizes(size: int) -> list[int]:
    """The add-remove sizes between the ends that the patterns and corners visit (0 to 4 records,
    the largest size and the one below it): every one when they are at most
    :data:`INTERIOR_SIZES`, else half and three quarters of ``size``, a quarter, the powers of
    two from 8, then sizes evenly spaced between, that many in all."""
    if size - 6 <= INTERIOR_SIZES:
        return list(range(5, size - 1))
    ends = {0, 1, 2, 3, 4, size - 1, size}
    even = [round(5 + i * (size - 7) / (INTERIOR_SIZES - 1)) for i in range(INTERIOR_SIZES)]
    ladder = [size // 2, 3 * size // 4, size // 4,
              *(2 ** k for k in range(3, max(3, size.bit_length()))), *even]
    inside = [k for k in dict.fromkeys(ladder) if k not in ends and 4 < k < size - 1]
    return inside[:INTERIOR_SIZES]


def interior_pairs(relation: Any, domain: Any, size: int) -> list[Pair]:
    """Add-remove pairs at the sizes between the ends (:func:`interior_sizes`): k − 1 records at
    the domain's midpoint, with one record at ``lo`` or at ``hi`` added. A mechanism that behaves
    otherwise at the sizes most datasets have (a path for "typical" sizes that forgets its
    noise) is invisible at the ends, which is where every other pattern and corner lies. None
    for the other relations: their datasets all have the claimed size."""
    rel, dom = Neighbours.parse(relation), Domain.parse(domain)
    if rel is not Neighbours.ADD_REMOVE:
        return []
    mid = 0.5 * (dom.lo + dom.hi)
    out = []
    for k in interior_sizes(int(size)):
        bg = np.full(k - 1, mid)
        for v, name in ((dom.hi, "hi"), (dom.lo, "lo")):
            if v != mid:
                out.append(Pair(np.r_[bg, [v]], bg, f"interior size (n={k}): duplicates at the "
                                f"midpoint, one {name} record added", rel, k - 1))
    return out


#: the fractions of the domain where hand-written bin edges and thresholds lie (the midpoint, 1/2,
#: is a pattern's already)
GRID = (0.1, 0.2, 0.25, 0.3, 1 / 3, 0.4, 0.6, 2 / 3, 0.7, 0.75, 0.8, 0.9)
#: the pairs of drawn datasets :func:`typical_pairs` adds
TYPICAL_DRAWN = 8


def grid_pairs(relation: Any, domain: Any, size: int) -> list[Pair]:
    """One record at each :data:`GRID` fraction of the domain: added to the empty dataset
    (add-remove), or put in place of the last of ``size`` records at the midpoint (replace). A
    bin table whose edges overlap, or closed intervals that count an edge twice, move two counts
    for a record there only. None for ``linf`` and ``l1`` (the level search moves answers)."""
    rel, dom = Neighbours.parse(relation), Domain.parse(domain)
    mid = 0.5 * (dom.lo + dom.hi)
    out = []
    for f in GRID:
        v = float(dom.lo + f * (dom.hi - dom.lo))
        if rel is Neighbours.ADD_REMOVE and size >= 1:
            out.append(Pair(np.empty(0), np.array([v]), f"empty vs one record at {v:g}", rel, 0))
        elif rel is Neighbours.REPLACE and size >= 1:
            bg = np.full(size, mid)
            other = bg.copy()
            other[-1] = v
            out.append(Pair(bg, other, f"{size} records at the midpoint, one changed to {v:g}",
                            rel, size - 1))
    return out


def drawn_pairs(relation: Any, domain: Any, size: int, seed: int) -> list[Pair]:
    """:data:`TYPICAL_DRAWN` pairs of datasets drawn from ``seed``: k records uniform in the domain
    (k uniform over the sizes the relation allows, 1 to ``size``), with one more uniform record
    added (add-remove) or the last one drawn again (replace): datasets as a mechanism mostly
    meets them, at no value or size the patterns and corners prefer. None for ``linf`` and
    ``l1``."""
    rel, dom = Neighbours.parse(relation), Domain.parse(domain)
    if rel not in (Neighbours.ADD_REMOVE, Neighbours.REPLACE) or size < 1:
        return []
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 0x7E1CA1]))
    out = []
    for _ in range(TYPICAL_DRAWN):
        k = int(rng.integers(1, size + 1))
        if rel is Neighbours.ADD_REMOVE:
            small = rng.uniform(dom.lo, dom.hi, k - 1)
            out.append(Pair(np.r_[small, rng.uniform(dom.lo, dom.hi, 1)], small,
                            f"drawn records (n={k}), one removed", rel, k - 1))
        else:
            bg = rng.uniform(dom.lo, dom.hi, size)
            other = bg.copy()
            other[-1] = rng.uniform(dom.lo, dom.hi)
            out.append(Pair(bg, other, f"drawn records (n={size}), the last drawn again", rel,
                            size - 1))
    return out


def typical_pairs(relation: Any, domain: Any, size: int, seed: int) -> list[Pair]:
    """The pairs of datasets as a mechanism mostly meets them, which the patterns and corners
    (the domain's ends and midpoint, float corners; 0 to 4 records and the largest sizes) leave
    out, the three kinds taken in turn: the interior sizes (:func:`interior_pairs`), the grid
    values (:func:`grid_pairs`) and drawn datasets (:func:`drawn_pairs`). Fixed by the claim and
    ``seed``; every pair valid under the relation at ``size``."""
    rel, dom = Neighbours.parse(relation), Domain.parse(domain)
    valid = _checker(rel, dom, size, None)
    kinds = (interior_pairs(rel, dom, size), grid_pairs(rel, dom, size),
             drawn_pairs(rel, dom, size, seed))
    return in_turn(*([p for p in kind if valid(p)] for kind in kinds))


def in_turn(*lists: Sequence[Pair]) -> list[Pair]:
    """The pairs of ``lists`` taken in turn (the first of each, then the second of each, …), each
    pair once: a list loses the pairs an earlier list or its own earlier place holds before the
    turns are taken, so a short prefix holds some of every list."""
    seen: set = set()
    kept = []
    for pairs in lists:
        mine = []
        for p in pairs:
            if p.key not in seen:
                seen.add(p.key)
                mine.append(p)
        kept.append(mine)
    return [p for turn in itertools.zip_longest(*kept) for p in turn if p is not None]


def nonfinite_pairs(relation: Any, domain: Any, size: int) -> list[Pair]:
    """Pairs that add (add-remove) or put (replace, linf, l1) a NaN, +inf or −inf record."""
    rel, dom = Neighbours.parse(relation), Domain.parse(domain)
    lo, hi = dom.lo, dom.hi
    mid = 0.5 * (lo + hi)
    n = max(size, 2)
    base = np.array([lo, hi, mid][: max(1, min(3, n - 1))] if rel is Neighbours.ADD_REMOVE
                    else ([mid] * n), dtype=float)
    out = []
    for bad in (np.nan, np.inf, -np.inf):
        if rel is Neighbours.ADD_REMOVE:
            out.append(Pair(base, np.append(base, bad), f"a {bad} record added", rel))
        else:
            other = base.copy()
            other[0] = bad
            out.append(Pair(base, other, f"one record changed to {bad}", rel))
    return out


def _ulp(x: float, carrier: str) -> float:
    """The unit in the last place of |x| in the carrier's float type (f32 or f64)."""
    if carrier == "f32":
        v = np.float32(abs(x))
        return float(np.nextafter(v, np.float32(np.inf)) - v)
    return math.ulp(abs(x))


def straddle(big: float, other: float, n: int, carrier: str = "f64") -> Optional[tuple[int, float]]:
    """``(m, t)`` for the binade-straddling pattern: after the changed record and m records at
    ``big``, the partial sum of D has reached a power of two 2^k that the partial sum of D′ (the
    changed record at ``other``) has not, and records t just above half of D's unit in the last
    place round up by a whole unit on D and by almost nothing on D′, each step. Chosen to
    maximise (steps left) × ulp(2^k) / 2; None when no m crosses a power of two."""
    best = None
    for m in range(1, n - 1):
        on_d, on_dp = abs((m + 1) * big), abs(other + m * big)
        if not (math.isfinite(on_d) and on_d > 0):
            break
        power = 2.0 ** math.floor(math.log2(on_d))
        if not on_dp < power <= on_d:
            continue
        t = math.copysign(_ulp(power, carrier) / 2 * (1 + 2 ** -20), big)
        score = (n - m - 1) * _ulp(power, carrier) / 2
        if best is None or score > best[0]:
            best = (score, m, t)
    return None if best is None else (best[1], best[2])


def rounding_pairs(relation: Any, domain: Any, size: int, carrier: str = "f64") -> list[Pair]:
    """Float-rounding patterns in the manner of Casacuberta et al. (2022, Section 4), for float
    records under add-remove or replace (n records, domain [lo, hi]; ``big`` the end of largest
    magnitude, ``other`` the other end):

    * one record at ``big`` and n − 1 records t just above half a unit in the last place of it,
      against that record at ``other`` (replace) or removed (add-remove), in both orders: every
      addition of t to a partial sum near ``big`` rounds up by a whole unit on D, not on D′;
    * the same after m records at ``big``, m chosen so that D's partial sum has crossed a power of
      two that D′'s has not (:func:`straddle`): the units then differ by a factor 2;
    * n records at ``big`` against one moved to ``other`` (or removed), and alternating ends when
      the domain holds both signs (cancellation)."""
    rel, dom = Neighbours.parse(relation), Domain.parse(domain)
    if rel not in (Neighbours.REPLACE, Neighbours.ADD_REMOVE) or size < 2:
        return []
    from dpaudit.neighbours.relations import are_neighbours

    lo, hi = dom.lo, dom.hi
    big = hi if abs(hi) >= abs(lo) else lo
    other = lo if big == hi else hi
    n = size
    replace = rel is Neighbours.REPLACE
    out: list[Pair] = []

    def add(head: list, rest: list, label: str) -> None:
        first = [big] + head + rest
        second = ([other] if replace else []) + head + rest
        out.append(Pair(first, second, label, rel, 0))
        last = len(head) + len(rest)
        out.append(Pair(head + rest + [big], head + rest + ([other] if replace else []), label,
                        rel, last))

    half = _ulp(big, carrier) / 2
    for t in (math.copysign(half * (1 + 2 ** -20), big), math.copysign(half * 1.5, big)):
        if lo <= t <= hi:
            add([], [t] * (n - 1), "float rounding: ½ ulp records after an extreme one")
    found = straddle(big, other if replace else 0.0, n, carrier)
    if found is not None:
        m, t = found
        if lo <= t <= hi:
            add([big] * m, [t] * (n - m - 1), "float rounding: partial sums straddling a power of two")
    add([big] * (n - 1), [], "float rounding: n records at the far end")
    if lo < 0 < hi:  # mixed signs: cancellation
        alt = [hi if k % 2 == 0 else lo for k in range(n - 1)]
        add(alt, [], "float rounding: alternating ends")
    return [p for p in out if are_neighbours(rel, p.dataset, p.neighbour, dom, size)]


def candidates(relation: Any, domain: Any, size: int, seed: int = 0, *, integers: bool = False,
               nonfinite: bool = False, floats: bool = True, carrier: str = "f64",
               structured: bool = True,
               sizes: Optional[tuple[int, int]] = None) -> Iterator[Pair]:
    """The candidate pairs of the module docstring, each once, in order. ``floats=False`` (integer
    records) leaves out the float-rounding patterns; ``structured=False`` the relation's
    structured patterns (a search that draws them itself); ``sizes`` states the sizes as a range
    (both datasets' sizes in it) instead of the relation's sizes at ``size``. ``seed`` draws the
    order of the mixed corner values (:func:`corners`); the rest is fixed."""
    from dpaudit.neighbours.patterns import structured_pairs

    rel = Neighbours.parse(relation)
    pats = structured_pairs(rel, domain, size, both_orders=False) if structured else []
    rounding = rounding_pairs(rel, domain, size, carrier) if floats and not integers else []
    bad = nonfinite_pairs(rel, domain, size) if nonfinite else []
    corner = corners(rel, domain, size, seed, sizes=sizes, integers=integers)
    turns = itertools.chain.from_iterable(itertools.zip_longest(pats[1:], corner))
    seen: set = set()
    for p in itertools.chain(bad[:1], pats[:1], rounding, turns, bad[1:]):
        if p is not None and p.key not in seen:
            seen.add(p.key)
            yield p


# --------------------------------------------------------------------------- shrinking

def _same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a == b) | (np.isnan(a) & np.isnan(b))


def _indexed(pair: Pair, rel: Neighbours) -> Pair:
    """``pair`` with its relation, and the position its relation's edits need when it has none
    (a pattern's pairs carry neither): for add-remove the extra record's in the larger dataset,
    for replace the changed record's."""
    index = pair.index
    a, b = pair.dataset, pair.neighbour
    if index is None and a.ndim == 1 and rel in (Neighbours.ADD_REMOVE, Neighbours.REPLACE):
        if rel is Neighbours.REPLACE and len(a) == len(b):
            differ = np.flatnonzero(~_same(a, b))
            index = int(differ[0]) if differ.size else None
        elif abs(len(a) - len(b)) == 1:
            big, small = (a, b) if len(a) > len(b) else (b, a)
            differ = np.flatnonzero(~_same(big[:-1], small))
            index = int(differ[0]) if differ.size else len(big) - 1
    if index == pair.index and pair.relation is rel:
        return pair
    return Pair(a, b, pair.label, rel, index, pair.dataset_ids, pair.neighbour_ids, pair.individual)


def shrink(pair: Pair, still_fails: Callable[[Pair], bool], *, domain: Any, min_size: int = 0,
           integers: bool = False, max_evals: int = 200, stop: tuple = (),
           relation: Any = None) -> tuple[Pair, int]:
    """The pair with the fewest records, then the simplest values, reachable greedily from
    ``pair`` while ``still_fails`` holds (module docstring), and the number of pairs tried. Each
    step removes a record or makes a value simpler, so the pass ends; it also ends after
    ``max_evals`` tries or when ``still_fails`` raises one of ``stop`` (a spent budget), keeping
    the last pair that failed. ``still_fails(pair)`` should be true on entry."""
    rule = lookup(relation if relation is not None else pair.relation)
    dom = Domain.parse(domain)
    pair = _indexed(pair, rule.name)
    evals = 0
    improved = True
    try:
        while improved and evals < max_evals:
            improved = False
            for stage in (rule.deletions(pair, min_size),
                          rule.value_changes(pair, dom.lo, dom.hi, integers)):
                for cand in stage:
                    evals += 1
                    if still_fails(cand):
                        pair, improved = cand, True
                        break
                    if evals >= max_evals:
                        return pair, evals
                if improved:
                    break
    except stop:
        pass
    return pair, evals


# --------------------------------------------------------------------------- hypothesis draws

def ordered(draw: Any, pair: Pair) -> Pair:
    """The pair with its records in the order drawn, sorted ascending, or descending (both
    datasets, so that they stay neighbours position by position)."""
    from hypothesis import strategies as st

    kind = draw(st.integers(0, 2))
    if kind == 0 or pair.dataset.ndim != 1:
        return pair
    a, b = pair.dataset, pair.neighbour
    if len(a) == len(b):
        order = np.argsort(a, kind="stable")
        if kind == 2:
            order = order[::-1]
        return Pair(a[order], b[order], pair.label, pair.relation)
    big, small = (a, b) if len(a) > len(b) else (b, a)
    order = np.argsort(big, kind="stable")
    if kind == 2:
        order = order[::-1]
    big2 = big[order]
    small2 = np.sort(small)[::-1] if kind == 2 else np.sort(small)
    return Pair(big2, small2, pair.label, pair.relation) if len(a) > len(b) else Pair(small2, big2, pair.label, pair.relation)


def drawn(relation: Union[str, Neighbours], domain: Any, size: int, *, integers: bool = False,
          before: Optional[Callable[[], None]] = None) -> Any:
    """A hypothesis strategy of neighbouring pairs: the relation's (at the sizes ``size``
    allows), the records in the order drawn, sorted or reversed, labelled "hypothesis search".
    ``before()`` runs ahead of every draw (a budget check that raises)."""
    from hypothesis import strategies as st

    from dpaudit.neighbours.relations import allowed_sizes
    from dpaudit.neighbours.strategies import neighbouring_pairs

    lo, hi = allowed_sizes(relation, size)
    strategy = neighbouring_pairs(relation, domain, (lo, hi), integers=integers)

    @st.composite
    def pairs(draw: Any) -> Pair:
        if before is not None:
            before()
        return ordered(draw, draw(strategy)).relabelled("hypothesis search")

    return pairs()


def run_targeted(pairs: Any, probe: Callable[[Pair], None], *, examples: int, seed: int,
                 stops: tuple = ()) -> None:
    """Run ``probe`` on the pairs hypothesis draws from ``pairs`` (generate, then
    ``hypothesis.target``'s steering, then shrinking), deterministic from ``seed``, with no
    database and no deadline; returns when ``examples`` are spent, when ``probe`` raises one of
    ``stops``, or when hypothesis gives up. The replay's search and the stability check's share
    it."""
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis import seed as hypothesis_seed
    from hypothesis.errors import HypothesisException

    from dpaudit.search.seeded import seed_only

    test = settings(max_examples=examples, database=None, derandomize=False, deadline=None,
                    verbosity=Verbosity.quiet, print_blob=False, report_multiple_bugs=False,
                    suppress_health_check=list(HealthCheck),
                    phases=(Phase.generate, Phase.target, Phase.shrink))(given(pairs)(probe))
    try:
        with seed_only():  # the draws depend on the seed only, not on the modules imported
            hypothesis_seed(seed)(test)()
    except (*stops, HypothesisException):
        pass
