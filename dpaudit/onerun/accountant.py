"""DP-SGD's claimed (ε, δ): the Rényi accountant of the Poisson-subsampled Gaussian mechanism.

One step of DP-SGD with per-example clipping to C, Gaussian noise of standard deviation σC on the
sum and Poisson sampling at rate q is the subsampled Gaussian mechanism; T steps compose. Its
Rényi divergence at an integer order α is (Mironov, Talwar & Zhang 2019, Section 3.3)

    ε_RDP(α) = ln A_α / (α − 1),   A_α = Σ_{k=0}^{α} C(α, k) (1 − q)^(α−k) q^k exp((k² − k) / (2σ²)),

T steps give T·ε_RDP(α) (Mironov 2017, Proposition 1), and (ε, δ) follows from the conversion of
Canonne, Kamath & Steinke 2020, Proposition 12 (:func:`dpaudit.curves.claims.rdp_delta_formula`),
minimised over the orders. With dp-accounting installed (the ``curves`` extra), its
``RdpAccountant`` on ``PoissonSampledDpEvent(q, GaussianDpEvent(σ))`` composed T times is used
instead (fractional orders too, so its ε is at most this one's). At q = 1, A_α = exp(α(α−1)/(2σ²))
and ε_RDP(α) = α/(2σ²), the Gaussian mechanism's.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln, logsumexp

from dpaudit.curves.claims import has_dp_accounting, rdp_delta_formula

__all__ = ["ORDERS", "subsampled_gaussian_rdp", "dpsgd_epsilon", "accountant_name"]

#: the integer Rényi orders of the built-in accountant
ORDERS = np.concatenate([np.arange(2, 65), np.array([72, 80, 96, 128, 160, 192, 256, 384, 512])])


def subsampled_gaussian_rdp(noise_multiplier: float, sample_rate: float, order: int) -> float:
    """ε_RDP(α) of one step (module docstring), summed in log space."""
    a, q, s = int(order), float(sample_rate), float(noise_multiplier)
    if q >= 1.0:
        return a / (2 * s * s)
    if q <= 0.0:
        return 0.0
    k = np.arange(a + 1, dtype=float)
    log_binom = gammaln(a + 1) - gammaln(k + 1) - gammaln(a - k + 1)
    terms = log_binom + (a - k) * math.log1p(-q) + k * math.log(q) + (k * k - k) / (2 * s * s)
    return float(logsumexp(terms)) / (a - 1)


def _builtin(noise_multiplier: float, sample_rate: float, steps: int, delta: float) -> float:
    rdp = np.array([steps * subsampled_gaussian_rdp(noise_multiplier, sample_rate, a) for a in ORDERS])
    lo, hi = 0.0, 1.0
    while rdp_delta_formula(ORDERS, rdp, hi)[0] > delta:
        lo, hi = hi, hi * 2
        if hi > 1e6:
            return math.inf
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if rdp_delta_formula(ORDERS, rdp, mid)[0] > delta:
            lo = mid
        else:
            hi = mid
    return hi


def accountant_name() -> str:
    """Which accountant :func:`dpsgd_epsilon` uses here."""
    return "dp-accounting RdpAccountant" if has_dp_accounting() else "dpaudit's RDP accountant (integer orders)"


def dpsgd_epsilon(noise_multiplier: float, sample_rate: float, steps: int, delta: float) -> float:
    """The ε DP-SGD claims at ``delta`` after ``steps`` steps at ``sample_rate`` with noise
    multiplier σ (module docstring)."""
    if has_dp_accounting():
        import dp_accounting

        acc = dp_accounting.rdp.RdpAccountant()
        event = dp_accounting.PoissonSampledDpEvent(sample_rate, dp_accounting.GaussianDpEvent(noise_multiplier))
        acc.compose(dp_accounting.SelfComposedDpEvent(event, int(steps)))
        return float(acc.get_epsilon(delta))
    return _builtin(noise_multiplier, sample_rate, int(steps), delta)
