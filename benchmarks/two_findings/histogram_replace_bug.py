"""Noisy histogram with Lap(1/ε) per bin claimed under replace neighbours: LOGIC BUG.

Claim: ε = 1 (pure DP), replace neighbours, ages in [0, 100], 5 brackets, 20 records.
Lap(1/ε) per bin is ε-DP when one record is added or removed (one bin moves by 1). Replacing a
record moves one bin down and another up: L1 sensitivity 2, true ε = Δ₁/b = 2 (Dwork and Roth
2014, Prop. 3.7; tight: the two moved bins' ratios multiply).
"""
import numpy as np

import dpaudit

EPSILON = 1.0
BINS = 5
TRUE_EPSILON = 2.0
CORRECT = False
NOISE = "continuous"
OUTPUT = "float"


@dpaudit.mechanism(epsilon=EPSILON, neighbours="replace", domain=(0.0, 100.0), size=20)
def age_histogram(data, rng, size=None):
    counts, _ = np.histogram(data, bins=BINS, range=(0.0, 100.0))
    shape = BINS if size is None else (size, BINS)
    return counts + rng.laplace(scale=1.0 / EPSILON, size=shape)
