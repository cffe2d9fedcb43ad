"""The statistics Cummings and Durfee (2020) preprocess efficiently (Cor 5.3, §6) and their O(1) window forms.

All act on a database given as the multiset of its records. With the records sorted,
``s_1 ≤ … ≤ s_ℓ`` (docs/math.md#conventions):

* mean ``(1/ℓ) Σ s_k``;
* α-trimmed mean: drop ``t = ⌊αℓ⌋`` records at each end, average the rest (0 ≤ α < ½);
* median, two conventions (docs/math.md#conventions): **LOW** ``s_⌈ℓ/2⌉``; **AVG** ``(s_⌊(ℓ+1)/2⌋ + s_⌊ℓ/2⌋+1)/2``;
* max ``s_ℓ``, min ``s_1``; variance ``(1/ℓ) Σ (s_k − mean)²`` (docs/math.md#spf-variance).

Each is a non-decreasing function of every order statistic (variance aside), hence
database-ordered (Def 5.1; docs/math.md#database-ordered [D]). The empty database has no value: f(∅) is undefined
and the preprocessing takes an analyst-chosen centre (Remark 3.2); variance uses 0.

``window_values`` evaluates one statistic on every window ``s[i : i+ℓ]`` of a sorted array at once,
in O(1) per window from slices and prefix sums: the inner loop of the O(n²) DP (Lemma 5.2).
"""

from __future__ import annotations

import math
from enum import Enum
from typing import Any, Union

import numpy as np

from dpaudit.errors import InvalidArgument

from .errors import SpfError

__all__ = ["Statistic", "Convention", "statistic_value", "subset_statistic", "trim_count",
           "window_values", "WindowSums", "check_data", "check_alpha", "median_sorted", "finite_result"]


class Statistic(str, Enum):
    """The database-ordered statistics of Corollary 5.3."""

    MEAN = "mean"
    TRIMMED_MEAN = "trimmed-mean"
    MEDIAN = "median"
    MAX = "max"
    MIN = "min"

    @classmethod
    def parse(cls, value: Union[str, "Statistic"]) -> "Statistic":
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            key = value.strip().lower().replace("_", "-").replace(" ", "-")
            key = {"trimmed": "trimmed-mean", "trimmedmean": "trimmed-mean"}.get(key, key)
            for member in cls:
                if member.value == key:
                    return member
        raise InvalidArgument.bad("statistic", value, "one of " + ", ".join(m.value for m in cls))


class Convention(str, Enum):
    """Median of an even number of records: LOW = lower middle; AVG = mean of the two middles."""

    LOW = "low"
    AVG = "avg"

    @classmethod
    def parse(cls, value: Union[str, "Convention"]) -> "Convention":
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            key = value.strip().lower()
            for member in cls:
                if member.value == key:
                    return member
        raise InvalidArgument.bad("convention", value, "'low' or 'avg'")


def check_data(data: Any, name: str = "data") -> np.ndarray:
    """A database: a 1-D array of finite real records (a copy, as float)."""
    try:
        arr = np.array(data, dtype=float)
    except (TypeError, ValueError):
        raise InvalidArgument.bad(name, data, "a 1-D sequence of real numbers") from None
    if arr.ndim != 1:
        raise InvalidArgument.bad(name, f"an array of shape {arr.shape}", "1-D (one record per entry)")
    if not np.all(np.isfinite(arr)):
        raise InvalidArgument.bad(name, arr[~np.isfinite(arr)][0], "finite (no nan or inf records)")
    return arr


def check_alpha(alpha: Any) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.floating)) \
            or not math.isfinite(float(alpha)) or not 0.0 <= float(alpha) < 0.5:
        raise InvalidArgument.bad("alpha", alpha, "a number in [0, 0.5)")
    return float(alpha)


def finite_result(value: float, s: np.ndarray, what: str) -> float:
    """``value``, or a one-line :class:`SpfError` when double precision overflowed on these records."""
    if not np.isfinite(value):
        big = float(np.max(np.abs(s))) if s.size else 0.0
        raise SpfError(f"the preprocessed {what} overflowed double precision (records up to {big:.3g} in "
                       f"magnitude); rescale the records (and Δ, c) by a power of two")
    return float(value)


def trim_count(alpha: float, size: Any) -> Any:
    """``⌊α·ℓ⌋`` records trimmed at each end (vectorised over ℓ; one formula everywhere)."""
    return np.floor(alpha * np.asarray(size, dtype=float)).astype(np.int64)


