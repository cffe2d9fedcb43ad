"""Noisy count with two-sided geometric noise on integers: CORRECT, an integer-noise control.

Claim: ε = 0.5 (pure DP), add-remove neighbours, records in [−1, 1], 10 records.
count(x > 0) + G₁ − G₂ with G₁, G₂ geometric of success probability p = 1 − e^{−ε}: the noise has
P(K = k) ∝ e^{−ε|k|} (Ghosh, Roughgarden and Sundararajan 2009, STOC), ε-DP for a sensitivity-1
count. True ε = 0.5. The output is an integer: no float64 question (or NOT REFUTED).
"""
import math

import numpy as np

import dpaudit

EPSILON = 0.5
TRUE_EPSILON = 0.5
CORRECT = True
NOISE = "integer"
OUTPUT = "discrete"


@dpaudit.mechanism(epsilon=EPSILON, neighbours="add-remove", domain=(-1.0, 1.0), size=10)
def geometric_count(data, rng, size=None):
    p = 1.0 - math.exp(-EPSILON)
    count = int(np.count_nonzero(data > 0))
    noise = rng.geometric(p, size=size) - rng.geometric(p, size=size)
    return count + noise if size is not None else count + int(noise)
