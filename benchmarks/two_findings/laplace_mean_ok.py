"""Noisy mean of clipped records with a public size, Laplace mechanism: CORRECT logic, porous on doubles.

Claim: ε = 1 (pure DP), replace neighbours (n = 16 public), records in [−2, 6].
mean = (1/n)·Σ clip(x, lo, hi) moves by at most Δ = (hi − lo)/n = 8/16 = 0.5 when one record is
replaced, so mean + Lap(Δ/ε) is ε-DP (Dwork and Roth 2014, Thm 3.6). True ε = Δ/b = 1 (tight:
a record −2 replaced by 6).
"""
import numpy as np

import dpaudit

EPSILON = 1.0
LO, HI = -2.0, 6.0
N = 16
TRUE_EPSILON = 1.0
CORRECT = True
NOISE = "continuous"
OUTPUT = "float"


@dpaudit.mechanism(epsilon=EPSILON, neighbours="replace", domain=(-2.0, 6.0), size=16)
def noisy_mean(data, rng, size=None):
    mean = np.clip(data, LO, HI).mean()
    sensitivity = (HI - LO) / N
    return mean + rng.laplace(scale=sensitivity / EPSILON, size=size)
