"""Histogram of ages (5 brackets over [0, 100)) with discrete Laplace noise per bin: CORRECT, an
integer-noise control.

Claim: ε = 1 (pure DP), replace neighbours, ages in [0, 100], 20 records.
Replacing a record moves one count down and one up: L1 sensitivity Δ₁ = 2. Each bin gets
G₁ − G₂, G geometric with p = 1 − e^{−ε/Δ₁}, i.e. P(K = k) ∝ e^{−(ε/2)|k|} (Ghosh, Roughgarden and
Sundararajan 2009; Canonne, Kamath and Steinke 2020, NeurIPS, discrete Laplace): ε-DP, true ε = 1.
Integer outputs: no float64 question.
"""
import math

import numpy as np

import dpaudit

EPSILON = 1.0
BINS = 5
TRUE_EPSILON = 1.0
CORRECT = True
NOISE = "integer"
OUTPUT = "discrete"


@dpaudit.mechanism(epsilon=EPSILON, neighbours="replace", domain=(0.0, 100.0), size=20)
def age_histogram(data, rng, size=None):
    counts, _ = np.histogram(data, bins=BINS, range=(0.0, 100.0))
    p = 1.0 - math.exp(-EPSILON / 2.0)
    shape = BINS if size is None else (size, BINS)
    return counts + rng.geometric(p, size=shape) - rng.geometric(p, size=shape)
