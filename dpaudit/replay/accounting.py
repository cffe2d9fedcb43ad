"""Per-call accounting: the ε (and δ) a mechanism's own noise supports on one neighbouring pair.

For one noise call whose input moves by Δ between D and D′ (the input observed in
:mod:`dpaudit.replay.tracked`, or given as an argument):

* **Laplace(b)** noise hides a shift of Δ at ε_call = ‖Δ‖₁ / b (the density ratio of
  Lap(x, b) and Lap(x′, b) is at most e^{|x − x′|/b}; Dwork and Roth 2014, Theorem 3.6;
  per coordinate ‖Δ / b‖₁ for a vector of scales). The sensitivity it absorbs at a
  claimed ε is ε · b.
* **Gaussian(σ)** noise gives μ_call = ‖Δ / σ‖₂, i.e. μ-GDP (Dong, Roth and Su 2022,
  Theorem 2.7) and ρ_call = μ² / 2 zero-concentrated DP (Bun and Steinke 2016, Proposition 1.6).
* a **categorical** draw (``choice(k, p=…)``: the exponential mechanism, randomised response)
  with probabilities p on D and p′ on D′ is exactly ε_call = maxᵢ |ln pᵢ − ln p′ᵢ|-DP on the pair.
* a **declared primitive** (``@dpaudit.primitive``, a diffprivlib mechanism) spends its declared
  (ε_i, δ_i) when its input moves, and ε_i · ‖Δ‖/s_i for a Laplace-type primitive of sensitivity
  s_i (its ε scales with the shift).

Calls are added up by **basic composition** (Dwork and Roth 2014, Theorem 3.16): ε = Σ ε_i,
δ = Σ δ_i. Gaussian calls compose exactly as one Gaussian: μ = √(Σ μ_i²) (Dong, Roth and Su 2022,
Corollary 3.3), converted to (ε, δ) two ways, both valid upper bounds, the smaller reported with
its name:

* the **zCDP bound**: ρ = μ²/2 gives (ρ + 2√(ρ ln(1/δ)), δ)-DP (Bun and Steinke 2016,
  Proposition 1.3);
* the **exact Gaussian profile**: μ-GDP is (ε, δ(ε))-DP with
  δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (Balle and Wang 2018, Theorem 8; Dong, Roth and Su
  2022, Corollary 2.13), solved for ε at the δ left after the other calls.

A pure claim (δ = 0) and Gaussian noise on a moving input support no finite ε. Composition is an
upper-bound argument: an excess over the claim says the code's noise, added up call by call, does
not pay for the claim on this pair; it is never an ε lower bound (a sparse vector or a report
noisy max is private for reasons composition does not see).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

__all__ = ["laplace_epsilon", "gaussian_mu", "categorical_epsilon", "zcdp_epsilon",
           "gdp_epsilon", "gdp_delta", "laplace_delta", "laplace_epsilon_at", "Composition",
           "compose", "norm_of"]


def norm_of(delta: Any, norm: str) -> float:
    """‖Δ‖ in ``"l1"``, ``"l2"`` or ``"linf"`` (NaN anywhere gives NaN; ±inf gives inf)."""
    d = np.abs(np.asarray(delta, dtype=float).reshape(-1))
    if d.size == 0:
        return 0.0
    if np.isnan(d).any():
        return float("nan")
    if norm == "l2":
        return float(np.sqrt(np.sum(d * d)))
    if norm == "linf":
        return float(np.max(d))
    return float(np.sum(d))


def _ratio(delta: Any, scale: Any) -> np.ndarray:
    with np.errstate(all="ignore"):
        d = np.abs(np.asarray(delta, dtype=float))
        s = np.broadcast_to(np.abs(np.asarray(scale, dtype=float)), d.shape) if d.ndim else np.abs(np.asarray(scale, dtype=float))
        r = np.where(d == 0, 0.0, d / s)
    return np.where(np.isnan(d), np.inf, r)


def laplace_epsilon(delta: Any, scale: Any) -> float:
    """ε = ‖Δ / b‖₁ of Laplace noise of scale b (per coordinate) on an input moved by Δ."""
    return float(np.sum(_ratio(delta, scale)))


def gaussian_mu(delta: Any, sigma: Any) -> float:
    """μ = ‖Δ / σ‖₂ of Gaussian noise of standard deviation σ on an input moved by Δ."""
    r = _ratio(delta, sigma)
    return float(np.sqrt(np.sum(r * r)))


def categorical_epsilon(p: Any, q: Any) -> float:
    """ε = maxᵢ |ln pᵢ − ln qᵢ| of one categorical draw with probabilities p (on D), q (on D′):
    the exact pure-DP loss of that draw on the pair (inf when one is 0 and the other is not)."""
    a = np.asarray(p, dtype=float).reshape(-1)
    b = np.asarray(q, dtype=float).reshape(-1)
    if a.shape != b.shape:
        return float("inf")
    with np.errstate(all="ignore"):
        both = (a > 0) & (b > 0)
        if np.any((a > 0) != (b > 0)):
            return float("inf")
        if not both.any():
            return 0.0
        return float(np.max(np.abs(np.log(a[both]) - np.log(b[both]))))


def zcdp_epsilon(rho: float, delta: float) -> float:
    """ε = ρ + 2√(ρ ln(1/δ)) of ρ-zCDP at δ (Bun and Steinke 2016, Proposition 1.3)."""
    if rho <= 0:
        return 0.0
    if delta <= 0:
        return float("inf")
    if delta >= 1:
        return 0.0
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


def gdp_delta(eps: float, mu: float) -> float:
    """δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) of μ-GDP (Balle and Wang 2018, Theorem 8)."""
    if mu <= 0:
        return 0.0
    from scipy.special import log_ndtr, ndtr  # here: a child without Gaussian noise never needs scipy

    a = float(ndtr(-eps / mu + mu / 2.0))
    b = math.exp(min(eps + float(log_ndtr(-eps / mu - mu / 2.0)), 700.0))
    return max(a - b, 0.0)


def gdp_epsilon(mu: float, delta: float) -> float:
    """The least ε ≥ 0 with δ(ε) ≤ δ for μ-GDP (bisection on the exact profile)."""
    if mu <= 0:
        return 0.0
    if delta <= 0:
        return float("inf")
    if gdp_delta(0.0, mu) <= delta:
        return 0.0
    lo, hi = 0.0, 1.0
    while gdp_delta(hi, mu) > delta:
        lo, hi = hi, hi * 2.0
        if hi > 1e6:
            return float("inf")
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if gdp_delta(mid, mu) > delta:
            lo = mid
        else:
            hi = mid
    return hi


def laplace_delta(eps: float, a: float) -> float:
    """δ(ε) = max(0, 1 − e^{(ε − a)/2}) of one Laplace release whose input moves by a scales
    (a = |Δ|/b): the exact privacy profile of Lap(x, b) against Lap(x′, b) (the hockey-stick
    divergence on the event {y > (x + x′ + εb)/2}; docs/math.md#exact-losses-from-the-replay)."""
    if a <= 0 or eps >= a:
        return 0.0
    return -math.expm1((eps - a) / 2.0)


def laplace_epsilon_at(a: float, delta: float) -> float:
    """The least ε ≥ 0 with :func:`laplace_delta` (ε, a) ≤ δ: ε = max(0, a + 2 ln(1 − δ))."""
    if a <= 0:
        return 0.0
    if delta >= 1:
        return 0.0
    return max(0.0, a + 2.0 * math.log1p(-delta))


@dataclass(frozen=True)
class Composition:
    """The ε (and δ) that a pair's accounted calls add up to (module docstring).

    ``epsilon_laplace`` (Σ of Laplace and categorical calls), ``mu`` (the Gaussian calls
    together), ``rho`` = μ²/2, ``epsilon_gaussian`` at ``delta_gaussian`` with the conversion
    named in ``conversion``, ``epsilon_declared``/``delta_declared`` (the primitives' declared
    budgets spent), and the totals ``epsilon``, ``delta``."""

    epsilon: float
    delta: float
    epsilon_laplace: float
    mu: float
    rho: float
    epsilon_gaussian: float
    delta_gaussian: float
    epsilon_declared: float
    delta_declared: float
    conversion: Optional[str]

    def to_record(self) -> dict:
        return {"epsilon": self.epsilon, "delta": self.delta,
                "epsilon_laplace": self.epsilon_laplace, "mu": self.mu, "rho": self.rho,
                "epsilon_gaussian": self.epsilon_gaussian, "delta_gaussian": self.delta_gaussian,
                "epsilon_declared": self.epsilon_declared, "delta_declared": self.delta_declared,
                "composition": "basic (Dwork and Roth 2014, Theorem 3.16); Gaussian calls as one "
                               "Gaussian (Dong, Roth and Su 2022, Corollary 3.3)",
                "conversion": self.conversion}


def compose(laplace: list, mus: list, declared: list, delta: float) -> Composition:
    """Compose per-call terms: ``laplace`` (ε of Laplace and categorical calls), ``mus`` (μ of
    Gaussian calls), ``declared`` ((ε_i, δ_i) spent by primitives), for a claim with ``delta``."""
    eps_l = float(sum(laplace))
    mu = float(math.sqrt(sum(m * m for m in mus))) if mus else 0.0
    rho = mu * mu / 2.0
    eps_d = float(sum(e for e, _ in declared))
    del_d = float(sum(d for _, d in declared))
    left = delta - del_d
    conversion = None
    eps_g = 0.0
    if mu > 0:
        if left <= 0:
            eps_g, conversion = float("inf"), "none: no δ left for the Gaussian calls (a pure claim)"
        else:
            by_zcdp = zcdp_epsilon(rho, left)
            exact = gdp_epsilon(mu, left)
            if exact <= by_zcdp:
                eps_g, conversion = exact, ("exact Gaussian privacy profile (Balle and Wang 2018, "
                                            "Theorem 8)")
            else:
                eps_g, conversion = by_zcdp, "zCDP: ρ + 2√(ρ ln(1/δ)) (Bun and Steinke 2016, Prop. 1.3)"
    total = eps_l + eps_g + eps_d
    return Composition(epsilon=total, delta=(max(left, 0.0) if mu > 0 else 0.0) + del_d,
                       epsilon_laplace=eps_l, mu=mu, rho=rho, epsilon_gaussian=eps_g,
                       delta_gaussian=max(left, 0.0) if mu > 0 else 0.0,
                       epsilon_declared=eps_d, delta_declared=del_d, conversion=conversion)
