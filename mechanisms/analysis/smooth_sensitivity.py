"""Smooth sensitivity of the median (Nissim, Raskhodnikova and Smith 2007; docs/math.md#smooth-sensitivity).

SS_β(S) = max_{k ≥ 0} e^{−βk} A^{(k)}(S), with A^{(k)}(S) = max_{d(S,S') ≤ k} LS(S') (docs/math.md#ss-definitions).
Data are clamped into [a, b] = [lo, hi], sorted s_1 ≤ … ≤ s_n and padded with s_i = a for i ≤ 0
and s_i = b for i ≥ n + 1.

**Replace-one, n fixed, LOW median T = s_m, m = ⌈n/2⌉** (NRS07 Prop 3.4 / Alg 1; docs/math.md#median-ss-replace-one):

    SS_β = max_{0 ≤ i ≤ m ≤ j ≤ n+1, i < j} (s_j − s_i)·e^{−β(j−i−1)}.

``method="quadratic"`` scans every pair, O(n²). ``method="fast"`` is the divide and conquer of §3.2:
j*(i), the smallest argmax over j ∈ [max(m, i+1), n+1], is non-decreasing in i (ln(s_j − c) has
increasing differences in (j, c)), so solve(i_lo, i_hi, j_lo, j_hi) scans j for i_mid only and
recurses on (i_lo, i_mid−1, j_lo, j*) and (i_mid+1, i_hi, j*, j_hi). It runs level by level,
vectorised over every sub-problem of a level, and drops sub-problems whose upper bound
(s_{j_hi} − s_{i_lo})·e^{−β·max(0, j_lo−i_hi−1)} cannot beat the best value found: O(n log n).

**Add/remove, AVG median, n ≥ 1** (docs/math.md#median-ss-add-remove):

    SS_AR,β = max_{0 ≤ i < j ≤ n+1} ((s_j − s_i)/2)·e^{−β c(i,j)},
    c(i,j) = (j − i − 1) + (|i + j − n − 1| − 1)⁺ + [i = 0 ∧ j = n + 1].

``method="quadratic"`` scans every pair. ``method="fast"`` is O(n) after the sort [D]: on
i + j ≥ n + 2 the cost is 2j − n − 3 (free of i, so i = n + 2 − j is best); on i + j ≤ n it is
n − 2i − 1 (free of j, so j = n − i is best); on i + j = n + 1 it is n − 2i + [i = 0]. The
maximum over these three O(n) families is the maximum over all pairs.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpaudit.claims import Domain, Neighbours
from dpaudit.errors import InvalidArgument
from ..exponential import _as_data

__all__ = [
    "MEDIAN_CONVENTIONS",
    "median_of",
    "median_convention",
    "median_local_sensitivity",
    "median_smooth_sensitivity",
]

#: Even-size median conventions (docs/math.md#conventions): LOW = s_⌈n/2⌉, AVG = (s_⌊(n+1)/2⌋ + s_⌊n/2⌋+1)/2.
MEDIAN_CONVENTIONS = ("low", "avg")

_METHODS = ("fast", "quadratic")


def _check_convention(convention: Any) -> str:
    if convention not in MEDIAN_CONVENTIONS:
        raise InvalidArgument.bad("convention", convention, "'low' or 'avg'")
    return convention


def median_of(data: Any, convention: str = "avg") -> float:
    """LOW: s_⌈n/2⌉; AVG: (s_⌊(n+1)/2⌋ + s_⌊n/2⌋+1)/2 (docs/math.md#conventions). The data must be non-empty."""
    conv = _check_convention(convention)
    s = np.sort(_as_data(data))
    n = s.size
    if n == 0:
        raise InvalidArgument.bad("data", data, "a non-empty array (the median of no records is undefined)")
    if conv == "low":
        return float(s[(n + 1) // 2 - 1])
    return float((s[(n + 1) // 2 - 1] + s[n // 2]) / 2.0)


def median_convention(neighbours: Any) -> str:
    """The median convention whose smooth sensitivity is implemented for a relation:
    ``"low"`` for replace-one (NRS07), ``"avg"`` for add/remove (docs/math.md#median-ss-add-remove)."""
    rel = _check_relation(neighbours)
    return "low" if rel is Neighbours.REPLACE else "avg"


def _check_relation(neighbours: Any) -> Neighbours:
    rel = Neighbours.parse(neighbours)
    if rel not in (Neighbours.REPLACE, Neighbours.ADD_REMOVE):
        raise InvalidArgument.bad("neighbours", neighbours, "'replace' or 'add-remove'")
    return rel


def _check_beta(beta: Any) -> float:
    try:
        b = float(beta)
    except (TypeError, ValueError):
        raise InvalidArgument.bad("beta", beta, "a finite number >= 0") from None
    if isinstance(beta, bool) or not math.isfinite(b) or b < 0:
        raise InvalidArgument.bad("beta", beta, "a finite number >= 0")
    return b


def _padded(data: Any, lo: float, hi: float) -> np.ndarray:
    dom = Domain(lo, hi)
    s = np.sort(np.clip(_as_data(data), dom.lo, dom.hi))
    if s.size == 0:
        raise InvalidArgument.bad("data", data, "a non-empty array")
    return np.concatenate([[dom.lo], s, [dom.hi]])


def median_local_sensitivity(data: Any, lo: float, hi: float, neighbours: Any = "replace") -> float:
    """LS of the median (docs/math.md#median-ss-replace-one, #median-ss-add-remove), padded with a and b.

    replace (LOW): max(s_{m+1} − s_m, s_m − s_{m−1}), m = ⌈n/2⌉.
    add-remove (AVG): (s_{m+1} − s_m)/2 for n = 2m; max(s_{m+1} − s_m, s_m − s_{m−1})/2 for n = 2m − 1.
    """
    rel = _check_relation(neighbours)
    s = _padded(data, lo, hi)
    n = s.size - 2
    m = (n + 1) // 2
    if rel is Neighbours.REPLACE:
        return float(max(s[m + 1] - s[m], s[m] - s[m - 1]))
    if n % 2 == 0:
        return float((s[m + 1] - s[m]) / 2.0)
    return float(max(s[m + 1] - s[m], s[m] - s[m - 1]) / 2.0)


def median_smooth_sensitivity(data: Any, beta: float, lo: float, hi: float,
                              neighbours: Any = "replace", method: str = "fast") -> float:
    """β-smooth sensitivity of the median of ``data`` clamped into [lo, hi] (docs/math.md#median-ss-replace-one, #median-ss-add-remove).

    ``neighbours="replace"`` uses the LOW median (NRS07); ``"add-remove"`` the AVG median.
    ``method="fast"`` (O(n log n) replace, O(n) add/remove after the sort) or ``"quadratic"``
    (the O(n²) reference). Returns a float ≥ 0 (0 only by underflow, when SS < 1e-308).
    """
    rel = _check_relation(neighbours)
    b = _check_beta(beta)
    if method not in _METHODS:
        raise InvalidArgument.bad("method", method, "'fast' or 'quadratic'")
    s = _padded(data, lo, hi)
    if rel is Neighbours.REPLACE:
        log_ss = _replace_fast(s, b) if method == "fast" else _replace_quadratic(s, b)
    else:
        log_ss = _add_remove_fast(s, b) if method == "fast" else _add_remove_quadratic(s, b)
    return float(math.exp(log_ss)) if log_ss > -math.inf else 0.0


# ---------------------------------------------------------------------------------------------
# replace-one (LOW)


def _log_gap(s: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.log(s[j] - s[i])


def _replace_quadratic(s: np.ndarray, beta: float) -> float:
    n = s.size - 2
    m = (n + 1) // 2
    best = -math.inf
    for i in range(0, m + 1):
        j = np.arange(max(m, i + 1), n + 2)
        v = _log_gap(s, np.full(j.size, i), j) - beta * (j - i - 1)
        best = max(best, float(v.max()))
    return best


def _replace_fast(s: np.ndarray, beta: float) -> float:
    n = s.size - 2
    m = (n + 1) // 2
    # k = 0 (the local sensitivity) seeds the pruning bound
    best = float(max(_log_gap(s, np.array([m - 1, m]), np.array([m, m + 1]))))
    i_lo, i_hi = np.array([0]), np.array([m])
    j_lo, j_hi = np.array([m]), np.array([n + 1])
    while i_lo.size:
        ub = _log_gap(s, i_lo, j_hi) - beta * np.maximum(0, j_lo - i_hi - 1)
        keep = ub > best
        if not np.all(keep):
            i_lo, i_hi, j_lo, j_hi = i_lo[keep], i_hi[keep], j_lo[keep], j_hi[keep]
            if not i_lo.size:
                break
        mid = (i_lo + i_hi) // 2
        js = np.maximum(j_lo, mid + 1)
        lengths = j_hi - js + 1
        offsets = np.cumsum(lengths) - lengths
        total = int(lengths.sum())
        seg = np.repeat(np.arange(mid.size), lengths)
        j = np.arange(total) - offsets[seg] + js[seg]
        i = mid[seg]
        v = _log_gap(s, i, j) - beta * (j - i - 1)
        segmax = np.maximum.reduceat(v, offsets)
        best = max(best, float(segmax.max()))
        pos = np.where(v == segmax[seg], np.arange(total), total)
        jstar = j[np.minimum.reduceat(pos, offsets)]
        left = i_lo <= mid - 1
        right = mid + 1 <= i_hi
        i_lo, i_hi, j_lo, j_hi = (
            np.concatenate([i_lo[left], mid[right] + 1]),
            np.concatenate([mid[left] - 1, i_hi[right]]),
            np.concatenate([j_lo[left], jstar[right]]),
            np.concatenate([jstar[left], j_hi[right]]),
        )
    return best


# ---------------------------------------------------------------------------------------------
# add/remove (AVG)


def _ar_cost(i: np.ndarray, j: np.ndarray, n: int) -> np.ndarray:
    return (j - i - 1) + np.maximum(np.abs(i + j - n - 1) - 1, 0) + ((i == 0) & (j == n + 1))


def _add_remove_quadratic(s: np.ndarray, beta: float) -> float:
    n = s.size - 2
    best = -math.inf
    for i in range(0, n + 1):
        j = np.arange(i + 1, n + 2)
        v = _log_gap(s, np.full(j.size, i), j) - math.log(2.0) - beta * _ar_cost(np.full(j.size, i), j, n)
        best = max(best, float(v.max()))
    return best


def _add_remove_fast(s: np.ndarray, beta: float) -> float:
    n = s.size - 2
    parts = []
    # i + j = n + 1, i < j: cost n − 2i + [i = 0]
    i = np.arange(0, n // 2 + 1)
    i = i[i < n + 1 - i]
    parts.append(_log_gap(s, i, n + 1 - i) - beta * (n - 2 * i + (i == 0)))
    # i + j >= n + 2, i < j: cost 2j − n − 3, best i = n + 2 − j
    j = np.arange((n + 4) // 2, n + 2)
    j = j[n + 2 - j < j]
    parts.append(_log_gap(s, n + 2 - j, j) - beta * (2 * j - n - 3))
    # i + j <= n, i < j: cost n − 2i − 1, best j = n − i
    i = np.arange(0, (n + 1) // 2)
    i = i[i < n - i]
    parts.append(_log_gap(s, i, n - i) - beta * (n - 2 * i - 1))
    v = np.concatenate(parts)
    return float(v.max()) - math.log(2.0) if v.size else -math.inf
