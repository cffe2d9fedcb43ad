"""The bounds of a one-run audit: from the number of correct guesses to ε (and μ) lower bounds.

The game (Steinke, Nasr & Jagielski, NeurIPS 2023, Algorithm 1): m canaries, each included in
the training set independently with probability ½ (S ∈ {−1, +1}^m); one training run; a guesser
reads the model and guesses T ∈ {−1, 0, +1}^m (0 abstains), r = ‖T‖₁ guesses, W of them right.
A guesser is fixed before the run (here: a score, a direction, k₊ guesses "in" among the highest
scores and k₋ guesses "out" among the lowest); its count W is tested against what the claim
allows. Two tests, both valid for any mechanism meeting the claim, whatever the guesser:

* :func:`steinke_p_value`: for an (ε, δ)-DP mechanism, Steinke et al. 2023, Theorem 3,

      P[W ≥ v] ≤ P[W′ ≥ v] + 2mδ · max_{1≤i≤v} P[v − i ≤ W′ < v] / i,
      W′ ~ Binomial(r, e^ε / (1 + e^ε)).

* :func:`fdp_rejects`: for an f-DP mechanism (Dong, Roth & Su 2022), the recursion of
  Mahloujifar, Melis & Chaudhuri (ICML 2025), Algorithm 3 (the audit with abstention, k = 2
  classes): start from r_v = τ·v/m, h_v = τ·(r − v)/m and for i = v−1, …, 0

      h_i = max(h_{i+1}, f̄⁻¹(r_{i+1})),   r_i = r_{i+1} + i/(r − i) · (h_i − h_{i+1}),

  where f̄(x) = 1 − f(x); when r_0 + h_0 > r/m, P[W ≥ v] < τ for every f-DP mechanism (the
  observation refutes f at level τ). With f the trade-off curve of (ε, δ)-DP,
  f(x) = max(0, 1 − δ − e^ε x, e^(−ε)(1 − δ − x)) (Kairouz, Oh & Viswanath 2015), it tests the
  (ε, δ) claim itself; with f the μ-GDP curve, f̄⁻¹(y) = Φ(Φ⁻¹(y) − μ), a Gaussian-DP claim.

Every bound here is the largest parameter the test refutes at its level; the caller divides α over
every guesser it tried (:mod:`dpaudit.onerun.guesses`), so the family holds at the stated
confidence. The *ceiling* (:func:`ceilings`) is what the same family would give if every guess
were right: no run with these m canaries, this family and this confidence can show more.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Callable, Iterable, Optional

import numpy as np
from scipy import special, stats

__all__ = ["steinke_p_value", "steinke_epsilon", "fdp_rejects", "approx_dp_inverse", "gdp_inverse",
           "fdp_epsilon", "gdp_mu", "gdp_epsilon", "ceilings", "EPSILON_MAX", "MU_MAX"]

#: the largest ε and μ a bisection looks at (far above what m ≤ 10⁶ canaries can certify)
EPSILON_MAX = 60.0
MU_MAX = 40.0
_ITERATIONS = 60


def steinke_p_value(m: int, r: int, v: int, epsilon: float, delta: float) -> float:
    """The largest P[W ≥ v] an (ε, δ)-DP mechanism allows for ``v`` correct of ``r`` guesses on
    ``m`` canaries (Steinke, Nasr & Jagielski 2023, Theorem 3; module docstring):
    β + 2mδ·max_{1≤i≤v} P[v−i ≤ W′ < v]/i with β = P[W′ ≥ v], W′ ~ Bin(r, e^ε/(1+e^ε)); at most 1.
    The window sums are summed from the probability mass function (no cancellation)."""
    if v <= 0:
        return 1.0
    q = float(special.expit(epsilon)) if math.isfinite(epsilon) else 1.0
    beta = float(stats.binom.sf(v - 1, r, q))
    if delta <= 0:
        return min(1.0, beta)
    i = np.arange(1, v + 1)
    windows = np.cumsum(stats.binom.pmf(v - i, r, q))  # P[v−i ≤ W′ < v] for i = 1..v
    return min(1.0, beta + 2.0 * m * delta * float(np.max(windows / i)))


def _largest(refutes: Callable[[float], bool], hi: float) -> float:
    """The largest x in [0, hi] with ``refutes(x)``, by bisection, for a test that refutes every
    value below some point and none above it; 0.0 when it refutes none."""
    if not refutes(0.0):
        return 0.0
    if refutes(hi):
        return hi
    lo = 0.0
    for _ in range(_ITERATIONS):
        mid = 0.5 * (lo + hi)
        if refutes(mid):
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-7:
            break
    return lo


def steinke_epsilon(m: int, r: int, v: int, delta: float, alpha: float) -> float:
    """ε_LB: the largest ε whose (ε, δ) claim :func:`steinke_p_value` refutes at level ``alpha``
    (p ≤ α) for ``v`` correct of ``r`` guesses; 0.0 when not even ε = 0 is refuted."""
    return _largest(lambda e: steinke_p_value(m, r, v, e, delta) <= alpha, EPSILON_MAX)


def approx_dp_inverse(epsilon: float, delta: float) -> Callable[[float], float]:
    """f̄⁻¹ for the (ε, δ)-DP trade-off curve: f̄(x) = 1 − f(x) = min(1, δ + e^ε x,
    1 − e^(−ε)(1 − δ − x)), so f̄⁻¹(y) = max((y − δ)e^(−ε), 1 − δ − e^ε(1 − y)), in [0, 1]."""
    e = math.exp(min(epsilon, 700.0))

    def inverse(y: float) -> float:
        return min(1.0, max(0.0, (y - delta) / e, 1.0 - delta - e * (1.0 - y)))

    return inverse


def gdp_inverse(mu: float) -> Callable[[float], float]:
    """f̄⁻¹ for μ-GDP: f(x) = Φ(Φ⁻¹(1 − x) − μ), f̄(x) = Φ(Φ⁻¹(x) + μ), f̄⁻¹(y) = Φ(Φ⁻¹(y) − μ)
    (Dong, Roth & Su 2022, Definition 2.7)."""

    def inverse(y: float) -> float:
        if y >= 1.0:
            return 1.0
        return float(special.ndtr(special.ndtri(y) - mu)) if y > 0.0 else 0.0

    return inverse


def fdp_rejects(blowup_inverse: Callable[[float], float], m: int, r: int, v: int, tau: float) -> bool:
    """Whether ``v`` correct of ``r`` guesses on ``m`` canaries refutes the trade-off curve f at
    level ``tau``: Mahloujifar, Melis & Chaudhuri 2025, Algorithm 3 (module docstring), with
    ``blowup_inverse`` = f̄⁻¹. r_i is capped at 1 (a probability; the cap only makes the test
    reject less). Once h stops growing it never grows again, so the loop stops there."""
    if v <= 0 or r <= 0 or v > r:
        return False
    rr = tau * v / m
    h = tau * (r - v) / m
    for i in range(v - 1, -1, -1):
        h_new = max(h, blowup_inverse(rr))
        if h_new == h:
            break
        rr = min(rr + (i / (r - i)) * (h_new - h), 1.0)
        h = h_new
    return rr + h > r / m


def fdp_epsilon(m: int, r: int, v: int, delta: float, tau: float) -> float:
    """The largest ε whose (ε, δ)-DP trade-off curve :func:`fdp_rejects` refutes at ``tau``."""
    return _largest(lambda e: fdp_rejects(approx_dp_inverse(e, delta), m, r, v, tau), EPSILON_MAX)


def gdp_mu(m: int, r: int, v: int, tau: float) -> float:
    """μ_LB: the largest μ whose μ-GDP curve :func:`fdp_rejects` refutes at ``tau``."""
    return _largest(lambda mu: fdp_rejects(gdp_inverse(mu), m, r, v, tau), MU_MAX)


def gdp_epsilon(mu: float, delta: float) -> float:
    """The ε at which μ-GDP has δ(ε) = ``delta``: δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)
    (Dong, Roth & Su 2022, Corollary 2.13), solved by bisection (δ_μ decreases in ε); 0.0 when
    μ ≤ 0 or δ_μ(0) ≤ δ."""
    if mu <= 0 or delta >= 1:
        return 0.0

    def d(eps: float) -> float:
        with np.errstate(over="ignore"):
            return float(special.ndtr(-eps / mu + mu / 2)
                         - np.exp(eps + special.log_ndtr(-eps / mu - mu / 2)))

    return _largest(lambda e: d(e) > delta, EPSILON_MAX * 10)


@lru_cache(maxsize=256)
def ceilings(m: int, sizes: tuple, delta: float, alpha_steinke: float, tau: float) -> dict:
    """What a run could show at most: every guess right (v = r) for each guess count r in
    ``sizes`` (the family's, each guesser at its own level), the largest bound of each test:
    ``{"steinke": ε, "fdp": ε, "mu": μ, "gdp_epsilon": ε of that μ at δ}``."""
    st = max((steinke_epsilon(m, r, r, delta, alpha_steinke) for r in sizes), default=0.0)
    fe = max((fdp_epsilon(m, r, r, delta, tau) for r in sizes), default=0.0)
    mu = max((gdp_mu(m, r, r, tau) for r in sizes), default=0.0)
    return {"steinke": st, "fdp": fe, "mu": mu,
            "gdp_epsilon": gdp_epsilon(mu, delta) if delta > 0 else None}


def best(values: Iterable[tuple[float, object]]) -> tuple[float, Optional[object]]:
    """The largest value and what gave it (ties: the first), ``(0.0, None)`` when none is > 0."""
    top, arg = 0.0, None
    for value, what in values:
        if value > top:
            top, arg = value, what
    return top, arg
