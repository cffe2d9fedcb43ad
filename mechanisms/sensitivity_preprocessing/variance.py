"""The preprocessed variance in O(n²) (Cummings and Durfee 2020, §6: Lemmas 6.4, 6.5, 6.9) [R, docs/math.md#spf-variance].

``Var(D) = (1/n) Σ (x_i − μ)²`` with f̂(∅) = 0. Variance is not database-ordered, but
(Lemma 6.5) f̂ ≤ Var everywhere, and (Fact 6.2) removing the min or the max lowers the variance
most, so only the upper clamp matters and only contiguous ranges of the sorted records occur:

    Lemma 6.4:  f̂(D) = min( Var(D), min(f̂(D ∖ x_min), f̂(D ∖ x_max)) + Δ ).

Unrolled, this is Lemma 6.9 in closed form [D]: ``f̂(D) = min over contiguous ranges W of the
sorted records (W = ∅ allowed, Var(∅) = 0) of Var(W) + (|D| − |W|)·Δ``; the minimising W is the
D' of Lemma 6.9 and ``Var(D) − f̂(D) = max_W (Var(D) − Var(W) − (|D|−|W|)Δ)⁺`` is the exact error
(Cummings and Durfee's closed-form Theorem 1.8 constants could not be recovered, docs/math.md#spf-variance).

Both run along the anti-diagonals with running sums (Fact 6.7): Welford's update
``μ' = μ + (x−μ)/ℓ, M₂' = M₂ + (x−μ)(x−μ')`` extends every window of length ℓ−1 by one record in
one numpy step (numerically stable, unlike Σx² − (Σx)²/ℓ).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpaudit.claims import SensitivityBound

from .ordered import check_sensitivity_delta
from .statistics import check_data, finite_result

__all__ = ["spf_variance", "variance_witness", "VarianceWitness", "VarianceSPF", "variance"]


def variance(data: Any) -> float:
    """Var(D) = (1/n) Σ (x_i − μ)², and 0 for the empty database (docs/math.md#spf-variance)."""
    x = check_data(data)
    return float(np.var(x)) if x.size else 0.0


@dataclass(frozen=True, slots=True)
class VarianceWitness:
    """Lemma 6.9's D': the sorted records ``[start, start + length)``; f̂(D) = Var(D') + (n − length)Δ."""

    start: int
    length: int
    value: float


def _sweep(s: np.ndarray, delta: float, witness: bool) -> tuple[float, VarianceWitness | None]:
    """Lemma 6.4's DP along the anti-diagonals (and Lemma 6.9's witness when asked)."""
    with np.errstate(over="ignore", invalid="ignore"):   # inf variances clamp away; nan is caught below
        value, best = _diagonals(s, delta, witness)
    return finite_result(value, s, "variance"), best


def _diagonals(s: np.ndarray, delta: float, witness: bool) -> tuple[float, VarianceWitness | None]:
    n = s.size
    F = np.zeros(n + 1)                                   # f̂(∅) = 0 for every empty range
    mean = s.copy()                                      # windows of length 1
    m2 = np.zeros(n)
    best = VarianceWitness(0, 0, n * delta) if witness else None
    for ell in range(1, n + 1):
        count = n - ell + 1
        if ell > 1:                                      # Welford: extend s[i:i+ℓ−1] by s[i+ℓ−1]
            x = s[ell - 1:ell - 1 + count]
            prev = mean[:count]
            d1 = x - prev
            mean = prev + d1 / ell
            m2 = m2[:count] + d1 * (x - mean)
        var = np.maximum(m2 / ell, 0.0)
        F = np.minimum(var, np.minimum(F[1:], F[:-1]) + delta)
        if witness:
            i = int(np.argmin(var))
            cand = float(var[i]) + (n - ell) * delta
            if cand < best.value:
                best = VarianceWitness(i, ell, cand)
    return float(F[0]), best


def spf_variance(data: Any, delta: float) -> float:
    """f̂(D) for the variance with uniform Δ and f̂(∅) = 0, by Lemma 6.4's DP in O(n²)."""
    return _sweep(np.sort(check_data(data)), check_sensitivity_delta(delta), False)[0]


def variance_witness(data: Any, delta: float) -> VarianceWitness:
    """Lemma 6.9's D' (a contiguous range of the sorted records) and its value min_W(Var(W) + (n−|W|)Δ)."""
    return _sweep(np.sort(check_data(data)), check_sensitivity_delta(delta), True)[1]


@dataclass(frozen=True, slots=True)
class VarianceSPF:
    """The preprocessed variance: ``VarianceSPF(0.1)(data) -> float`` (Lemma 6.4).

    Claim: global add-remove sensitivity Δ (``sensitivity``). ``raw`` is the variance itself.
    """

    delta: float
    sensitivity: SensitivityBound = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "delta", check_sensitivity_delta(self.delta))
        object.__setattr__(self, "sensitivity", SensitivityBound(self.delta))

    @property
    def name(self) -> str:
        return f"spf-variance(Δ={self.delta:g})"

    def __call__(self, data: Any) -> float:
        return _sweep(np.sort(check_data(data)), self.delta, False)[0]

    def raw(self, data: Any) -> float:
        return variance(data)
