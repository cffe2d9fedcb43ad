"""The choice-level drawing primitives of the neighbouring-pair strategies.

Hypothesis draws choices; these functions turn them into records, datasets and the moves of a
neighbouring pair. :mod:`dpaudit.neighbours.strategies` builds its public strategies from them,
and each relation's ``draw`` (:mod:`dpaudit.neighbours.add_remove`, ``replace``, ``linf``, ``l1``)
uses them to draw its pairs, so both depend on this module and neither on the other.

A value of a domain is one integer choice (:class:`Codec`): a special value (:func:`special_values`)
or a point of a 2^20-step grid, which hypothesis hill-climbs and shrinks cheaply. Every function
makes the same choices in the same order whatever the outcome (fixed-length choice sequences keep
hypothesis's shrinker and target phase aligned), so moving them changes no drawn example.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Optional

import numpy as np
from hypothesis import strategies as st

from dpaudit.claims import Domain
from dpaudit.errors import InvalidArgument

__all__ = ["HEAD", "SHAPES", "LINF_PATTERNS", "GRID", "special_values", "integer_bounds", "Codec",
           "ints", "SEEDS", "BOOL", "LINF_PATTERN", "draw_values", "draw_dataset", "new_record",
           "unit", "linf_signs", "signs_scaled", "shift"]

#: How many leading records hypothesis draws one by one; the rest come from a numpy generator.
HEAD = 4

#: Dataset shapes, in shrinking order (hypothesis shrinks toward the first).
SHAPES = ("free", "duplicates", "ends", "cluster", "spread", "outlier", "extremes")

#: ``linf`` perturbation patterns, in shrinking order.
LINF_PATTERNS = ("one", "all", "one-against-rest", "half", "x", "random")


def integer_bounds(domain: Domain) -> tuple[int, int]:
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
    d = Domain.parse(domain)
    if integers:
        lo, hi = integer_bounds(d)
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
        p2 = math.ldexp(1.0, math.frexp(top)[1] - 1)  # exact (log2 of the float64 maximum rounds to 1024)
        for v in (p2, float(np.nextafter(p2, 0.0)), float(np.nextafter(p2, np.inf)), -p2):
            cand.append(v)
    out = []
    for v in cand:
        if d.lo <= v <= d.hi and v not in out:
            out.append(float(v))
    return tuple(out)


#: Resolution of the value grid: a drawn value is a special value or lo + (hi − lo)·j / GRID.
GRID = 2**20


class Codec:
    """Values of a domain encoded as one integer choice (integer draws are far cheaper for
    hypothesis than float draws, and shrink toward the special values, then toward lo)."""

    __slots__ = ("lo", "hi", "specials", "n_special", "integers", "ilo", "top", "strategy")

    def __init__(self, d: Domain, integers: bool) -> None:
        self.lo, self.hi, self.integers = d.lo, d.hi, integers
        self.specials = special_values(d, integers=integers)
        self.n_special = len(self.specials)
        if integers:
            self.ilo, ihi = integer_bounds(d)
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


# --------------------------------------------------------------------------- datasets

@functools.lru_cache(maxsize=4096)
def ints(lo: int, hi: int) -> st.SearchStrategy[int]:
    """st.integers(lo, hi), built once (strategy construction is a measurable cost per draw)."""
    return st.integers(lo, hi)


SEEDS = st.integers(0, 2**32 - 1)
_SHAPE = st.sampled_from(SHAPES)
_WIDTH = st.sampled_from((0.0, 1e-12, 1e-6, 1e-3, 0.05, 0.5))
BOOL = st.booleans()


def _uniform(rng: np.random.Generator, lo: float, hi: float, m: int) -> np.ndarray:
    """m uniform draws on [lo, hi] without overflow when hi − lo exceeds the float range."""
    u = rng.random(m)
    return np.clip(lo * (1.0 - u) + hi * u, lo, hi)


def _seed(draw) -> np.random.Generator:
    return np.random.default_rng(draw(SEEDS))


def _fill(rng: np.random.Generator, c: Codec, m: int) -> np.ndarray:
    if c.integers:
        return rng.integers(c.ilo, c.ilo + c.top - c.n_special, size=m, endpoint=True).astype(float)
    return _uniform(rng, c.lo, c.hi, m)


def draw_values(draw, c: Codec, m: int) -> np.ndarray:
    """m record values of one drawn shape (see :data:`SHAPES`).

    Every call makes the same choices in the same order (shape, :data:`HEAD` values, a count, a
    width, a seed, a flag), whatever the shape and m, and each shape uses the ones it needs. A
    fixed-length choice sequence keeps hypothesis's hill climber and shrinker aligned: changing one
    choice never changes how many follow (otherwise its target phase burns most calls on
    re-executions that overrun).
    """
    shape = draw(_SHAPE)
    head = np.array([c.draw(draw) for _ in range(HEAD)], dtype=float)
    k = draw(ints(1, 3))
    width = draw(_WIDTH) * (0.5 * c.hi - 0.5 * c.lo)
    rng = _seed(draw)
    flip = draw(BOOL)
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


def _magnitudes(rng: np.random.Generator, c: Codec, m: int) -> np.ndarray:
    """Mixed magnitudes: ±2^k·(1 + tiny) with k uniform over the binades the domain reaches (down to
    subnormals), so huge and tiny values and binade edges meet in one dataset (float sums lose
    the small ones, or depend on their order)."""
    top = max(abs(c.lo), abs(c.hi), 1e-300)
    k_hi = int(np.floor(np.log2(top))) if np.isfinite(top) else 1023
    k = rng.integers(-1074, k_hi + 1, size=m)
    with np.errstate(over="ignore"):
        v = np.ldexp(1.0 + rng.integers(0, 4, size=m) * 2.0 ** -52, k) * rng.choice((-1.0, 1.0), size=m)
    return np.clip(v, c.lo, c.hi)


def draw_dataset(draw, c: Codec, n: int, dim: Optional[int]) -> np.ndarray:
    if dim is None:
        return draw_values(draw, c, n)
    return draw_values(draw, c, n * dim).reshape(n, dim)


# --------------------------------------------------------------------------- pairs

def new_record(draw, c: Codec, data: np.ndarray, dim: Optional[int]) -> np.ndarray:
    """A record to add or to put in place of another: a fresh value (choice 0) or a copy of
    record j − 1 (choice j ≥ 1). The fresh value is drawn either way (fixed-length choices)."""
    j = draw(ints(0, len(data)))
    fresh = np.array([c.draw(draw) for _ in range(dim or 1)], dtype=float)
    if j:
        return data[j - 1].copy()
    return np.float64(fresh[0]) if dim is None else fresh


LINF_PATTERN = st.sampled_from(LINF_PATTERNS)
_UNIT = st.integers(0, 2 * GRID)


def unit(draw) -> float:
    """A magnitude in [0, 1]: exactly 1 for choices 0..2^20 (half of them, and the shrink
    target), else (k − 2^20) / 2^20."""
    k = draw(_UNIT)
    return 1.0 if k <= GRID else (k - GRID) / GRID


def linf_signs(draw, pattern: str, m: int) -> np.ndarray:
    s = -1.0 if draw(BOOL) else 1.0
    at = draw(ints(0, m - 1))            # drawn for every pattern (fixed-length choices)
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


def signs_scaled(draw, c: Codec, signs: np.ndarray) -> np.ndarray:
    return signs if c.integers else unit(draw) * signs


def shift(flat: np.ndarray, step: np.ndarray, c: Codec) -> np.ndarray:
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
