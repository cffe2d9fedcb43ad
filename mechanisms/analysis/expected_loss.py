"""The expected-loss formulas of Chen, Pal and Golubchik (2016) (docs/math.md#expected-loss), exact and as the seed states them.

* :func:`expected_abs_order_statistic`: the exact E|X_(j)| of k iid noises, from the binomial
  representation P(X_(j) > t) = P(#{X_i > t} ≥ k − j + 1) (David and Nagaraja 2003, eq (2.1.3)).
* The loss formulas of docs/math.md#expected-loss as functions of ρ = e^{−ε} (Chen, Pal and Golubchik (2016)'s α), loss |·|:

  ====  ==============================================  ===========================
  eq    value                                           status
  ====  ==============================================  ===========================
  (11)  Δ/(−ln ρ)                                       exact
  (12)  Δ√ρ/(1 − ρ)                                     exact (staircase at γ*)
  (13)  2ρ/(1 − ρ²)                                     exact (corrected pmf)
  (14)  √ρ/(1 − ρ)                                      exact (Laplace, rounded count)
  (15)  (1 − (1 − √ρ)²/2)·√ρ/(1 − ρ)                    exact (staircase, rounded)
  (16)  √(2/(πk))·Δ/(−ln ρ)                             asymptotic in k only
  (17)  √(2/(πk))·Δ√ρ/(1 − ρ)                           asymptotic in k only
  (18)  (1 + ρ)/((1 − ρ)√(2πk))  (as stated)            wrong (docs/math.md#e11)
  ====  ==============================================  ===========================

  Corrected (18) [D]: for odd or even k, with s_m = P(K > m) = ρ^{m+1}/(1 + ρ) < ½ and the
  Chernoff bound P(Bin(k, s) ≥ k/2) ≤ (4s(1 − s))^{k/2}, the low median of k two-sided geometrics
  satisfies E|med_k| ≤ 2 Σ_{m≥0} (4 s_m (1 − s_m))^{k/2}: it decays like (2√ρ/(1 + ρ))^k, i.e.
  exponentially, not like 1/√k (:func:`geometric_median_bound`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import stats

from dpaudit.claims import check_size
from dpaudit.errors import InvalidArgument
from ..geometric import Geometric
from ..laplace import Laplace
from ..staircase import Staircase

__all__ = [
    "expected_abs_order_statistic", "expected_abs_median",
    "rounded_expected_abs", "laplace_loss", "staircase_loss", "geometric_loss",
    "count_laplace_loss", "count_staircase_loss", "collusion_laplace_loss",
    "collusion_staircase_loss", "collusion_geometric_loss_seed", "geometric_median_bound",
]


def _rho(rho: Any) -> np.ndarray:
    r = np.asarray(rho, dtype=float)
    if not np.all((r > 0) & (r < 1)):
        raise InvalidArgument.bad("rho", rho, "in (0, 1) (rho = exp(-epsilon))")
    return r


def _k(k: Any) -> np.ndarray:
    kk = np.asarray(k)
    if kk.dtype.kind not in "iu" or np.any(kk < 1):
        raise InvalidArgument.bad("k", k, "an integer >= 1 (the number of colluders)")
    return kk.astype(float)


# -- exact order statistics -------------------------------------------------------------------------
def expected_abs_order_statistic(noise: Any, k: int, j: int) -> float:
    """E|X_(j)| for k iid draws of ``noise`` (a Laplace, Staircase or Geometric), exactly.

    E|Y| = ∫_0^∞ P(Y > t) + P(Y < −t) dt, with P(X_(j) > t) = P(Bin(k, S(t)) ≥ k − j + 1) and
    P(X_(j) < −t) = P(Bin(k, F(−t)) ≥ j), S = sf, F = cdf (binomial tails are accurate in the
    tails). For a Geometric (lattice dℤ) the integral is the sum d·Σ_{m≥0} of the same terms at
    t = m·d; continuous noise is integrated by Gauss-Legendre quadrature on its smooth pieces.
    """
    if not isinstance(noise, (Laplace, Staircase, Geometric)):
        raise InvalidArgument.bad("noise", noise, "a Laplace, Staircase or Geometric")
    k, j = check_size(k, "k"), check_size(j, "j")
    if not 1 <= j <= k:
        raise InvalidArgument(f"j must be in 1..k, got j={j}, k={k}")

    def tails(t: np.ndarray) -> np.ndarray:
        return (stats.binom.sf(k - j, k, noise.sf(t)) + stats.binom.sf(j - 1, k, noise.cdf(-t) - _atom(t)))

    def _atom(t: np.ndarray) -> np.ndarray:     # P(X = −t) for a lattice noise, so F(−t) → P(X < −t)
        return noise.pmf(-t) if isinstance(noise, Geometric) else 0.0

    if isinstance(noise, Geometric):
        d, total, m = noise.step, 0.0, 0
        while True:
            ms = d * np.arange(m, m + 256, dtype=float)
            v = tails(ms)
            total += float(v.sum())
            if v[-1] < 1e-18 * max(total, 1e-300) or v[-1] == 0.0:
                return d * total
            m += 256
    # Continuous noise: Gauss-Legendre on the pieces where the integrand is smooth (the staircase
    # has kinks at t = mΔ and (m + γ)Δ; there S is linear, the integrand a polynomial of degree k,
    # and 64 nodes integrate it exactly). Beyond T, where k·S(T) ≤ 1e-20, the rest is negligible.
    edges = _smooth_pieces(noise, k)
    x, w = np.polynomial.legendre.leggauss(64)
    half = np.diff(edges)[:, None] / 2
    t = (edges[:-1, None] + half) + half * x[None, :]
    return float(np.sum(half * w[None, :] * tails(t)))


def _smooth_pieces(noise: Any, k: int) -> np.ndarray:
    """Edges of [0, T] split where ``noise``'s survival function has kinks (module docstring)."""
    log_tail = math.log(2e20 * k)                       # S(T) = ½e^{−εT/Δ} ≤ 1e-20/k
    delta_ = float(noise.sensitivity)
    if isinstance(noise, Staircase):                    # staircase: ρ^m/2 ≤ 1e-20/k
        m = np.arange(math.ceil(log_tail / noise.epsilon) + 1, dtype=float)
        e = np.sort(np.concatenate([m, m[:-1] + noise.gamma])) * delta_
        return np.unique(e)
    return np.linspace(0.0, noise.scale * log_tail, math.ceil(log_tail) + 1)


