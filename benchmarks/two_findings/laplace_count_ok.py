"""Noisy count of people aged 65 or over, Laplace mechanism: CORRECT logic, porous on doubles.

Claim: ε = 0.5 (pure DP), replace neighbours (bounded DP), ages in [18, 90], 20 records.
A count changes by at most Δ = 1 when one record is replaced, so Σ 1[x ≥ 65] + Lap(1/ε) is ε-DP
(Dwork and Roth 2014, Thm 3.6). True ε = 1/(1/ε) = 0.5 (tight: a record 30 replaced by 70).
"""
import numpy as np

import dpaudit

EPSILON = 0.5
TRUE_EPSILON = 0.5
CORRECT = True
NOISE = "continuous"
OUTPUT = "float"


@dpaudit.mechanism(epsilon=EPSILON, neighbours="replace", domain=(18.0, 90.0), size=20)
def count_seniors(data, rng, size=None):
    count = np.count_nonzero(data >= 65)
    return count + rng.laplace(scale=1.0 / EPSILON, size=size)
