"""Duff for the median: the exponential mechanism with the dataset-distance utility (Muñoz Medina and Gillenwater (2020) Def 8;
docs/math.md#duff).

    u_d(x, S) = −c(x),   c(x) = min{ d_AR(S, S') : T(S') = x, records of S' in [a, b] },

the add/remove distance to the nearest dataset whose median is x. Δu = 1 (triangle inequality),
so the mechanism with density ∝ exp(−ε·c(x)/2) on [a, b] is ε-DP under add/remove (docs/math.md#duff-definition).

Closed forms (docs/math.md#duff-median-cost), with L = C<(S, x), E = C=(S, x), G = C>(S, x), D = L − G:

* LOW (T = s_⌈n/2⌉): c = min_{D'} |D − D'| + (h(D') − E)⁺, h(D') = max(1, D' + 1, −D'), which is
  c = max(D + 1 − E, −D − E, 0); on a gap (E = 0): D + 1 if D ≥ 0, −D if D < 0.
* AVG (T = mean of the two middle values): c = min(c₁, c₂), c₁ = (|D| + 1 − E)⁺ (x becomes a
  middle element) and c₂ = |D| + E when x can be the midpoint of two middle elements y < x < z:
  feasible iff D > 0 and x ≤ (y₀ + min(z₀, b))/2, or D < 0 and x ≥ (max(y₀, a) + z₀)/2, or
  D = E = 0 and x = med(S), where y₀ is the largest record below x and z₀ the smallest above
  (absent: −∞ / +∞). On a gap with D ≠ 0 the half nearer the median costs |D| and the far half
  |D| + 1 (split at the gap's midpoint); with D = 0 the gap costs 1.

The density is piecewise constant on at most 2n + 2 cells (docs/math.md#duff-sampler), sampled exactly like the
quantile mechanism: cell weights ℓ_j·exp(−ε c_j/2), log-sum-exp, uniform within the cell.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from dpaudit.claims import Domain, Neighbours, check_epsilon
from dpaudit.errors import InvalidArgument
from dpaudit.laws import PiecewiseConstantLaw
from dpaudit.spec import MechanismSpec
from ._base import PiecewiseLawMethods, PureAddRemove
from .exponential import _as_data, piecewise_em_law
from .analysis.smooth_sensitivity import _check_convention, median_of

__all__ = ["duff_cost", "duff_utility", "duff_pieces", "Duff"]


def _domain(domain: Any) -> Domain:
    return Domain.parse(domain)


def duff_cost(data: Any, x: Any, convention: str = "avg", domain: Any = (0.0, 1.0)):
    """c(x): the add/remove distance from ``data`` (clamped into ``domain``) to the nearest dataset
    with records in ``domain`` whose median (``convention`` "low" or "avg") is x (docs/math.md#duff-median-cost).

    ``x`` may be a number (returns a float) or an array (returns an array). c = +inf outside the
    domain. Sensitivity 1 in ``data`` under add/remove.
    """
    conv = _check_convention(convention)
    dom = _domain(domain)
    s = np.sort(np.clip(_as_data(data), dom.lo, dom.hi))
    xs = np.asarray(x, dtype=float)
    if np.any(np.isnan(xs)):
        raise InvalidArgument.bad("x", x, "numbers (no NaN)")
    c = _cost(s, xs.reshape(-1), conv, dom.lo, dom.hi).reshape(xs.shape)
    return float(c) if c.ndim == 0 else c


def duff_utility(data: Any, x: Any, convention: str = "avg", domain: Any = (0.0, 1.0)):
    """u_d(x, S) = −c(x) (Muñoz Medina and Gillenwater (2020) Def 8), with c from :func:`duff_cost`."""
    c = duff_cost(data, x, convention, domain)
    return -c


def _cost(s: np.ndarray, x: np.ndarray, conv: str, a: float, b: float) -> np.ndarray:
    n = s.size
    L = np.searchsorted(s, x, side="left")
    R = np.searchsorted(s, x, side="right")
    G = n - R
    E = R - L
    D = (L - G).astype(float)
    Ef = E.astype(float)
    if conv == "low":
        c = np.maximum(np.maximum(D + 1 - Ef, -D - Ef), 0.0)
    else:
        c1 = np.maximum(np.abs(D) + 1 - Ef, 0.0)
        y0 = np.where(L > 0, s[np.maximum(L - 1, 0)] if n else 0.0, -np.inf)
        z0 = np.where(G > 0, s[np.minimum(R, n - 1)] if n else 0.0, np.inf)
        with np.errstate(invalid="ignore"):
            feasible = ((D > 0) & (x <= (y0 + np.minimum(z0, b)) / 2)) \
                | ((D < 0) & (x >= (np.maximum(y0, a) + z0) / 2)) \
                | ((D == 0) & (E == 0) & (L > 0) & (x == (y0 + z0) / 2))
        c = np.where(feasible, np.minimum(c1, np.abs(D) + Ef), c1)
    return np.where((x < a) | (x > b), np.inf, c)


def duff_pieces(data: Any, convention: str = "avg", domain: Any = (0.0, 1.0)) -> tuple[np.ndarray, np.ndarray]:
    """The cost as a step function on [a, b] (docs/math.md#duff-median-cost, #duff-sampler): ``edges`` e_0 ≤ … and ``costs`` with
    c(x) = costs[j] for x in the open cell (edges[j], edges[j+1]) (the finitely many data points
    and split points, a null set, are left out). LOW: one cell per gap (n + 1 cells); AVG: each
    gap split at its midpoint (2n + 2 cells). Zero-length cells (ties) may appear."""
    conv = _check_convention(convention)
    dom = _domain(domain)
    s = np.sort(np.clip(_as_data(data), dom.lo, dom.hi))
    n = s.size
    e = np.concatenate([[dom.lo], s, [dom.hi]])
    D = 2.0 * np.arange(n + 1) - n
    if conv == "low":
        return e, np.where(D >= 0, D + 1, -D)
    mid = (e[:-1] + e[1:]) / 2
    edges = np.empty(2 * n + 3)
    edges[0::2], edges[1::2] = e, mid
    near = np.where(D == 0, 1.0, np.abs(D))
    far = np.where(D == 0, 1.0, np.abs(D) + 1)
    costs = np.empty(2 * n + 2)
    costs[0::2] = np.where(D > 0, near, far)   # left half of each gap
    costs[1::2] = np.where(D > 0, far, near)   # right half
    return edges, costs


@dataclass(frozen=True, slots=True)
class Duff(PureAddRemove, PiecewiseLawMethods):
    """Duff for the median on [lo, hi]: density ∝ exp(−ε·c(x)/2) (Muñoz Medina and Gillenwater (2020) Def 7–8; docs/math.md#duff).

    ε-DP under add/remove (Δu = 1). ``convention`` chooses the even-size median ("low" or "avg";
    Muñoz Medina and Gillenwater (2020) does not say, docs/math.md#even-size-convention). Records outside [lo, hi] are clamped.
    """

    epsilon: float
    lo: float = 0.0
    hi: float = 1.0
    convention: str = "avg"

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        dom = Domain(self.lo, self.hi)
        object.__setattr__(self, "lo", dom.lo)
        object.__setattr__(self, "hi", dom.hi)
        _check_convention(self.convention)

    @property
    def sensitivity(self) -> float:
        """Δu of the Duff utility: 1."""
        return 1.0

    @property
    def domain(self) -> Domain:
        return Domain(self.lo, self.hi)

    def cost(self, data: Any, x: Any):
        return duff_cost(data, x, self.convention, self.domain)

    def target(self, data: Any) -> float:
        """T(S): the median under this convention (the value Duff estimates)."""
        return median_of(np.clip(_as_data(data), self.lo, self.hi), self.convention)

    def law(self, data: Any) -> PiecewiseConstantLaw:
        """The exact output law: density exp(−ε c_j/2 − LSE) on cell j (docs/math.md#duff-sampler)."""
        edges, costs = duff_pieces(data, self.convention, self.domain)
        return piecewise_em_law(edges, -costs, self.epsilon / 2.0)

    def spec(self, *, size: int = 9, name: Optional[str] = None) -> MechanismSpec:
        """Black box ``f(data, rng, size=None)``: Duff's private median of records in [lo, hi],
        claim ε-DP under add/remove; ``distribution(data)`` is the exact law."""
        mech = self

        def duff_median(data, rng, size=None):
            return mech.sample(data, rng, size=size)

        return MechanismSpec.from_function(
            duff_median, name=name or f"duff-median({self.convention})", epsilon=self.epsilon,
            delta=0.0, neighbours=Neighbours.ADD_REMOVE, domain=self.domain, size=size,
            distribution=lambda data: mech.law(data), output="real")
