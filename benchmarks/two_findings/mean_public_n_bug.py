"""Noisy mean over a public n, calibrated with (hi − lo)/n under add-remove: LOGIC BUG.

Claim: ε = 1 (pure DP), add-remove neighbours, records in [3, 5], n = 10 public (datasets of 10 and
9 records). mean = Σx/n with b = (hi − lo)/(n·ε) = 0.2. (hi − lo)/n is the sensitivity under replace;
adding or removing a record 5 moves Σx/n by max(|lo|, |hi|)/n = 0.5. True ε = 0.5/0.2 = 2.5 (Dwork
and Roth 2014, Thm 3.6; tight).
"""
import dpaudit

EPSILON = 1.0
LO, HI = 3.0, 5.0
N = 10
TRUE_EPSILON = 2.5
CORRECT = False
NOISE = "continuous"
OUTPUT = "float"


@dpaudit.mechanism(epsilon=EPSILON, neighbours="add-remove", domain=(3.0, 5.0), size=10)
def noisy_mean(data, rng, size=None):
    mean = data.sum() / N
    return mean + rng.laplace(scale=(HI - LO) / (N * EPSILON), size=size)
