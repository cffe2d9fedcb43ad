"""Hypothesis strategies for datasets and neighbouring pairs under every relation (docs/math.md#neighbour-relations).

Public API (stable; shared by the sensitivity search and the privacy auditor's pair search)::

    from dpaudit.neighbours.strategies import (
        SizeRange, NeighbourPair, size_range, elements, datasets, neighbouring_pairs)

    pairs = neighbouring_pairs("add-remove", (0.0, 1.0), (0, 50))   # SearchStrategy[NeighbourPair]
    pairs = neighbouring_pairs("add-remove", (0, 10), 8, individuals=12)  # Cummings and Durfee (2020) i-neighbours

* :func:`size_range` parses ``sizes`` (an int ``N`` means 0..N; a pair ``(lo, hi)`` or a
  ``range`` gives the inclusive bounds).
* :func:`elements` draws one record of a :class:`~dpaudit.claims.Domain`: a special value (the
  ends, the midpoint, 0, ±1 and the smallest subnormals when inside, the floats next to the ends,
  so values near the float limits when the domain reaches them) or a point of a 2^20-step grid
  on [lo, hi]. It is one integer choice, which hypothesis draws, hill-climbs and shrinks cheaply.
* :func:`datasets` draws a dataset (a fresh float ``numpy`` array of shape ``(n,)``, or
  ``(n, dim)`` with ``dim``) whose size lies in the range. Its *shape* is drawn too: free values,
  duplicates of a few values, the domain ends only, a tight cluster, uniform spread, a cluster with
  one outlier, and extreme values: float-limit / subnormal / binade-edge values, or mixed
  magnitudes (huge and tiny values together). The first :data:`HEAD` records are
  drawn one by one by hypothesis (so small counterexamples shrink value by value); longer tails are filled
  by numpy from a hypothesis-drawn seed, which keeps generation fast for large sizes.
* :func:`neighbouring_pairs` draws a :class:`~dpaudit.neighbours.pair.Pair` ``(dataset, neighbour)`` such that
  both lie in the domain, both sizes lie in the range, and they are neighbours:

  Each relation's drawing rule lives in its module (:mod:`dpaudit.neighbours.registry`):

  - ``add-remove``: the neighbour has one record more or less, inserted at / removed from a drawn
    position (``index``, counted in the larger dataset); the added record is any element or a copy
    of an existing one. Both orders are drawn unless ``both_orders=False`` (then the dataset is
    always the larger one).
  - ``replace``: same size, the record at ``index`` changed (to any element or a copy of another).
  - ``linf``: a vector of answers; every coordinate moves by at most 1 (patterns: one up or down,
    all up or down, one up and the rest down, half up and half down, the X shape, random signs),
    by a magnitude that is usually exactly 1, clipped to the domain.
  - ``l1``: coordinates move by at most 1 in total (one coordinate by ±t, or two sharing t).
  - With ``individuals=N`` (``add-remove`` only): Cummings and Durfee (2020)'s individual model (docs/math.md#individual-model). A
    universe of N individuals 0..N-1 each holds a fixed record; a dataset is the records of a set
    of individuals D (in identity order) and its *i*-neighbour is D ∪ {i} with i ∉ D. The pair
    carries ``dataset_ids``, ``neighbour_ids`` and ``individual = i``.

Every array handed out is a fresh copy, so callers may mutate it. The strategies shrink toward
small sizes, the "free" shape, the first relation pattern and simple values.
"""

from __future__ import annotations

import functools
import math
import numbers
from dataclasses import dataclass
from typing import Any, Optional, Union

import numpy as np
from hypothesis import strategies as st

from dpaudit.claims import Domain, Neighbours, check_size
from dpaudit.errors import InvalidArgument
from dpaudit.neighbours.pair import Pair

__all__ = [
    "SizeRange",
    "NeighbourPair",
    "size_range",
    "elements",
    "special_values",
    "datasets",
    "neighbouring_pairs",
    "HEAD",
    "SHAPES",
    "LINF_PATTERNS",
]

#: How many leading records hypothesis draws one by one; the rest come from a numpy generator.
HEAD = 4

#: Dataset shapes, in shrinking order (hypothesis shrinks toward the first).
SHAPES = ("free", "duplicates", "ends", "cluster", "spread", "outlier", "extremes")

