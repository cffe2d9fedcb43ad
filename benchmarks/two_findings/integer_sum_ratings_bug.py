"""Sum of integer ratings (1 to 5 stars) with geometric noise for sensitivity 1: LOGIC BUG,
integer output.

Claim: ε = 0.5 (pure DP), add-remove neighbours, ratings in [1, 5] (rounded to integers), 10 records.
Two-sided geometric noise P(K = k) ∝ e^{−ε|k|} (Ghosh, Roughgarden and Sundararajan 2009) is ε-DP
for a sensitivity-1 count, but adding a 5-star rating moves the sum by 5: true ε = 5·ε = 2.5
(tight: the geometric tails have ratio e^{ε} per unit).
"""
import math

import numpy as np

import dpaudit

EPSILON = 0.5
TRUE_EPSILON = 2.5
CORRECT = False
NOISE = "integer"
OUTPUT = "discrete"


@dpaudit.mechanism(epsilon=EPSILON, neighbours="add-remove", domain=(1.0, 5.0), size=10)
def ratings_sum(data, rng, size=None):
    total = int(np.rint(data).astype(int).sum())
    p = 1.0 - math.exp(-EPSILON)
    noise = rng.geometric(p, size=size) - rng.geometric(p, size=size)
    return total + noise if size is not None else total + int(noise)
