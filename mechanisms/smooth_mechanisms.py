"""Smooth-sensitivity mechanisms for the median (NRS07; Muñoz Medina and Gillenwater (2020) Prop 2, corrected; docs/math.md#ss-mechanisms).

Both release M(S) = T(S) + (SS_β(S)/α)·Z, with T the median and SS_β its smooth sensitivity
(:mod:`dpaudit.reference.analysis.smooth_sensitivity`); the output law *given the data* is a scaled Cauchy or
Laplace centred at T(S), which :meth:`law` returns.

* :class:`SmoothCauchyMedian`, pure ε: Z standard Cauchy (NRS's h ∝ 1/(1 + |z|^γ) with γ = 2).
  The privacy loss is at most α·L_s + β·L_d with L_s = L_d = 1 for γ = 2, so **α + β ≤ ε
  suffices** [D, docs/math.md#ss-mechanisms]. Defaults α = β = ε/6 (NRS STOC version); NRS full version uses
  α = ε/8, β = ε/2. Both satisfy the condition, which is validated.
* :class:`SmoothLaplaceMedian`, (ε, δ): Z ~ Lap(0, 1), α = ε/2, δ' = 2δ/(e^{ε/2} + 1) and
  β = ε/(2 ln(2/δ')) (corrected). Muñoz Medina and Gillenwater (2020) Prop 2 writes ln(2/δ) and never uses the δ' it
  defines (E1); ``beta_rule="literal"`` reproduces that version.

The relation is replace-one (LOW median, NRS07 closed form; what Muñoz Medina and Gillenwater (2020)'s experiments use, E3) or
add/remove (AVG median, docs/math.md#median-ss-add-remove).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
from scipy import stats

from dpaudit.claims import ApproxDP, Domain, Neighbours, PureDP, check_delta, check_epsilon, check_size
from dpaudit.errors import InvalidArgument
from dpaudit.laws import ContinuousLaw
from dpaudit.rng import check_generator
from dpaudit.spec import MechanismSpec
from .exponential import _as_data
from .analysis.smooth_sensitivity import (
    _check_relation,
    median_convention,
    median_of,
    median_smooth_sensitivity,
)

__all__ = ["SmoothCauchyMedian", "SmoothLaplaceMedian", "laplace_beta"]


def laplace_beta(epsilon: float, delta: float, rule: str = "corrected") -> float:
    """β for the Laplace SS mechanism: ε/(2 ln(2/δ')) with δ' = 2δ/(e^{ε/2}+1) (``"corrected"``)
    or ε/(2 ln(2/δ)) (``"literal"``, Muñoz Medina and Gillenwater (2020) Prop 2 as printed, E1)."""
    eps = check_epsilon(epsilon)
    d = check_delta(delta)
    if d == 0:
        raise InvalidArgument.bad("delta", delta, "a number in (0, 1) for the Laplace SS mechanism")
    if rule == "corrected":
        d_eff = 2.0 * d / (math.exp(eps / 2.0) + 1.0)
    elif rule == "literal":
        d_eff = d
    else:
        raise InvalidArgument.bad("beta_rule", rule, "'corrected' or 'literal'")
    return eps / (2.0 * math.log(2.0 / d_eff))


class _SmoothMedian:
    """Behaviour shared by the two SS mechanisms (needs lo, hi, neighbours, alpha, beta,
    _noise, _family on the concrete class)."""

    __slots__ = ()

    def _setup(self) -> None:
        dom = Domain(self.lo, self.hi)
        object.__setattr__(self, "lo", dom.lo)
        object.__setattr__(self, "hi", dom.hi)
        object.__setattr__(self, "neighbours", _check_relation(self.neighbours))

    @property
    def domain(self) -> Domain:
        return Domain(self.lo, self.hi)

    @property
    def convention(self) -> str:
        """``"low"`` under replace-one, ``"avg"`` under add/remove (docs/math.md#median-ss-replace-one, #median-ss-add-remove)."""
        return median_convention(self.neighbours)

    def target(self, data: Any) -> float:
        """T(S): the median of the clamped records."""
        return median_of(np.clip(_as_data(data), self.lo, self.hi), self.convention)

    def smooth_sensitivity(self, data: Any) -> float:
        return median_smooth_sensitivity(data, self.beta, self.lo, self.hi, self.neighbours)

    def noise_scale(self, data: Any) -> float:
        """SS_β(S)/α."""
        return self.smooth_sensitivity(data) / self.alpha

    def sample(self, data: Any, rng: np.random.Generator, size: Optional[int] = None):
        """T(S) + (SS_β(S)/α)·Z, vectorised; ``size=None`` gives one float."""
        check_generator(rng)
        t, scale = self.target(data), self.noise_scale(data)
        z = self._noise(rng, 1 if size is None else check_size(size))
        out = t + scale * z
        return float(out[0]) if size is None else out

    def law(self, data: Any) -> ContinuousLaw:
        """The output law given ``data``: the noise law located at T(S), scaled by SS_β/α."""
        scale = self.noise_scale(data)
        if not scale > 0:
            raise InvalidArgument.bad("data", data, "data whose smooth sensitivity does not underflow to 0")
        t = self.target(data)
        return ContinuousLaw(self._family(loc=t, scale=scale), (t,))

    def log_prob(self, data: Any, y: Any) -> np.ndarray:
        """ln p(y | S): the log-density of ``law(data)``."""
        return self.law(data).log_prob(y)

    def _spec(self, claim, size: int, name: str) -> MechanismSpec:
        mech = self

        def smooth_median(data, rng, size=None):
            return mech.sample(data, rng, size=size)

        return MechanismSpec.from_function(
            smooth_median, name=name, epsilon=claim.epsilon, delta=claim.delta,
            neighbours=self.neighbours, domain=self.domain, size=size,
            distribution=lambda data: mech.law(data), output="real")


@dataclass(frozen=True, slots=True)
class SmoothCauchyMedian(_SmoothMedian):
    """Pure ε-DP median: T(S) + (SS_β(S)/α)·Cauchy (docs/math.md#ss-mechanisms). Requires α + β ≤ ε."""

    epsilon: float
    lo: float = 0.0
    hi: float = 1.0
    neighbours: Neighbours = Neighbours.REPLACE
    alpha: Optional[float] = None
    beta: Optional[float] = None

    def __post_init__(self) -> None:
        eps = check_epsilon(self.epsilon)
        a = eps / 6.0 if self.alpha is None else check_epsilon(self.alpha, "alpha")
        b = eps / 6.0 if self.beta is None else check_epsilon(self.beta, "beta")
        if a + b > eps * (1 + 1e-12):
            raise InvalidArgument(f"alpha + beta must be <= epsilon for the Cauchy SS mechanism "
                                  f"(docs/math.md#ss-mechanisms), got alpha={a!r}, beta={b!r}, epsilon={eps!r}")
        object.__setattr__(self, "epsilon", eps)
        object.__setattr__(self, "alpha", a)
        object.__setattr__(self, "beta", b)
        self._setup()

    @property
    def claim(self) -> PureDP:
        return PureDP(self.epsilon)

    @staticmethod
    def _noise(rng: np.random.Generator, n: int) -> np.ndarray:
        return np.tan(np.pi * (rng.random(n) - 0.5))

    @staticmethod
    def _family(loc: float, scale: float):
        return stats.cauchy(loc=loc, scale=scale)

    def spec(self, *, size: int = 9, name: Optional[str] = None) -> MechanismSpec:
        """Black box ``f(data, rng, size=None)``: the median of records in [lo, hi] plus scaled
        Cauchy noise; claim ε-DP; ``distribution(data)`` is the Cauchy law given the data."""
        return self._spec(self.claim, size, name or f"ss-cauchy-median({self.neighbours.value})")


@dataclass(frozen=True, slots=True)
class SmoothLaplaceMedian(_SmoothMedian):
    """(ε, δ)-DP median: T(S) + (SS_β(S)/α)·Lap(0, 1), α = ε/2, β from :func:`laplace_beta`."""

    epsilon: float
    delta: float
    lo: float = 0.0
    hi: float = 1.0
    neighbours: Neighbours = Neighbours.REPLACE
    beta_rule: str = "corrected"

    def __post_init__(self) -> None:
        laplace_beta(self.epsilon, self.delta, self.beta_rule)  # validates all three
        object.__setattr__(self, "epsilon", float(self.epsilon))
        object.__setattr__(self, "delta", float(self.delta))
        self._setup()

    @property
    def claim(self) -> ApproxDP:
        return ApproxDP(self.epsilon, self.delta)

    @property
    def alpha(self) -> float:
        return self.epsilon / 2.0

    @property
    def beta(self) -> float:
        return laplace_beta(self.epsilon, self.delta, self.beta_rule)

    @staticmethod
    def _noise(rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.exponential(size=n) - rng.exponential(size=n)

    @staticmethod
    def _family(loc: float, scale: float):
        return stats.laplace(loc=loc, scale=scale)

    def spec(self, *, size: int = 9, name: Optional[str] = None) -> MechanismSpec:
        """Black box ``f(data, rng, size=None)``: the median of records in [lo, hi] plus scaled
        Laplace noise; claim (ε, δ)-DP; ``distribution(data)`` is the Laplace law given the data."""
        return self._spec(self.claim, size, name or f"ss-laplace-median({self.neighbours.value})")