def expected_abs_median(noise: Any, k: int) -> float:
    """E|X_(⌈k/2⌉)|: the exact expected loss of k colluders' low median (:func:`collusion_median`)."""
    k = check_size(k, "k")
    return expected_abs_order_statistic(noise, k, (k + 1) // 2)


def rounded_expected_abs(noise: Any) -> float:
    """E|round(Z)| = 2 Σ_{m≥1} P(Z ≥ m − ½) for symmetric continuous noise (count remap, Chen, Pal and Golubchik (2016) §5.1.1).

    With Δ = 1 this is the exact value of Chen, Pal and Golubchik (2016) eq (14) (Laplace) and eq (15) (staircase at γ*).
    """
    total, m = 0.0, 1
    while True:
        v = noise.sf(np.arange(m, m + 1024, dtype=float) - 0.5)
        total += float(v.sum())
        if v[-1] < 1e-18 * total or v[-1] == 0.0:
            return 2 * total
        m += 1024


# -- the formulas of docs/math.md#expected-loss ------------------------------------------------------------------------
def laplace_loss(rho: Any, sensitivity: float = 1.0) -> np.ndarray:
    """Chen, Pal and Golubchik (2016) eq (11): E|Z| = Δ/(−ln ρ) for Laplace noise of scale Δ/ε (exact)."""
    return sensitivity / -np.log(_rho(rho))


def staircase_loss(rho: Any, sensitivity: float = 1.0) -> np.ndarray:
    """Chen, Pal and Golubchik (2016) eq (12): E|Z| = Δ√ρ/(1 − ρ) for the staircase at γ* (exact)."""
    r = _rho(rho)
    return sensitivity * np.sqrt(r) / (1 - r)


def geometric_loss(rho: Any) -> np.ndarray:
    """Chen, Pal and Golubchik (2016) eq (13): E|K| = 2ρ/(1 − ρ²) for the two-sided geometric with the corrected pmf (exact)."""
    r = _rho(rho)
    return 2 * r / (1 - r * r)


def count_laplace_loss(rho: Any) -> np.ndarray:
    """Chen, Pal and Golubchik (2016) eq (14): E|round(Z)| = √ρ/(1 − ρ), Laplace(1/ε) rounded to the nearest integer (exact)."""
    r = _rho(rho)
    return np.sqrt(r) / (1 - r)


def count_staircase_loss(rho: Any) -> np.ndarray:
    """Chen, Pal and Golubchik (2016) eq (15): (1 − (1 − √ρ)²/2)·√ρ/(1 − ρ) = ρ/(1 − ρ) + √ρ/2, staircase at γ*, Δ = 1, rounded."""
    r = _rho(rho)
    return (1 - (1 - np.sqrt(r)) ** 2 / 2) * np.sqrt(r) / (1 - r)


def collusion_laplace_loss(rho: Any, k: Any, sensitivity: float = 1.0) -> np.ndarray:
    """Chen, Pal and Golubchik (2016) eq (16): E|med_k| ≈ √(2/(πk))·Δ/(−ln ρ). Asymptotic only (med_k ≈ N(0, 1/(4k f(0)²)))."""
    return np.sqrt(2 / (np.pi * _k(k))) * laplace_loss(rho, sensitivity)


def collusion_staircase_loss(rho: Any, k: Any, sensitivity: float = 1.0) -> np.ndarray:
    """Chen, Pal and Golubchik (2016) eq (17): E|med_k| ≈ √(2/(πk))·Δ√ρ/(1 − ρ). Asymptotic only (f(0) = A at γ*)."""
    return np.sqrt(2 / (np.pi * _k(k))) * staircase_loss(rho, sensitivity)


def collusion_geometric_loss_seed(rho: Any, k: Any) -> np.ndarray:
    """Chen, Pal and Golubchik (2016) eq (18) **as stated** (wrong: it treats the pmf at 0 as a density; docs/math.md#e11).

    (1 + ρ)/((1 − ρ)√(2πk)). Kept to show that it is wrong; use :func:`expected_abs_median` on
    a :class:`~dpaudit.reference.geometric.Geometric` for the exact value and
    :func:`geometric_median_bound` for the corrected (exponential) rate.
    """
    r = _rho(rho)
    return (1 + r) / ((1 - r) * np.sqrt(2 * np.pi * _k(k)))


def geometric_median_bound(rho: float, k: int) -> float:
    """Corrected (18) [D]: E|med_k| ≤ 2 Σ_{m≥0} (4 s_m(1 − s_m))^{k/2}, s_m = ρ^{m+1}/(1 + ρ).

    Holds for the low median of k two-sided geometrics (module docstring); the leading term is
    (2√ρ/(1 + ρ))^k, so the loss decays exponentially in k.
    """
    r = float(_rho(rho))
    k = check_size(k, "k")
    m = np.arange(0, 100_000, dtype=float)
    s = np.exp((m + 1) * math.log(r) - math.log1p(r))
    with np.errstate(divide="ignore"):
        terms = np.exp(0.5 * k * np.log(4 * s * (1 - s)))
    return float(2 * terms.sum())