#: ``linf`` perturbation patterns, in shrinking order.
LINF_PATTERNS = ("one", "all", "one-against-rest", "half", "x", "random")


@dataclass(frozen=True, slots=True)
class SizeRange:
    """Inclusive bounds ``lo ≤ n ≤ hi`` on the number of records of every dataset drawn."""

    lo: int
    hi: int

    def __contains__(self, n: object) -> bool:
        return isinstance(n, numbers.Integral) and self.lo <= int(n) <= self.hi


def size_range(sizes: Any, name: str = "sizes") -> SizeRange:
    """Parse ``sizes``: an int N (0..N), a pair ``(lo, hi)`` (inclusive), a ``range`` or a SizeRange."""
    if isinstance(sizes, SizeRange):
        return sizes
    if isinstance(sizes, range):
        if sizes.step != 1 or len(sizes) == 0:
            raise InvalidArgument.bad(name, sizes, "a non-empty range with step 1")
        return SizeRange(check_size(sizes.start, name), check_size(sizes[-1], name))
    if isinstance(sizes, numbers.Integral) and not isinstance(sizes, bool):
        return SizeRange(0, check_size(sizes, name))
    try:
        lo, hi = sizes
    except (TypeError, ValueError):
        raise InvalidArgument.bad(name, sizes, "an int N (sizes 0..N), a pair (lo, hi) or a range") from None
    for v in (lo, hi):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or int(v) < 0:
            raise InvalidArgument.bad(name, sizes, "a pair of integers 0 <= lo <= hi")
    if int(lo) > int(hi):
        raise InvalidArgument.bad(name, sizes, "a pair of integers 0 <= lo <= hi")
    return SizeRange(int(lo), int(hi))


#: The pair type the strategies hand out (one type for the whole harness).
NeighbourPair = Pair


# --------------------------------------------------------------------------- validation

def _domain(domain: Any) -> Domain:
    return Domain.parse(domain)


def _check_dim(dim: Any) -> Optional[int]:
    if dim is None:
        return None
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral) or int(dim) < 1:
        raise InvalidArgument.bad("dim", dim, "None or an integer >= 1")
    return int(dim)


def _integer_bounds(domain: Domain) -> tuple[int, int]:
    lo, hi = math.ceil(domain.lo), math.floor(domain.hi)
    if lo > hi:
        raise InvalidArgument.bad("domain", str(domain), "an interval containing an integer when integers=True")
    return lo, hi


# --------------------------------------------------------------------------- elements

