"""The O(n²) DP for database-ordered functions (Cummings and Durfee 2020, Def 5.1, Lemma 5.2, Cor 5.3) [R, docs/math.md#database-ordered].

f is database-ordered when, for all D and i, j ∈ D, either f(D'∖i) ≥ f(D'∖j) for every D' ⊆ D
holding both, or ≤ for every such D'. For such f with a uniform Δ, sort the records
``x_1 ≤ … ≤ x_n`` (the entry-ordering); then (Lemma 5.2)

    U(D) = f̂(D ∖ x_max) + Δ,   L(D) = f̂(D ∖ x_min) − Δ,

and every subproblem is a contiguous range of the sorted records:

    F(i, i−1) = c,   F(i, j) = clamp(f(x_i..x_j), F(i+1, j) − Δ, F(i, j−1) + Δ),   f̂(D) = F(1, n).

Mean, α-trimmed mean, median (LOW or AVG), max and min are database-ordered (Cor 5.3). The DP
here walks the anti-diagonals j − i = ℓ − 1 (ℓ = 1, …, n): each is one vectorised numpy step over
all windows of length ℓ, with the statistic read in O(1) per window from slices and accumulated window sums.
Total O(n log n + n²) time, O(n) memory. With uniform Δ, f̂ depends only on the multiset of
records, so ``OrderedSPF(...)(data)`` is well defined on any 1-D array.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Union

import numpy as np

from dpaudit.claims import SensitivityBound
from dpaudit.errors import InvalidArgument

from .statistics import (Convention, Statistic, WindowSums, check_alpha, check_data, finite_result,
                         statistic_value, window_values)

__all__ = ["spf_ordered", "OrderedSPF", "check_sensitivity_delta", "check_centre"]


def check_sensitivity_delta(delta: Any, name: str = "delta") -> float:
    if isinstance(delta, bool) or not isinstance(delta, (int, float, np.integer, np.floating)) \
            or not math.isfinite(float(delta)) or float(delta) < 0:
        raise InvalidArgument.bad(name, delta, "a finite number >= 0")
    return float(delta)


def check_centre(centre: Any, name: str = "centre") -> float:
    if isinstance(centre, bool) or not isinstance(centre, (int, float, np.integer, np.floating)) \
            or not math.isfinite(float(centre)):
        raise InvalidArgument.bad(name, centre, "a finite number (the value of f̂ on the empty database)")
    return float(centre)


def _ordered_dp(s: np.ndarray, stat: Statistic, delta: float, centre: float, alpha: float,
                convention: Convention) -> float:
    """Anti-diagonal DP of Lemma 5.2 on sorted s. F holds F(i, i+ℓ−1) for i = 0..n−ℓ."""
    n = s.size
    sums = WindowSums(s) if stat in (Statistic.MEAN, Statistic.TRIMMED_MEAN) else None
    F = np.full(n + 1, centre)
    with np.errstate(over="ignore", invalid="ignore"):   # ±inf clamps away; nan is caught below
        for ell in range(1, n + 1):
            fv = window_values(stat, s, ell, sums=sums, alpha=alpha, convention=convention)
            F = np.minimum(np.maximum(fv, F[1:] - delta), F[:-1] + delta)
    return finite_result(float(F[0]), s, stat.value)


def spf_ordered(data: Any, statistic: Union[str, Statistic], delta: float, centre: float, *,
                alpha: float = 0.0, convention: Union[str, Convention] = Convention.AVG) -> float:
    """f̂(D) for a database-ordered statistic with uniform Δ, in O(n²) (Lemma 5.2, Cor 5.3).

    ``data``: the records of D (any order); ``statistic``: mean, trimmed-mean (with ``alpha``),
    median (with ``convention`` 'low' or 'avg'), max or min; ``centre``: f̂(∅) (Remark 3.2).
    """
    stat = Statistic.parse(statistic)
    s = np.sort(check_data(data))
    return _ordered_dp(s, stat, check_sensitivity_delta(delta), check_centre(centre), check_alpha(alpha),
                       Convention.parse(convention))


@dataclass(frozen=True, slots=True)
class OrderedSPF:
    """A preprocessed database-ordered statistic: ``OrderedSPF("median", 0.5, 0.0)(data) -> float``.

    Claim: for every database D and record z, ``|f̂(D ∪ {z}) − f̂(D)| ≤ Δ`` (Lemma 3.5), i.e. global
    add-remove sensitivity Δ, stated as ``sensitivity`` for dpaudit's sensitivity search.
    ``raw(data)`` is the statistic itself (nan on the empty database).
    """

    statistic: Statistic
    delta: float
    centre: float
    alpha: float = 0.0
    convention: Convention = Convention.AVG
    sensitivity: SensitivityBound = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "statistic", Statistic.parse(self.statistic))
        object.__setattr__(self, "delta", check_sensitivity_delta(self.delta))
        object.__setattr__(self, "centre", check_centre(self.centre))
        object.__setattr__(self, "alpha", check_alpha(self.alpha))
        object.__setattr__(self, "convention", Convention.parse(self.convention))
        object.__setattr__(self, "sensitivity", SensitivityBound(self.delta))

    @property
    def name(self) -> str:
        extra = {Statistic.TRIMMED_MEAN: f", alpha={self.alpha:g}",
                 Statistic.MEDIAN: f", {self.convention.value}"}.get(self.statistic, "")
        return f"spf-{self.statistic.value}(Δ={self.delta:g}, c={self.centre:g}{extra})"

    def __call__(self, data: Any) -> float:
        s = np.sort(check_data(data))
        return _ordered_dp(s, self.statistic, self.delta, self.centre, self.alpha, self.convention)

    def raw(self, data: Any) -> float:
        return statistic_value(data, self.statistic, alpha=self.alpha, convention=self.convention)
