"""Sparse vector without query noise, answering every query: LOGIC BUG (infinite ε).

Claim: ε = 1 (pure DP), linf neighbours (8 query answers in [0, 10], Δ = 1), threshold T = 5.
Lyu, Su and Li 2017 (PVLDB), Alg. 5: ρ ~ Lap(Δ/ε₁), ε₁ = ε/2, no ν_i, and no stop after a ⊤.
Every answer compares the exact q_i with one noisy threshold, so the answers are ordered like the
q_i: with q₁ = 4.5, q₂ = 5.5 the pattern (⊥, ⊤) needs q₁ < T + ρ ≤ q₂ (probability > 0), and on the
neighbour q₁ = 5.5, q₂ = 4.5 it is impossible. True ε = ∞ (their §4, Alg. 5 is not ε′-DP for any ε′).
"""
import math

import dpaudit

EPSILON = 1.0
THRESHOLD = 5.0
TRUE_EPSILON = math.inf
CORRECT = False
NOISE = "continuous"
OUTPUT = "discrete"


@dpaudit.mechanism(epsilon=EPSILON, neighbours="linf", domain=(0.0, 10.0), size=8)
def svt(data, rng, size=None):
    eps1 = EPSILON / 2
    if size is None:
        rho = rng.laplace(scale=1.0 / eps1)
        return data >= THRESHOLD + rho
    rho = rng.laplace(scale=1.0 / eps1, size=(size, 1))
    return data >= THRESHOLD + rho
