"""Negative controls: functions with a planted sensitivity bug and the (false) bound they claim.

They measure the power of :func:`dpaudit.check_sensitivity` (tests and
``benchmarks/sensitivity_speed.py``) and can be audited like any target. Each mimics a real
mistake in DP glue code and states its claim as ``.sensitivity`` (a SensitivityBound):

* :class:`UpperOnlyMeanSPF`: Cummings and Durfee's (2020) sensitivity preprocessing of the mean (Definition 3.1,
  Lemma 5.2; docs/math.md#spf-definition, #database-ordered) that clamps f(D) only from above, ``f̂ = min(f(D), U(D))``, and
  forgets ``L(D)``. Adding a record far below the others pulls f̂ down by more than Δ.
* :class:`DataClampedMean`: a "clipped" mean whose clamp range [m − w, m + w] is centred on the
  data's own median m, divided by a public n. The claim 2w/n assumes a fixed range; moving the
  median moves every clamped record.
* :class:`DoubledMedianUtility`: the median utility ``u(D, r) = −|C<(D, r) − C>(D, r)|`` (docs/math.md#quantile-utility
  with q = ½, up to the factor) computed on the records counted twice, a hidden factor of 2: it
  claims the add/remove Δu = 1 of the plain utility but has Δu = 2 (docs/math.md#em-range: an exponential
  mechanism calibrated with it spends 2ε).

The raw statistics that these bugs try to protect are controls too, with no preprocessing at
all: :func:`raw_median` and :func:`raw_mean` (Σx / |D|: its denominator is the data's own size)
have add/remove sensitivity up to the domain's width, and :func:`unclipped_sum` has no bound.
``audits/preprocessing.py`` audits variants defined on the empty dataset as well
(:func:`raw_median_or_centre`, :func:`mean_over_count`) and :func:`spf_median_upper_only`, the
O(n) median chain of docs/math.md#spf-median with its lower clamp left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpaudit.claims import SensitivityBound

__all__ = ["UpperOnlyMeanSPF", "DataClampedMean", "DoubledMedianUtility", "CONTROLS",
           "raw_median", "raw_mean", "unclipped_sum", "raw_median_or_centre", "mean_over_count",
           "spf_median_upper_only"]


def raw_median(data):
    """The median with no preprocessing."""
    return float(np.median(data))


def raw_mean(data):
    """Σx / |D|: the denominator is the data's own size (undefined on the empty dataset)."""
    return float(np.sum(data) / len(data))


def unclipped_sum(data):
    """Σx with no clipping."""
    return float(np.sum(data))



def raw_median_or_centre(data) -> float:
    """The median of the records (AVG), no preprocessing; the empty dataset maps to the centre 0.5."""
    x = np.asarray(data, dtype=float)
    return float(np.median(x)) if x.size else 0.5


def mean_over_count(data) -> float:
    """Σx / |D|: a mean divided by the data-dependent count, as if |D| were always 10."""
    x = np.asarray(data, dtype=float)
    return float(x.sum() / max(x.size, 1))


def spf_median_upper_only(data, delta: float = 0.1, centre: float = 0.5) -> float:
    """The median chain of docs/math.md#spf-median with the lower clamp left out: g = min(μ, g(i, j−1) + Δ) when
    μ > c, but plain μ (instead of max(μ, g(i+1, j) − Δ)) when μ ≤ c."""
    s = np.sort(np.asarray(data, dtype=float))
    if s.size == 0:
        return centre
    mu = float(np.median(s))
    if mu > centre:
        return min(mu, spf_median_upper_only(s[:-1], delta, centre) + delta)
    return mu

@dataclass(frozen=True, slots=True)
class UpperOnlyMeanSPF:
    """Preprocessed mean with only the upper clamp: on the sorted records x_1 ≤ … ≤ x_n,
    ``F(i, j) = min(mean(x_i..x_j), F(i+1, j) + Δ, F(i, j−1) + Δ)``, ``F(i, i−1) = centre``
    (Lemma 5.2's DP with the lower clamp L dropped). Claims add/remove sensitivity Δ (false)."""

    delta: float
    centre: float = 0.0
    sensitivity: SensitivityBound = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sensitivity", SensitivityBound(self.delta))

    def __call__(self, data: Any) -> float:
        x = np.sort(np.asarray(data, dtype=float))
        n = x.size
        if n == 0:
            return float(self.centre)
        prefix = np.concatenate([[0.0], np.cumsum(x)])
        below = np.full(n + 1, float(self.centre))     # F over windows of length ℓ − 1
        for ell in range(1, n + 1):
            i = np.arange(n - ell + 1)
            means = (prefix[i + ell] - prefix[i]) / ell
            below = np.minimum(means, np.minimum(below[1:n - ell + 2], below[:n - ell + 1]) + self.delta)
        return float(below[0])


@dataclass(frozen=True, slots=True)
class DataClampedMean:
    """``Σ_i clamp(x_i, m − w, m + w) / n`` with m the median of the data (0 when empty) and n a
    public size. Claims add/remove sensitivity 2w/n (false: it holds only for a fixed range)."""

    width: float
    n: int
    sensitivity: SensitivityBound = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sensitivity", SensitivityBound(2.0 * self.width / self.n))

    def __call__(self, data: Any) -> float:
        x = np.asarray(data, dtype=float)
        m = float(np.median(x)) if x.size else 0.0
        return float(np.sum(np.clip(x, m - self.width, m + self.width)) / self.n)


@dataclass(frozen=True, slots=True)
class DoubledMedianUtility:
    """``u(D, r) = −|C<(D ⊎ D, r) − C>(D ⊎ D, r)|`` (every record counted twice). Claims the
    add/remove Δu = 1 of the median utility (false: Δu = 2)."""

    sensitivity: SensitivityBound = field(default_factory=lambda: SensitivityBound(1.0))

    def __call__(self, data: Any, r: float) -> float:
        x = np.asarray(data, dtype=float)
        twice = np.concatenate([x, x])
        return -abs(float(np.count_nonzero(twice < r)) - float(np.count_nonzero(twice > r)))


#: name -> (control, keyword arguments for check_sensitivity)
CONTROLS: dict[str, tuple[Any, dict]] = {
    "upper-only-clamp-spf-mean": (UpperOnlyMeanSPF(0.25, 0.0),
                                  dict(neighbours="add-remove", domain=(-10.0, 10.0), sizes=12)),
    "data-dependent-clamp-mean": (DataClampedMean(1.0, 10),
                                  dict(neighbours="add-remove", domain=(0.0, 10.0), sizes=(0, 10))),
    "doubled-em-utility": (DoubledMedianUtility(),
                           dict(neighbours="add-remove", domain=(0.0, 1.0), sizes=12,
                                outputs=(0.0, 1.0))),
}
