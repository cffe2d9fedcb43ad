"""Distances under OpenDP's metrics, computed exactly, and the numbers a map gives.

:func:`metric_distance` measures two values under an OpenDP metric as a :class:`Distance` (a
Fraction, no rounding); :func:`map_argument` turns a distance into what the map of a part accepts,
never below it. The check's other modules read values with :func:`as_fraction` and
:func:`as_numbers`, compare records with :func:`same` and show a map's output with :func:`show`.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional

import numpy as np

__all__ = ["Distance", "metric_distance", "metric_name", "map_argument", "as_fraction", "as_numbers",
           "same", "show"]

_INT_TYPES = ("u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize")


@dataclass(frozen=True)
class Distance:
    """A distance computed exactly: ``value`` a Fraction (or ``math.inf``); for ``L2Distance``
    ``squared`` is True and ``value`` is the sum of squares."""

    value: Any
    squared: bool = False

    @property
    def infinite(self) -> bool:
        return isinstance(self.value, float) and math.isinf(self.value)

    def exceeds(self, bound: Any) -> bool:
        """Whether the distance is above ``bound`` (a number), exactly."""
        b = as_fraction(bound)
        if b is None:
            return False
        if isinstance(b, float):  # +inf
            return False
        if self.infinite:
            return True
        return self.value > (b * b if self.squared else b)

    def up(self) -> float:
        """The smallest float64 at least the distance."""
        if self.infinite:
            return math.inf
        if self.squared:
            x = math.sqrt(float(self.value))
            while Fraction(x) ** 2 < self.value:
                x = math.nextafter(x, math.inf)
            while x > 0 and Fraction(math.nextafter(x, 0.0)) ** 2 >= self.value:
                x = math.nextafter(x, 0.0)
            return x
        x = float(self.value)
        if Fraction(x) < self.value:
            x = math.nextafter(x, math.inf)
        return x

    def exact(self) -> bool:
        if self.infinite:
            return True
        if self.squared:
            return Fraction(self.up()) ** 2 == self.value
        return Fraction(float(self.value)) == self.value

    def text(self) -> str:
        """``repr`` of the float (exact, or rounded up, said so)."""
        if self.infinite:
            return "inf"
        if not self.squared and self.value.denominator == 1 and abs(self.value) < 2 ** 63:
            return repr(int(self.value))
        return repr(self.up()) + ("" if self.exact() else " (rounded up)")

    def ratio(self, bound: Any) -> Optional[float]:
        b = as_fraction(bound)
        if b is None or isinstance(b, float):
            return None
        if self.infinite:
            return math.inf
        if b == 0:
            return 0.0 if self.value == 0 else math.inf
        return self.up() / float(b)


def as_fraction(x: Any) -> Any:
    """``x`` as an exact Fraction (``math.inf`` for +inf, None for what is not a number)."""
    if isinstance(x, bool):
        return Fraction(int(x))
    if isinstance(x, (int, np.integer)):
        return Fraction(int(x))
    if isinstance(x, (float, np.floating)):
        v = float(x)
        if math.isnan(v):
            return None
        return math.inf if math.isinf(v) else Fraction(v)
    return None


def metric_name(metric: Any) -> str:
    """The name of an OpenDP metric without its type arguments (``SymmetricDistance``)."""
    text = str(getattr(metric, "type", None) or metric)
    return text.split("(")[0].split("<")[0].split("::")[-1].strip()


def _key(v: Any) -> Any:
    """A hashable key under which equal records meet (NaNs meet NaNs)."""
    if isinstance(v, float) and math.isnan(v):
        return ("nan",)
    if isinstance(v, list):
        return tuple(_key(x) for x in v)
    return v


def same(a: Any, b: Any) -> bool:
    """Whether two records or outputs are equal (maps and sequences element by element, NaN
    equal to NaN)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return _key(a) == _key(b)


def _diff(a: Any, b: Any) -> Any:
    """|a − b| exactly (``math.inf`` when one is not finite and they differ)."""
    if same(a, b):
        return Fraction(0)
    fa, fb = as_fraction(a), as_fraction(b)
    if fa is None or fb is None or isinstance(fa, float) or isinstance(fb, float):
        return math.inf
    return abs(fa - fb)


def _signed(a: Any, b: Any) -> Any:
    if same(a, b):
        return Fraction(0)
    fa, fb = as_fraction(a), as_fraction(b)
    if fa is None or fb is None or isinstance(fa, float) or isinstance(fb, float):
        return None
    return fa - fb


def _lcs(a: list, b: list) -> int:
    """The length of a longest common subsequence (bit-parallel: Allison and Dix 1986; Hyyrö
    2004), after the common prefix and suffix are stripped."""
    i = 0
    while i < min(len(a), len(b)) and _key(a[i]) == _key(b[i]):
        i += 1
    j = 0
    while j < min(len(a), len(b)) - i and _key(a[-1 - j]) == _key(b[-1 - j]):
        j += 1
    a2, b2 = a[i:len(a) - j], b[i:len(b) - j]
    if not a2 or not b2:
        return i + j
    masks: dict = {}
    for k, x in enumerate(a2):
        masks[_key(x)] = masks.get(_key(x), 0) | (1 << k)
    full = (1 << len(a2)) - 1
    v = full
    for y in b2:
        u = v & masks.get(_key(y), 0)
        v = ((v + u) | (v - u)) & full
    return i + j + len(a2) - bin(v).count("1")


