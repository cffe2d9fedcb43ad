"""Noisy histogram (5 fixed bins over [0, 10)), Laplace noise per bin: CORRECT logic, porous on doubles.

Claim: ε = 1 (pure DP), add-remove neighbours, records in [0, 10], 10 records.
Adding or removing one record changes one bin by 1: L1 sensitivity Δ₁ = 1, so counts + Lap(1/ε)
on every bin is ε-DP (Dwork, McSherry, Nissim and Smith 2006, Example 2; Dwork and Roth 2014,
Prop. 3.7). True ε = 1.
"""
import numpy as np

import dpaudit

EPSILON = 1.0
BINS = 5
TRUE_EPSILON = 1.0
CORRECT = True
NOISE = "continuous"
OUTPUT = "float"


@dpaudit.mechanism(epsilon=EPSILON, neighbours="add-remove", domain=(0.0, 10.0), size=10)
def noisy_histogram(data, rng, size=None):
    counts, _ = np.histogram(data, bins=BINS, range=(0.0, 10.0))
    shape = BINS if size is None else (size, BINS)
    return counts + rng.laplace(scale=1.0 / EPSILON, size=shape)
