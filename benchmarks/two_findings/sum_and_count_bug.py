"""A noisy sum and a noisy count, each with the whole budget: LOGIC BUG (no composition).

Claim: ε = 1 (pure DP), add-remove neighbours, records in [0, 1], 10 records.
(Σx + Lap(1/ε), |D| + Lap(1/ε)): each release is ε-DP, together 2ε (sequential composition, Dwork
and Roth 2014, Thm 3.16). The pair has L1 sensitivity Δ₁ = 1 + 1 = 2 at a record 1, so the true
ε = Δ₁/b = 2 (tight: both coordinates' density ratios reach e^ε together).
"""
import numpy as np

import dpaudit

EPSILON = 1.0
TRUE_EPSILON = 2.0
CORRECT = False
NOISE = "continuous"
OUTPUT = "float"


@dpaudit.mechanism(epsilon=EPSILON, neighbours="add-remove", domain=(0.0, 1.0), size=10)
def sum_and_count(data, rng, size=None):
    stats = np.array([data.sum(), float(len(data))])
    shape = 2 if size is None else (size, 2)
    return stats + rng.laplace(scale=1.0 / EPSILON, size=shape)
