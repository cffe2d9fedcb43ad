"""Gaussian noisy mean that passes the variance σ² as numpy's scale (a standard deviation): LOGIC BUG.

Claim: ε = 1, δ = 1e-5, replace neighbours (n = 20 public), records in [0, 1].
Δ = 1/n = 0.05, σ = Δ·√(2 ln(1.25/δ))/ε = 0.2422 (Dwork and Roth 2014, Thm A.1), but
``rng.normal(0, sigma**2)`` draws with standard deviation σ² = 0.0587. Δ/σ_used = 0.852; the exact
Gaussian trade-off (Balle and Wang 2018, Thm 8: δ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ), μ = 0.852)
gives the true ε = 3.640 at δ = 1e-5.
"""
import math

import dpaudit

EPSILON = 1.0
DELTA = 1e-5
N = 20
TRUE_EPSILON = 3.640
CORRECT = False
NOISE = "continuous"
OUTPUT = "float"


@dpaudit.mechanism(epsilon=EPSILON, delta=DELTA, neighbours="replace", domain=(0.0, 1.0), size=20)
def gaussian_mean(data, rng, size=None):
    sigma = (1.0 / N) * math.sqrt(2.0 * math.log(1.25 / DELTA)) / EPSILON
    return data.mean() + rng.normal(0.0, sigma ** 2, size=size)