def median_sorted(s: np.ndarray, convention: Convention) -> float:
    ell = s.size
    if convention is Convention.LOW:
        return float(s[(ell + 1) // 2 - 1])
    return float(0.5 * (s[(ell + 1) // 2 - 1] + s[ell // 2]))


def statistic_value(data: Any, statistic: Union[str, Statistic], *, alpha: float = 0.0,
                    convention: Union[str, Convention] = Convention.AVG) -> float:
    """The plain (unpreprocessed) statistic of a non-empty database; nan for the empty one."""
    stat = Statistic.parse(statistic)
    conv = Convention.parse(convention)
    s = np.sort(check_data(data))
    if s.size == 0:
        return math.nan
    if stat is Statistic.MEDIAN:
        return median_sorted(s, conv)
    if stat is Statistic.MAX:
        return float(s[-1])
    if stat is Statistic.MIN:
        return float(s[0])
    t = int(trim_count(check_alpha(alpha), s.size)) if stat is Statistic.TRIMMED_MEAN else 0
    return float(np.mean(s[t:s.size - t]))


class WindowSums:
    """``Σ_{k ≤ j < k+m} y_j`` for every start k, for the inner lengths m the anti-diagonal DP asks
    for in turn, on the scaled records ``y = s·scale``.

    Sums are built by accumulation, ``W_{m+1}[k] = W_m[k] + y_{k+m}``, never as differences of
    prefix sums: such a difference loses every digit of a window that lies after a huge record
    (|x| near the float limit). The computed means then stop being monotone in the order
    statistics, and the contiguous-range DP no longer keeps the bound (found by
    dpaudit.check_sensitivity: D = [0, 1, −1.7e308, 0, 1] with Δ = 0.25 gave a gap of 0.75).
    Records are not centred either: a window {1.0} measured from a shift of −1.7e308 reads 0.0.
    Each window sum thus carries only its own records' rounding. ``scale`` is a power of two
    (exact) that keeps every window sum finite. The trimmed mean's inner length
    m = ℓ − 2⌊αℓ⌋ moves by ±1 per step and, as α < ½, never falls twice in a row, so the array of
    the previous length is all the step down needs.
    """

    __slots__ = ("y", "scale", "m", "cur", "prev", "prev_m")

    def __init__(self, s: np.ndarray) -> None:
        n = s.size
        big = float(np.max(np.abs(s))) if n else 0.0
        # keep n·max|y| below the float limit
        self.scale = 1.0 if big * max(n, 1) < 2.0 ** 1020 else 2.0 ** -(int(math.log2(max(n, 1))) + 3)
        self.y = s * self.scale
        self.m = 0
        self.cur = np.zeros(n + 1)
        self.prev: np.ndarray | None = None
        self.prev_m = -1

    def sums(self, m: int) -> np.ndarray:
        """``W_m[k] = Σ y[k:k+m]`` for k = 0..n−m."""
        if m == self.m:
            return self.cur
        n = self.y.size
        if m == self.m + 1:
            new = self.cur[:n - m + 1] + self.y[m - 1:]
        elif m == self.prev_m:
            new = self.prev
        else:  # not reached by the DP's sequence of lengths; kept correct for any caller
            new = np.zeros(n - m + 1)
            for j in range(m):
                new += self.y[j:j + n - m + 1]
        self.prev, self.prev_m = self.cur, self.m
        self.cur, self.m = new, m
        return new

    def means(self, m: int, start: int, count: int) -> np.ndarray:
        """Means of the windows ``s[start+k : start+k+m]``, k = 0..count−1."""
        return (self.sums(m)[start:start + count] / m) / self.scale


def window_values(stat: Statistic, s: np.ndarray, ell: int, *, sums: "WindowSums | None",
                  alpha: float, convention: Convention) -> np.ndarray:
    """The statistic on every window ``s[i:i+ℓ]``, i = 0..n−ℓ, of the sorted array s.

    The means read their window sums from ``sums`` (a :class:`WindowSums` on the same s, asked for
    ℓ = 1, 2, … in turn).
    """
    count = s.size - ell + 1
    if stat is Statistic.MEDIAN:
        lo = s[(ell + 1) // 2 - 1:(ell + 1) // 2 - 1 + count]
        if convention is Convention.LOW:
            return lo
        return 0.5 * (lo + s[ell // 2:ell // 2 + count])
    if stat is Statistic.MAX:
        return s[ell - 1:ell - 1 + count]
    if stat is Statistic.MIN:
        return s[:count]
    t = int(trim_count(alpha, ell)) if stat is Statistic.TRIMMED_MEAN else 0
    return sums.means(ell - 2 * t, t, count)


def subset_statistic(statistic: Union[str, Statistic], records: Any, B: Any, *, alpha: float = 0.0,
                     convention: Union[str, Convention] = Convention.AVG) -> np.ndarray:
    """The statistic on every subset at once: row m of the boolean matrix ``B`` (shape (m, n)) selects
    the records of one database; nan for an empty row. ``"variance"`` is accepted too (0 on ∅).

    This is the batched f of :func:`~.general.spf_table` (``batched=True``) for these statistics:
    vectorised over subsets, independent of the window forms used by the efficient algorithms.
    """
    x = check_data(records, "records")
    M = np.asarray(B, dtype=bool)
    if M.ndim != 2 or M.shape[1] != x.size:
        raise InvalidArgument.bad("B", f"shape {M.shape}", f"a boolean matrix with {x.size} columns")
    cnt = M.sum(axis=1)
    rows = np.arange(M.shape[0])
    safe = np.maximum(cnt, 1)
    if isinstance(statistic, str) and statistic.strip().lower() == "variance":
        mean = (M @ x) / safe
        dev = np.where(M, x[None, :] - mean[:, None], 0.0)
        return (dev * dev).sum(axis=1) / safe
    stat = Statistic.parse(statistic)
    conv = Convention.parse(convention)
    vals = np.sort(np.where(M, x[None, :], np.inf), axis=1)        # each subset sorted, then +inf
    if stat is Statistic.MEDIAN:
        lo = vals[rows, np.maximum((cnt + 1) // 2 - 1, 0)]
        out = lo if conv is Convention.LOW else 0.5 * (lo + vals[rows, np.minimum(cnt // 2, x.size - 1)])
    elif stat is Statistic.MAX:
        out = vals[rows, np.maximum(cnt - 1, 0)]
    elif stat is Statistic.MIN:
        out = vals[rows, 0]
    else:
        t = trim_count(check_alpha(alpha), cnt) if stat is Statistic.TRIMMED_MEAN else np.zeros_like(cnt)
        # sum only the kept columns t ≤ j < cnt − t (no prefix-sum differences: see WindowSums)
        j = np.arange(x.size)[None, :]
        keep = (j >= t[:, None]) & (j < (cnt - t)[:, None])
        out = np.where(keep, vals, 0.0).sum(axis=1) / np.maximum(cnt - 2 * t, 1)
    return np.where(cnt > 0, out, np.nan)
