"""Noisy sum whose Laplace scale is ε instead of 1/ε: LOGIC BUG (and porous on doubles).

Claim: ε = 0.5 (pure DP), add-remove neighbours, records in [0, 1], 10 records (Δ = 1).
The author writes ``rng.laplace(scale=EPSILON)``: b = 0.5 where the Laplace mechanism needs
b = Δ/ε = 2 (Dwork and Roth 2014, Thm 3.6). True ε = Δ/b = 1/0.5 = 2 (tight: D′ = D + [1]).
"""
import dpaudit

EPSILON = 0.5
TRUE_EPSILON = 2.0
CORRECT = False
NOISE = "continuous"
OUTPUT = "float"


@dpaudit.mechanism(epsilon=EPSILON, neighbours="add-remove", domain=(0.0, 1.0), size=10)
def noisy_sum(data, rng, size=None):
    return data.sum() + rng.laplace(scale=EPSILON, size=size)
