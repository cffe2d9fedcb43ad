"""Noisy sum, Laplace mechanism, written as users write it (float64): CORRECT logic, porous on doubles.

Claim: ε = 1 (pure DP), add-remove neighbours, records in [0, 1], 10 records.
M(D) = Σx + Lap(Δ/ε) with Δ = max(|lo|, |hi|) = 1 under add-remove (Dwork, McSherry, Nissim and
Smith 2006, Prop. 1; Dwork and Roth 2014, Thm 3.6). True ε = Δ/b = 1/1 = 1 over the reals (tight:
D′ = D + [1]). On float64, x + noise and x′ + noise reach different sets of doubles (Mironov 2012,
CCS, §3): the float finding is expected REFUTED.
"""
import dpaudit

EPSILON = 1.0
TRUE_EPSILON = 1.0
CORRECT = True
NOISE = "continuous"
OUTPUT = "float"


@dpaudit.mechanism(epsilon=EPSILON, neighbours="add-remove", domain=(0.0, 1.0), size=10)
def laplace_sum(data, rng, size=None):
    return data.sum() + rng.laplace(scale=1.0 / EPSILON, size=size)
