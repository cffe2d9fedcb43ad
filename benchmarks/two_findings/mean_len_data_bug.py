"""Noisy mean that divides by len(data) (0 for no records), noise for n = 10: LOGIC BUG.

Claim: ε = 0.5 (pure DP), add-remove neighbours, records in [1, 5], 10 records.
Noise b = (hi − lo)/(n·ε) = 4/(10·0.5) = 0.8 assumes a mean of 10 records moving by 0.4. The mean
of len(data) records moves by |x − mean(D′)|/|D| ≤ 4/2 = 2 for |D| ≥ 2, and from D′ = [] (0 by
convention) to D = [5] by 5. Δ = 5, true ε = 5/0.8 = 6.25 (Dwork and Roth 2014, Thm 3.6; tight).
"""
import dpaudit

EPSILON = 0.5
LO, HI = 1.0, 5.0
N = 10
TRUE_EPSILON = 6.25
CORRECT = False
NOISE = "continuous"
OUTPUT = "float"


@dpaudit.mechanism(epsilon=EPSILON, neighbours="add-remove", domain=(1.0, 5.0), size=10)
def noisy_mean(data, rng, size=None):
    mean = data.mean() if len(data) else 0.0
    return mean + rng.laplace(scale=(HI - LO) / (N * EPSILON), size=size)
