"""Accuracy of the preprocessed mean (Cummings and Durfee 2020, Def 5.8, Lemmas 5.9-5.13, Theorem 1.7) [R, D, docs/math.md#spf-mean].

Sort the records ``x_1 ≤ … ≤ x_n``; let μ_j = mean(x_1..x_j) and ν_j = mean(x_{n−j+1}..x_n),
with μ_0 = ν_0 = c (the centre, f̂(∅)).

* **Mean-bounding functions (Def 5.8)**: repeatedly remove the max (f_low: only the upper clamp
  ``f_low(D) = min(mean(D), f_low(D∖x_max) + Δ)``) or the min (f_up, only the lower clamp).
  Unrolled: ``f_low = min_{0≤j≤n} (μ_j + (n−j)Δ)`` and ``f_up = max_{0≤j≤n} (ν_j − (n−j)Δ)``, and
  ``f_low ≤ f̂ ≤ f_up`` (Lemma 5.9).
* **Error (Theorem 1.7)**: ``|mean(D) − f̂(D)| ≤ max(B↑, B↓)`` with
  ``B↑ = (μ_n − c − nΔ)⁺ + Σ_{i=2}^n ((x_i − μ_{i−1})/i − Δ)⁺`` and
  ``B↓ = (c − μ_n − nΔ)⁺ + Σ_{i=2}^n ((ν_{i−1} − x_{n−i+1})/i − Δ)⁺``: the mean must be near c,
  and each record's marginal effect on the running mean, less Δ, adds up.
* **Exactness (Lemma 5.13 / Theorem 1.7)**: if ``x_n − x_1 ≤ nΔ`` and ``|μ_n − c| ≤ nΔ`` then
  f̂(D) = mean(D): twice the naive clipping window, as Cummings and Durfee's "doubled range" remark says.

The seed's formulas are stripped; these are docs/math.md#spf-mean's reconstructions, checked there on
thousands of cases and here by tests against the general algorithm.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.errors import InvalidArgument

from .ordered import check_centre, check_sensitivity_delta
from .statistics import check_data

__all__ = ["MeanBounds", "mean_bounds", "mean_error_bound", "mean_exact_condition"]


@dataclass(frozen=True, slots=True)
class MeanBounds:
    """``low = f_low(D) ≤ f̂(D) ≤ up = f_up(D)`` (Def 5.8, Lemma 5.9)."""

    low: float
    up: float


def _running(data: Any, delta: Any, centre: Any, *, nonempty: bool):
    s = np.sort(check_data(data))
    d, c = check_sensitivity_delta(delta), check_centre(centre)
    if nonempty and s.size == 0:
        raise InvalidArgument.bad("data", "[]", "non-empty (the mean of ∅ is undefined)")
    j = np.arange(1, s.size + 1)
    mu = np.concatenate(([c], np.cumsum(s) / j))                 # μ_0 = c, μ_1..μ_n
    nu = np.concatenate(([c], np.cumsum(s[::-1]) / j))           # ν_0 = c, ν_1..ν_n
    return s, d, c, mu, nu


def mean_bounds(data: Any, delta: float, centre: float) -> MeanBounds:
    """f_low and f_up of Definition 5.8 in closed form, O(n log n)."""
    s, d, c, mu, nu = _running(data, delta, centre, nonempty=False)
    rest = (s.size - np.arange(s.size + 1)) * d                 # (n − j)Δ
    return MeanBounds(float(np.min(mu + rest)), float(np.max(nu - rest)))


def mean_error_bound(data: Any, delta: float, centre: float) -> float:
    """Theorem 1.7's bound ``max(B↑, B↓)`` on |mean(D) − f̂(D)| (docs/math.md#spf-mean [R, D])."""
    s, d, c, mu, nu = _running(data, delta, centre, nonempty=True)
    n = s.size
    i = np.arange(2, n + 1)
    up = max(mu[n] - c - n * d, 0.0) + float(np.sum(np.maximum((s[i - 1] - mu[i - 1]) / i - d, 0.0)))
    down = max(c - mu[n] - n * d, 0.0) + float(np.sum(np.maximum((nu[i - 1] - s[n - i]) / i - d, 0.0)))
    return max(up, down)


def mean_exact_condition(data: Any, delta: float, centre: float) -> bool:
    """Theorem 1.7's exactness condition: ``x_n − x_1 ≤ nΔ`` and ``|mean − c| ≤ nΔ`` ⇒ f̂ = mean."""
    s, d, c, mu, _ = _running(data, delta, centre, nonempty=True)
    n = s.size
    return bool(s[-1] - s[0] <= n * d and abs(mu[n] - c) <= n * d)
