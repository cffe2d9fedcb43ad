"""Noisy sum, Gaussian mechanism with an (ε, δ) claim: CORRECT logic, porous on doubles.

Claim: ε = 0.5, δ = 1e-5, add-remove neighbours, records in [−1, 1], 10 records.
σ = Δ·√(2 ln(1.25/δ))/ε with Δ = 1 (Dwork and Roth 2014, Thm A.1, valid for ε < 1): σ = 9.690.
True ε at δ = 1e-5 from the exact Gaussian trade-off (Balle and Wang 2018, ICML, Thm 8:
δ(ε) = Φ(Δ/2σ − εσ/Δ) − e^ε Φ(−Δ/2σ − εσ/Δ)): 0.353.
"""
import math

import dpaudit

EPSILON = 0.5
DELTA = 1e-5
SIGMA = math.sqrt(2.0 * math.log(1.25 / DELTA)) / EPSILON
TRUE_EPSILON = 0.353
CORRECT = True
NOISE = "continuous"
OUTPUT = "float"


@dpaudit.mechanism(epsilon=EPSILON, delta=DELTA, neighbours="add-remove", domain=(-1.0, 1.0), size=10)
def gaussian_sum(data, rng, size=None):
    return data.sum() + rng.normal(scale=SIGMA, size=size)