def special_values(domain: Any, *, integers: bool = False) -> tuple[float, ...]:
    """The boundary and corner values of ``domain``, deduplicated, simplest first.

    lo, hi, the midpoint, 0, ±1 and ±the smallest subnormal when inside, and the floats next to
    the ends (which are the float limits when the domain reaches ±1.797e308).
    """
    d = _domain(domain)
    if integers:
        lo, hi = _integer_bounds(d)
        cand = [0, lo, hi, 1, -1, (lo + hi) // 2, lo + 1, hi - 1]
        out: list[float] = []
        for v in cand:
            if lo <= v <= hi and float(v) not in out:
                out.append(float(v))
        return tuple(out)
    tiny = 5e-324
    mid = 0.5 * d.lo + 0.5 * d.hi
    cand = [0.0, d.lo, d.hi, mid, 1.0, -1.0, tiny, -tiny,
            float(np.nextafter(d.lo, d.hi)), float(np.nextafter(d.hi, d.lo))]
    # binade edges: the largest power of two inside, and the doubles either side of it (where
    # rounding changes, e.g. float sums; Casacuberta et al. CCS 2022)
    top = max(abs(d.lo), abs(d.hi))
    if 0 < top < np.inf:
        p2 = float(2.0 ** np.floor(np.log2(top)))
        for v in (p2, float(np.nextafter(p2, 0.0)), float(np.nextafter(p2, np.inf)), -p2):
            cand.append(v)
    out = []
    for v in cand:
        if d.lo <= v <= d.hi and v not in out:
            out.append(float(v))
    return tuple(out)


#: Resolution of the value grid: a drawn value is a special value or lo + (hi − lo)·j / GRID.
GRID = 2**20


class _Codec:
    """Values of a domain encoded as one integer choice (integer draws are far cheaper for
    hypothesis than float draws, and shrink toward the special values, then toward lo)."""

    __slots__ = ("lo", "hi", "specials", "n_special", "integers", "ilo", "top", "strategy")

    def __init__(self, d: Domain, integers: bool) -> None:
        self.lo, self.hi, self.integers = d.lo, d.hi, integers
        self.specials = special_values(d, integers=integers)
        self.n_special = len(self.specials)
        if integers:
            self.ilo, ihi = _integer_bounds(d)
            self.top = self.n_special + (ihi - self.ilo)
        else:
            self.ilo, self.top = 0, self.n_special + GRID
        self.strategy = st.integers(0, self.top)

    def value(self, k: int) -> float:
        if k < self.n_special:
            return self.specials[k]
        j = k - self.n_special
        if self.integers:
            return float(self.ilo + j)
        t = j / GRID
        return min(max(self.lo * (1.0 - t) + self.hi * t, self.lo), self.hi)

    def draw(self, draw) -> float:
        return self.value(draw(self.strategy))


def elements(domain: Any, *, integers: bool = False) -> st.SearchStrategy[float]:
    """One record of ``domain``: a special value (:func:`special_values`) or a point of the grid
    lo + (hi − lo)·j / 2^20 (any integer of the domain with ``integers=True``). Shrinks toward
    the special values (0 or lo first)."""
    codec = _Codec(_domain(domain), integers)
    return codec.strategy.map(codec.value)


# --------------------------------------------------------------------------- datasets

@functools.lru_cache(maxsize=4096)
def _ints(lo: int, hi: int) -> st.SearchStrategy[int]:
    """st.integers(lo, hi), built once (strategy construction is a measurable cost per draw)."""
    return st.integers(lo, hi)


_SEEDS = st.integers(0, 2**32 - 1)
_SHAPE = st.sampled_from(SHAPES)
_WIDTH = st.sampled_from((0.0, 1e-12, 1e-6, 1e-3, 0.05, 0.5))
_BOOL = st.booleans()


def _uniform(rng: np.random.Generator, lo: float, hi: float, m: int) -> np.ndarray:
    """m uniform draws on [lo, hi] without overflow when hi − lo exceeds the float range."""
    u = rng.random(m)
    return np.clip(lo * (1.0 - u) + hi * u, lo, hi)


def _seed(draw) -> np.random.Generator:
    return np.random.default_rng(draw(_SEEDS))


def _fill(rng: np.random.Generator, c: _Codec, m: int) -> np.ndarray:
    if c.integers:
        return rng.integers(c.ilo, c.ilo + c.top - c.n_special, size=m, endpoint=True).astype(float)
    return _uniform(rng, c.lo, c.hi, m)


def _draw_values(draw, c: _Codec, m: int) -> np.ndarray:
    """m record values of one drawn shape (see :data:`SHAPES`).

    Every call makes the same choices in the same order (shape, :data:`HEAD` values, a count, a
    width, a seed, a flag), whatever the shape and m, and each shape uses the ones it needs. A
    fixed-length choice sequence keeps hypothesis's hill climber and shrinker aligned: changing one
    choice never changes how many follow (otherwise its target phase burns most calls on replays
    that overrun).
    """
    shape = draw(_SHAPE)
    head = np.array([c.draw(draw) for _ in range(HEAD)], dtype=float)
    k = draw(_ints(1, 3))
    width = draw(_WIDTH) * (0.5 * c.hi - 0.5 * c.lo)
    rng = _seed(draw)
    flip = draw(_BOOL)
    if m == 0:
        return np.empty(0, dtype=float)
    if shape == "free":
        return head[:m].copy() if m <= HEAD else np.concatenate([head, _fill(rng, c, m - HEAD)])
    if shape == "duplicates":
        return head[:k][rng.integers(0, k, size=m)]
    if shape == "ends":
        ends = np.array([c.ilo, c.ilo + c.top - c.n_special] if c.integers else [c.lo, c.hi], dtype=float)
        return ends[rng.integers(0, 2, size=m)]
    if shape == "spread":
        return _fill(rng, c, m)
    if shape == "extremes":
        if flip and not c.integers:  # half of them: mixed magnitudes instead of the specials
            return _magnitudes(rng, c, m)
        sv = np.array(c.specials, dtype=float)
        return sv[rng.integers(0, len(sv), size=m)]
    # cluster / outlier: a tight group around the first head value (+ one value at an end)
    with np.errstate(over="ignore", invalid="ignore"):
        vals = np.clip(head[0] + width * rng.standard_normal(m), c.lo, c.hi)
    if c.integers:
        vals = np.clip(np.round(vals), c.ilo, c.ilo + c.top - c.n_special)
    if shape == "outlier":
        vals[rng.integers(0, m)] = c.hi if flip else c.lo
        if c.integers:
            vals = np.clip(vals, c.ilo, c.ilo + c.top - c.n_special)
    return vals.astype(float)


def _magnitudes(rng: np.random.Generator, c: _Codec, m: int) -> np.ndarray:
    """Mixed magnitudes: ±2^k·(1 + tiny) with k uniform over the binades the domain reaches (down to
    subnormals), so huge and tiny values and binade edges meet in one dataset (float sums lose
    the small ones, or depend on their order)."""
    top = max(abs(c.lo), abs(c.hi), 1e-300)
    k_hi = int(np.floor(np.log2(top))) if np.isfinite(top) else 1023
    k = rng.integers(-1074, k_hi + 1, size=m)
    with np.errstate(over="ignore"):
        v = np.ldexp(1.0 + rng.integers(0, 4, size=m) * 2.0 ** -52, k) * rng.choice((-1.0, 1.0), size=m)
    return np.clip(v, c.lo, c.hi)


def _draw_dataset(draw, c: _Codec, n: int, dim: Optional[int]) -> np.ndarray:
    if dim is None:
        return _draw_values(draw, c, n)
    return _draw_values(draw, c, n * dim).reshape(n, dim)


def datasets(domain: Any, sizes: Any, *, integers: bool = False,
             dim: Optional[int] = None) -> st.SearchStrategy[np.ndarray]:
    """A dataset with ``n`` records, ``n`` in ``sizes``, values in ``domain``: a float array of
    shape ``(n,)`` (or ``(n, dim)``). See the module docstring for the shapes drawn."""
    d, r, k = _domain(domain), size_range(sizes), _check_dim(dim)
    c = _Codec(d, integers)
    n_strategy = st.integers(r.lo, r.hi)

    @st.composite
    def _datasets(draw):
        return _draw_dataset(draw, c, draw(n_strategy), k)

    return _datasets()


# --------------------------------------------------------------------------- pairs

def _new_record(draw, c: _Codec, data: np.ndarray, dim: Optional[int]) -> np.ndarray:
    """A record to add or to put in place of another: a fresh value (choice 0) or a copy of
    record j − 1 (choice j ≥ 1). The fresh value is drawn either way (fixed-length choices)."""
    j = draw(_ints(0, len(data)))
    fresh = np.array([c.draw(draw) for _ in range(dim or 1)], dtype=float)
    if j:
        return data[j - 1].copy()
    return np.float64(fresh[0]) if dim is None else fresh


_PATTERN = st.sampled_from(LINF_PATTERNS)
_UNIT = st.integers(0, 2 * GRID)


def _unit(draw) -> float:
    """A magnitude in [0, 1]: exactly 1 for choices 0..2^20 (half of them, and the shrink
    target), else (k − 2^20) / 2^20."""
    k = draw(_UNIT)
    return 1.0 if k <= GRID else (k - GRID) / GRID


def _linf_signs(draw, pattern: str, m: int) -> np.ndarray:
    s = -1.0 if draw(_BOOL) else 1.0
    at = draw(_ints(0, m - 1))            # drawn for every pattern (fixed-length choices)
    rng = _seed(draw)
    if pattern in ("one", "one-against-rest"):
        v = np.zeros(m) if pattern == "one" else np.full(m, -s)
        v[at] = s
        return v
    if pattern == "all":
        return np.full(m, s)
    if pattern == "half":
        v = np.full(m, s)
        v[m // 2:] = -s
        return v
    if pattern == "x":  # alternating signs: the crossing ("X") pattern of the violation finders
        v = np.full(m, s)
        v[1::2] = -s
        return v
    return rng.integers(-1, 2, size=m).astype(float)


def _signs_scaled(draw, c: _Codec, signs: np.ndarray) -> np.ndarray:
    return signs if c.integers else _unit(draw) * signs


def _shift(flat: np.ndarray, step: np.ndarray, c: _Codec) -> np.ndarray:
    """flat + step clipped to the domain, each coordinate moving by at most |step| exactly: where
    rounding of large values overshoots, step back one ulp toward the original value."""
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.clip(flat + step, c.lo, c.hi)
        if c.integers:
            out = np.clip(out, c.ilo, c.ilo + c.top - c.n_special)
        for _ in range(4):
            over = np.abs(out - flat) > np.abs(step)
            if not over.any():
                break
            out[over] = np.nextafter(out[over], flat[over])
    return out


def _individual(draw, c, r, dim, n_ind, both_orders) -> NeighbourPair:
    universe = _draw_dataset(draw, c, n_ind, dim)
    i = draw(_ints(0, n_ind - 1))
    k = draw(_ints(r.lo, min(r.hi - 1, n_ind - 1)))
    members = np.delete(np.arange(n_ind), i)
    seed = draw(_SEEDS)   # drawn even when unused (fixed-length choices)
    if k < len(members):  # the first k others (choice 0), or a random k-subset of them
        pick = members[:k] if seed == 0 else np.random.default_rng(seed).permutation(members)[:k]
        members = np.sort(pick)
    with_i = np.sort(np.append(members, i))
    small, large = universe[members], universe[with_i]
    index = int(np.searchsorted(with_i, i))
    if both_orders and draw(_BOOL):
        return Pair(large, small, "", Neighbours.ADD_REMOVE, index, with_i, members, int(i))
    return Pair(small, large, "", Neighbours.ADD_REMOVE, index, members, with_i, int(i))


def neighbouring_pairs(relation: Union[str, Neighbours], domain: Any, sizes: Any, *,
                       integers: bool = False, dim: Optional[int] = None,
                       both_orders: bool = True,
                       individuals: Optional[int] = None) -> st.SearchStrategy[NeighbourPair]:
    """Neighbouring pairs under ``relation`` over ``domain`` with sizes in ``sizes``.

    ``integers=True`` draws integer-valued records (count vectors for ``l1``; then moves are ±1);
    ``dim`` draws records in domain^dim; ``individuals=N`` uses Cummings and Durfee (2020)'s individual model
    (``add-remove`` only). For ``add-remove``, both datasets' sizes lie in ``sizes``, so it needs
    ``hi ≥ 1`` and ``lo < hi``; the other relations need ``hi ≥ 1``. In the default order
    (``both_orders=False`` fixes it) ``dataset`` is the larger dataset for ``add-remove`` and the
    one without ``individual`` in the individual model.
    """
    rel = Neighbours.parse(relation)
    d, r, k = _domain(domain), size_range(sizes), _check_dim(dim)
    c = _Codec(d, integers)
    if r.hi < 1:
        raise InvalidArgument.bad("sizes", (r.lo, r.hi), "a range that allows at least one record")
    if rel is Neighbours.ADD_REMOVE and r.lo >= r.hi:
        raise InvalidArgument.bad("sizes", (r.lo, r.hi),
                                  "a range with lo < hi for add-remove (a pair has sizes n and n+1)")
    if individuals is not None:
        if rel is not Neighbours.ADD_REMOVE:
            raise InvalidArgument.bad("neighbours", rel.value,
                                      "add-remove for the individual model (D and D ∪ {i})")
        if isinstance(individuals, bool) or not isinstance(individuals, numbers.Integral) \
                or int(individuals) < 1:
            raise InvalidArgument.bad("individuals", individuals, "an integer >= 1")
        if r.lo > int(individuals) - 1:
            raise InvalidArgument.bad("sizes", (r.lo, r.hi),
                                      f"a range whose lo is at most individuals - 1 = {int(individuals) - 1}")
        n_ind = int(individuals)

        @st.composite
        def _ind(draw):
            return _individual(draw, c, r, k, n_ind, both_orders)

        return _ind()

    from dpaudit.neighbours.registry import relation as lookup

    rule = lookup(rel)

    @st.composite
    def _pairs(draw):
        return rule.draw(draw, c, r, k, both_orders)

    return _pairs()
