"""Noisy histogram (4 fixed bins over [0, 1)), Gaussian noise per bin: CORRECT logic, porous on doubles.

Claim: ε = 1, δ = 1e-6, replace neighbours, records in [0, 1], 20 records.
Replacing one record moves one count down and another up: L2 sensitivity Δ₂ = √2, so
σ = Δ₂·√(2 ln(1.25/δ))/ε = 7.49 per bin (Dwork and Roth 2014, Thm A.1). The classical bound assumes
ε < 1; at ε = 1 the exact Gaussian trade-off (Balle and Wang 2018, Thm 8) gives δ(1) = 3.2e-9 ≤ δ,
and the true ε at δ = 1e-6 is 0.784.
"""
import math

import numpy as np

import dpaudit

EPSILON = 1.0
DELTA = 1e-6
BINS = 4
SIGMA = math.sqrt(2.0) * math.sqrt(2.0 * math.log(1.25 / DELTA)) / EPSILON
TRUE_EPSILON = 0.784
CORRECT = True
NOISE = "continuous"
OUTPUT = "float"


@dpaudit.mechanism(epsilon=EPSILON, delta=DELTA, neighbours="replace", domain=(0.0, 1.0), size=20)
def gaussian_histogram(data, rng, size=None):
    counts, _ = np.histogram(data, bins=BINS, range=(0.0, 1.0))
    shape = BINS if size is None else (size, BINS)
    return counts + rng.normal(scale=SIGMA, size=shape)