def _vector(x: Any) -> Optional[list]:
    if isinstance(x, (list, tuple)):
        return list(x)
    if isinstance(x, np.ndarray):
        return x.reshape(-1).tolist()
    return None


def metric_distance(metric: Any, a: Any, b: Any) -> Optional[Distance]:
    """The distance of ``a`` and ``b`` under an OpenDP ``metric``, exactly (None when the metric or
    the values are not ones this check measures):

    * ``SymmetricDistance``: |a Δ b| as multisets, Σ_v |#_a(v) − #_b(v)|;
    * ``InsertDeleteDistance``: insertions and deletions between the sequences,
      |a| + |b| − 2·LCS(a, b);
    * ``ChangeOneDistance``: the symmetric distance / 2 between datasets of one size (∞ else);
    * ``HammingDistance``: positions that differ between sequences of one length (∞ else);
    * ``DiscreteDistance``: 0 when equal, else 1;
    * ``AbsoluteDistance``: |a − b|; ``L1Distance`` Σ|a_i − b_i|; ``L2Distance`` √Σ(a_i − b_i)²;
      ``LInfDistance`` max|a_i − b_i| (∞ for a ``monotonic`` one when the differences change
      sign: OpenDP's definition), over vectors of one length (∞ else) or maps (a missing key
      counts 0).

    A value that is not finite is at distance ∞ from any other (0 from itself).
    """
    name = metric_name(metric)
    if name in ("SymmetricDistance", "ChangeOneDistance"):
        va, vb = _vector(a), _vector(b)
        if va is None or vb is None:
            return None
        ca, cb = Counter(_key(x) for x in va), Counter(_key(x) for x in vb)
        d = sum(abs(ca[k] - cb[k]) for k in set(ca) | set(cb))
        if name == "ChangeOneDistance":
            return Distance(Fraction(d, 2) if len(va) == len(vb) else math.inf)
        return Distance(Fraction(d))
    if name == "InsertDeleteDistance":
        va, vb = _vector(a), _vector(b)
        if va is None or vb is None:
            return None
        return Distance(Fraction(len(va) + len(vb) - 2 * _lcs(va, vb)))
    if name == "HammingDistance":
        va, vb = _vector(a), _vector(b)
        if va is None or vb is None:
            return None
        if len(va) != len(vb):
            return Distance(math.inf)
        return Distance(Fraction(sum(1 for x, y in zip(va, vb) if not same(x, y))))
    if name == "DiscreteDistance":
        return Distance(Fraction(0 if same(a, b) else 1))
    if name == "AbsoluteDistance":
        if _vector(a) is not None or _vector(b) is not None:
            return None
        return Distance(_diff(a, b))
    if name in ("L1Distance", "L2Distance", "LInfDistance"):
        if isinstance(a, dict) and isinstance(b, dict):
            keys = list(a.keys() | b.keys())
            va, vb = [a.get(k, 0) for k in keys], [b.get(k, 0) for k in keys]
        else:
            va, vb = _vector(a), _vector(b)
            if va is None or vb is None:
                if _vector(a) is None and _vector(b) is None:
                    va, vb = [a], [b]  # a scalar answer: a vector of one
                else:
                    return None
            if len(va) != len(vb):
                return Distance(math.inf)
        if name == "LInfDistance" and "monotonic" in str(metric):
            signs = [_signed(x, y) for x, y in zip(va, vb)]
            if any(s is None for s in signs):
                return Distance(math.inf)
            if any(s > 0 for s in signs) and any(s < 0 for s in signs):
                return Distance(math.inf)
        diffs = [_diff(x, y) for x, y in zip(va, vb)]
        if any(isinstance(d, float) for d in diffs):
            return Distance(math.inf)
        if name == "L1Distance":
            return Distance(sum(diffs, Fraction(0)))
        if name == "L2Distance":
            return Distance(sum((d * d for d in diffs), Fraction(0)), squared=True)
        return Distance(max(diffs, default=Fraction(0)))
    return None


def _distance_type(metric: Any) -> str:
    return str(getattr(metric, "distance_type", "f64"))


def map_argument(metric: Any, d: Distance) -> Any:
    """The distance ``d`` as the map of a part taking ``metric`` accepts it, never below ``d``
    (None when it cannot be passed: ∞ for an integer type)."""
    kind = _distance_type(metric)
    if kind in _INT_TYPES:
        if d.infinite:
            return None
        v = d.value if not d.squared else Fraction(math.ceil(d.up()))
        return int(-(-v.numerator // v.denominator))
    x = d.up()
    if kind == "f32" and math.isfinite(x):
        x32 = np.float32(x)
        if float(x32) < x:
            x32 = np.nextafter(x32, np.float32(np.inf))
        x = float(x32)
    return x


def as_numbers(v: Any) -> Optional[tuple]:
    """A map's output as numbers: one (ε, ρ, a distance) or two ((ε, δ)); None otherwise."""
    if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
        return (v,)
    if isinstance(v, tuple) and v and all(isinstance(x, (int, float)) for x in v):
        return tuple(v)
    return None



def show(v: Any) -> str:
    """A map's output as reports show it (``repr``, a tuple component by component)."""
    if isinstance(v, tuple):
        return "(" + ", ".join(show(x) for x in v) + ")"
    if isinstance(v, float):
        return repr(v)
    return repr(v)
