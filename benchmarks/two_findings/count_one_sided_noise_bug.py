"""Noisy count with one-sided (exponential) noise instead of Laplace: LOGIC BUG (infinite ε).

Claim: ε = 1 (pure DP), replace neighbours, records in [0, 1], 10 records.
``rng.exponential(scale=1/ε)`` is ≥ 0, so the output is never below the true count c. A neighbour
with count c − 1 puts probability 1 − e^{−ε} = 0.632 on (c − 1, c), where D puts none: true ε = ∞
(the Laplace mechanism, Dwork and Roth 2014, Def. 3.3, needs the two-sided law).
"""
import math

import numpy as np

import dpaudit

EPSILON = 1.0
TRUE_EPSILON = math.inf
CORRECT = False
NOISE = "continuous"
OUTPUT = "float"


@dpaudit.mechanism(epsilon=EPSILON, neighbours="replace", domain=(0.0, 1.0), size=10)
def noisy_count(data, rng, size=None):
    count = np.count_nonzero(data > 0.5)
    return count + rng.exponential(scale=1.0 / EPSILON, size=size)
