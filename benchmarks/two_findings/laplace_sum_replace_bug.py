"""Noisy sum calibrated to the add-remove sensitivity but claimed under replace: LOGIC BUG.

Claim: ε = 1 (pure DP), replace neighbours (bounded DP), records in [−2, 2], 10 records.
The author takes Δ = max(|lo|, |hi|) = 2, which is the sensitivity of a sum when a record is added
or removed; replacing a record −2 by 2 moves the sum by hi − lo = 4. With b = 2/ε the true ε is
Δ_true/b = 4/2 = 2 (Dwork and Roth 2014, Thm 3.6; tight).
"""
import dpaudit

EPSILON = 1.0
LO, HI = -2.0, 2.0
TRUE_EPSILON = 2.0
CORRECT = False
NOISE = "continuous"
OUTPUT = "float"


@dpaudit.mechanism(epsilon=EPSILON, neighbours="replace", domain=(-2.0, 2.0), size=10)
def noisy_sum(data, rng, size=None):
    sensitivity = max(abs(LO), abs(HI))
    return data.sum() + rng.laplace(scale=sensitivity / EPSILON, size=size)
