"""The exponential mechanism for quantiles on [m, M] (the EM-for-medians notes (2020), corrected; docs/math.md#quantile-utility, #quantile-sampler).

Utility (the EM-for-medians notes (2020) eq 2.2 without its additive constant; docs/math.md#quantile-utility), for level q ∈ (0, 1):

    u_q(S, r) = −|(1 − q)·C<(S, r) − q·C>(S, r)|,   C< = #{s < r}, C> = #{s > r}.

On an open gap (s_k, s_{k+1}) of the sorted data C< = k and C> = n − k, so u = −|k − qn|.
Sensitivity: Δu = 1 under replace-one (the EM-for-medians notes (2020) Thm 2, true) and max(q, 1 − q) under add/remove
(Thm 3, true *without* the constant; with eq 2.2's constant max(q, 1−q)·N it is 2·max(q, 1−q), E30).
the EM-for-medians notes (2020) eq 2.1, u = |C< − C>|, has the wrong sign (E29): :func:`quantile_utility_eq21`.

Mechanism (docs/math.md#quantile-sampler): clamp every record into [m, M] and sort; e_0 = m, e_k = s_k, e_{n+1} = M;
on cell I_k = (e_k, e_{k+1}) the density is exp(−ε|k − qn|/(2Δu)) / Z with
Z = Σ_k ℓ_k exp(−ε|k − qn|/(2Δu)) = exp(LSE(w)), w_k = ln ℓ_k − ε|k − qn|/(2Δu). It is ε-DP.
Sampling picks a cell by its mass, then a uniform point in it: O(n log n) (the sort).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from dpaudit.claims import Domain, Neighbours, PureDP, check_epsilon
from dpaudit.errors import InvalidArgument
from dpaudit.laws import PiecewiseConstantLaw
from dpaudit.spec import MechanismSpec
from ._base import PiecewiseLawMethods
from .exponential import (
    _as_data,
    em_coefficient,
    piecewise_em_law,
)

__all__ = [
    "quantile_utility",
    "quantile_utility_eq22",
    "quantile_utility_eq21",
    "quantile_sensitivity",
    "QuantileEM",
]


def _check_q(q: Any) -> float:
    try:
        v = float(q)
    except (TypeError, ValueError):
        raise InvalidArgument.bad("q", q, "a number strictly between 0 and 1") from None
    if isinstance(q, bool) or not (0.0 < v < 1.0):
        raise InvalidArgument.bad("q", q, "a number strictly between 0 and 1")
    return v


def _check_r(r: Any) -> float:
    try:
        v = float(r)
    except (TypeError, ValueError):
        raise InvalidArgument.bad("r", r, "a finite number") from None
    if not math.isfinite(v):
        raise InvalidArgument.bad("r", r, "a finite number")
    return v


def _counts(data: Any, r: Any) -> tuple[int, int, int]:
    d = _as_data(data)
    x = _check_r(r)
    return int(np.count_nonzero(d < x)), int(np.count_nonzero(d > x)), d.size


def quantile_utility(data: np.ndarray, r: float, q: float = 0.5) -> float:
    """u_q(S, r) = −|(1 − q)·C<(S, r) − q·C>(S, r)| (the EM-for-medians notes (2020) eq 2.2 without the constant;
    docs/math.md#quantile-utility). Sensitivity 1 (replace-one) and max(q, 1 − q) (add/remove)."""
    qq = _check_q(q)
    lt, gt, _ = _counts(data, r)
    return -abs((1.0 - qq) * lt - qq * gt)


def quantile_utility_eq22(data: np.ndarray, r: float, q: float = 0.5) -> float:
    """the EM-for-medians notes (2020) eq 2.2 as written: max(q, 1 − q)·N − |(1 − q)·C< − q·C>|. The same mechanism as
    :func:`quantile_utility`, but its add/remove sensitivity is 2·max(q, 1 − q), not the
    max(q, 1 − q) of the EM-for-medians notes (2020) Thm 3 (E30; counterexample q = ½, S = {1, 2, 3}, r = 0, add −1)."""
    qq = _check_q(q)
    lt, gt, n = _counts(data, r)
    return max(qq, 1.0 - qq) * n - abs((1.0 - qq) * lt - qq * gt)


def quantile_utility_eq21(data: np.ndarray, r: float) -> float:
    """the EM-for-medians notes (2020) eq 2.1 as written: |C< − C>|. Its sign is wrong (E29): it rewards outputs far from
    the median, so the exponential mechanism on it puts its mode at the ends of [m, M]."""
    lt, gt, _ = _counts(data, r)
    return float(abs(lt - gt))


def quantile_sensitivity(q: float = 0.5, neighbours: Any = Neighbours.REPLACE) -> float:
    """Δu of :func:`quantile_utility`: 1 under replace-one, max(q, 1 − q) under add/remove."""
    qq = _check_q(q)
    rel = Neighbours.parse(neighbours)
    if rel is Neighbours.REPLACE:
        return 1.0
    if rel is Neighbours.ADD_REMOVE:
        return max(qq, 1.0 - qq)
    raise InvalidArgument.bad("neighbours", neighbours, "'replace' or 'add-remove'")


@dataclass(frozen=True, slots=True)
class QuantileEM(PiecewiseLawMethods):
    """ε-DP q-quantile on [lo, hi] by the exponential mechanism (docs/math.md#quantile-sampler).

    ``neighbours="replace"`` calibrates with Δu = 1, ``"add-remove"`` with Δu = max(q, 1 − q).
    Records outside [lo, hi] are clamped (per-record clamping keeps neighbours neighbours).
    """

    epsilon: float
    q: float = 0.5
    lo: float = 0.0
    hi: float = 1.0
    neighbours: Neighbours = Neighbours.REPLACE

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "q", _check_q(self.q))
        dom = Domain(self.lo, self.hi)
        object.__setattr__(self, "lo", dom.lo)
        object.__setattr__(self, "hi", dom.hi)
        object.__setattr__(self, "neighbours", Neighbours.parse(self.neighbours))
        quantile_sensitivity(self.q, self.neighbours)  # validates the relation

    @property
    def claim(self) -> PureDP:
        return PureDP(self.epsilon)

    @property
    def sensitivity(self) -> float:
        """Δu of the utility under this mechanism's neighbour relation."""
        return quantile_sensitivity(self.q, self.neighbours)

    @property
    def domain(self) -> Domain:
        return Domain(self.lo, self.hi)

    def utility(self, data: np.ndarray, r: float) -> float:
        return quantile_utility(data, r, self.q)

    def cells(self, data: Any) -> tuple[np.ndarray, np.ndarray]:
        """Edges e_0..e_{n+1} and the utility −|k − qn| of each cell (e_k, e_{k+1})."""
        s = np.sort(np.clip(_as_data(data), self.lo, self.hi))
        edges = np.concatenate([[self.lo], s, [self.hi]])
        k = np.arange(s.size + 1, dtype=float)
        return edges, -np.abs(k - self.q * s.size)

    def law(self, data: Any) -> PiecewiseConstantLaw:
        """The exact output law: density exp(−ε|k − qn|/(2Δu))/Z on cell k (docs/math.md#quantile-sampler)."""
        edges, u = self.cells(data)
        return piecewise_em_law(edges, u, em_coefficient(self.epsilon, self.sensitivity))

    def spec(self, *, size: int = 9, name: Optional[str] = None) -> MechanismSpec:
        """Black box ``f(data, rng, size=None)``: the private q-quantile of records in [lo, hi],
        claim ε-DP under this mechanism's relation; ``distribution(data)`` is the exact law."""
        mech = self

        def quantile_em(data, rng, size=None):
            return mech.sample(data, rng, size=size)

        return MechanismSpec.from_function(
            quantile_em, name=name or f"quantile-em(q={self.q:g}, {self.neighbours.value})",
            epsilon=self.epsilon, delta=0.0, neighbours=self.neighbours, domain=self.domain,
            size=size, distribution=lambda data: mech.law(data), output="real")
