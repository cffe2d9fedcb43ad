"""The preprocessed median in O(n) on presorted data (Cummings and Durfee 2020, Lemmas 5.4-5.5, Thm 1.6) [R, docs/math.md#spf-median].

With the records sorted, ``g(i, j)`` (f̂ of the range x_i..x_j, uniform Δ, centre c) satisfies

    g(i, j) = c                              if j < i,
    g(i, j) = min(μ, g(i, j−1) + Δ)          if μ = med(x_i..x_j) > c,
    g(i, j) = max(μ, g(i+1, j) − Δ)          otherwise,

a single chain from (1, n) down to an empty range: O(n) instead of the O(n²) of Lemma 5.2, and
equal to it (Lemma 5.5's no-overshoot property: f̂(D) lies between c and med(D)).

Vectorised without a Python loop over the n steps:

1. *The path.* After b removals from the bottom, let ``ℓ*(b)`` be the longest window starting at
   b whose median is ≤ c (the median falls as the window loses its top, so the feasible lengths
   are a prefix; both conventions have a closed form from ``#{x ≤ c}`` and ``#{x_k + x_{k+1} ≤ 2c}``).
   The chain removes tops until the window has length ℓ*(b), then removes the bottom; so its
   b-th bottom step is step ``n − ℓ*(b)``, and all others are top steps.
2. *The values.* Each step is a map ``g ↦ clamp(g + s, a, b)``: top ``(+Δ, −∞, μ)``, bottom
   ``(−Δ, μ, +∞)``. Such maps are closed under composition,
   ``(s₂,a₂,b₂)∘(s₁,a₁,b₁) = (s₁+s₂, clamp(a₁+s₂, a₂, b₂), clamp(b₁+s₂, a₂, b₂))``, so
   f̂(D) = φ₀∘…∘φ_{n−1}(c) is a pairwise tree reduction: log₂ n numpy passes, O(n) work.

``median_exact_condition`` is the sufficient condition of Theorem 1.6 as docs/math.md#spf-median reconstructs it [R].
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Union

import numpy as np

from dpaudit.claims import SensitivityBound
from dpaudit.errors import InvalidArgument

from .ordered import check_centre, check_sensitivity_delta
from .statistics import Convention, check_data, finite_result, median_sorted

__all__ = ["spf_median", "median_exact_condition", "MedianSPF"]


def _check_sorted(data: Any) -> np.ndarray:
    s = check_data(data, "sorted_data")
    if s.size > 1 and not np.all(s[1:] >= s[:-1]):
        k = int(np.flatnonzero(s[1:] < s[:-1])[0])
        raise InvalidArgument(f"sorted_data must be sorted in increasing order, but entry {k + 1} "
                              f"({s[k + 1]!r}) < entry {k} ({s[k]!r}); sort it or use MedianSPF")
    return s


def _longest_low_windows(s: np.ndarray, centre: float, convention: Convention) -> np.ndarray:
    """ℓ*(b) for b = 0..n: the longest window s[b:b+ℓ] with median ≤ c (0 if none)."""
    n = s.size
    b = np.arange(n + 1, dtype=np.int64)
    room = n - b
    t_c = np.searchsorted(s, centre, side="right")           # #{x ≤ c}
    if convention is Convention.LOW:
        # s[b + ⌈ℓ/2⌉ − 1] ≤ c  ⇔  ⌈ℓ/2⌉ ≤ t_c − b  ⇔  ℓ ≤ 2(t_c − b)
        return np.clip(np.minimum(room, 2 * (t_c - b)), 0, None)
    # odd ℓ: s[b + (ℓ−1)/2] ≤ c  ⇔  ℓ ≤ 2(t_c − b) − 1
    v = np.minimum(room, 2 * (t_c - b) - 1)
    odd = np.where(v >= 1, v - (1 - v % 2), 0)
    # even ℓ: s[b+ℓ/2−1] + s[b+ℓ/2] ≤ 2c  ⇔  b + ℓ/2 − 1 < p,  p = #{k : s_k + s_{k+1} ≤ 2c}
    # (halving a float sum is exact, so this is the same test as 0.5·(s_k + s_{k+1}) ≤ c)
    p = np.searchsorted(s[:-1] + s[1:], 2.0 * centre, side="right") if n > 1 else 0
    w = np.minimum(room, 2 * (p - b))
    even = np.where(w >= 2, w - w % 2, 0)
    return np.maximum(odd, even)


def _window_medians(s: np.ndarray, start: np.ndarray, ell: np.ndarray, convention: Convention) -> np.ndarray:
    lo = s[start + (ell + 1) // 2 - 1]
    if convention is Convention.LOW:
        return lo
    return 0.5 * (lo + s[start + ell // 2])


def _median_chain(s: np.ndarray, delta: float, centre: float, convention: Convention) -> float:
    # a pair sum beyond the float range becomes ±inf, which compares and clamps correctly
    with np.errstate(over="ignore", invalid="ignore"):
        value = _chain(s, delta, centre, convention)
    return finite_result(value, s, "median")


def _chain(s: np.ndarray, delta: float, centre: float, convention: Convention) -> float:
    n = s.size
    if n == 0:
        return centre
    longest = _longest_low_windows(s, centre, convention)[:n]   # b = n is the empty window
    bottom = np.zeros(n, dtype=bool)
    b = np.flatnonzero(longest > 0)
    bottom[n - longest[b]] = True                                # step n − ℓ*(b) removes the bottom
    k = np.arange(n, dtype=np.int64)
    start = np.cumsum(bottom) - bottom                           # bottoms removed before step k
    mu = _window_medians(s, start, n - k, convention)
    shift = np.where(bottom, -delta, delta)
    lo = np.where(bottom, mu, -np.inf)
    hi = np.where(bottom, np.inf, mu)
    while shift.size > 1:                                        # φ_0 ∘ φ_1 ∘ … ∘ φ_{n−1}
        if shift.size % 2:
            shift = np.append(shift, 0.0)
            lo = np.append(lo, -np.inf)
            hi = np.append(hi, np.inf)
        so, ao, bo = shift[0::2], lo[0::2], hi[0::2]
        si, ai, bi = shift[1::2], lo[1::2], hi[1::2]
        shift = so + si
        lo = np.minimum(np.maximum(ai + so, ao), bo)
        hi = np.minimum(np.maximum(bi + so, ao), bo)
    return float(min(max(centre + shift[0], lo[0]), hi[0]))


def spf_median(sorted_data: Any, delta: float, centre: float, *,
               convention: Union[str, Convention] = Convention.AVG) -> float:
    """f̂(D) for the median with uniform Δ and centre c, O(n) on presorted records (Lemma 5.4)."""
    return _median_chain(_check_sorted(sorted_data), check_sensitivity_delta(delta), check_centre(centre),
                         Convention.parse(convention))


def median_exact_condition(sorted_data: Any, delta: float, centre: float, *,
                           convention: Union[str, Convention] = Convention.AVG) -> bool:
    """Theorem 1.6's sufficient condition for f̂(D) = med(D), as reconstructed in docs/math.md#spf-median [R].

    With P_j = {x_1..x_j} and f(P_0) := c: if med(D) ≥ c, let k₀ = min{k ≥ 1 : med(P_{n−k}) ≤ c};
    the condition is ``med(D) − med(P_{n−k}) ≤ kΔ`` for 1 ≤ k ≤ k₀ (prefix medians fall by at
    most Δ per removed top record until the chain crosses c). The mirror uses suffixes
    S_j = {x_{n−j+1}..x_n} when med(D) < c. True means f̂(D) = med(D); False says nothing.
    """
    s = _check_sorted(sorted_data)
    d, c = check_sensitivity_delta(delta), check_centre(centre)
    conv = Convention.parse(convention)
    n = s.size
    if n == 0:
        raise InvalidArgument.bad("sorted_data", "[]", "non-empty (the median of ∅ is undefined)")
    with np.errstate(over="ignore", invalid="ignore"):   # an overflowed median gives False (no claim)
        return _exact(s, d, c, conv)


def _exact(s: np.ndarray, d: float, c: float, conv: Convention) -> bool:
    n = s.size
    med = median_sorted(s, conv)
    k = np.arange(1, n + 1, dtype=np.int64)
    ell = n - k                                                   # sizes of P_{n−k} / S_{n−k}
    part = np.full(n, c)
    has = ell > 0
    if med >= c:
        part[has] = _window_medians(s, np.zeros(has.sum(), dtype=np.int64), ell[has], conv)
        gap = med - part
        reached = part <= c
    else:
        part[has] = _window_medians(s, k[has], ell[has], conv)
        gap = part - med
        reached = part >= c
    k0 = int(np.argmax(reached)) + 1                              # reached[n−1] is True (f(∅) = c)
    return bool(np.all(gap[:k0] <= k[:k0] * d))


@dataclass(frozen=True, slots=True)
class MedianSPF:
    """The preprocessed median by the O(n) chain: ``MedianSPF(0.5, 0.0)(data) -> float``.

    Sorts the records (O(n log n)), then Lemma 5.4's chain. Claim: global add-remove
    sensitivity Δ (``sensitivity``); equal to ``OrderedSPF("median", Δ, c, convention=...)``.
    """

    delta: float
    centre: float
    convention: Convention = Convention.AVG
    sensitivity: SensitivityBound = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "delta", check_sensitivity_delta(self.delta))
        object.__setattr__(self, "centre", check_centre(self.centre))
        object.__setattr__(self, "convention", Convention.parse(self.convention))
        object.__setattr__(self, "sensitivity", SensitivityBound(self.delta))

    @property
    def name(self) -> str:
        return f"spf-median-chain(Δ={self.delta:g}, c={self.centre:g}, {self.convention.value})"

    def __call__(self, data: Any) -> float:
        return _median_chain(np.sort(check_data(data)), self.delta, self.centre, self.convention)

    def exact(self, data: Any) -> bool:
        """Theorem 1.6's condition on these records (sorted here)."""
        return median_exact_condition(np.sort(check_data(data)), self.delta, self.centre,
                                      convention=self.convention)
