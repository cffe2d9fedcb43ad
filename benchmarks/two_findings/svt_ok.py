"""Sparse vector technique (above-threshold, c = 1): CORRECT logic; outputs are booleans.

Claim: ε = 1 (pure DP), linf neighbours (8 query answers, each moving by at most Δ = 1), answers in
[0, 10], public threshold T = 5. Lyu, Su and Li 2017 (PVLDB), Alg. 1 with c = 1: ε₁ = ε/2,
ρ ~ Lap(Δ/ε₁), ν_i ~ Lap(2cΔ/ε₂) with ε₂ = ε − ε₁; answer ⊤ when q_i + ν_i ≥ T + ρ and stop
after the first ⊤. It is ε-DP (their Thm 2); the release (the list of answers up to the first ⊤)
holds no float, so there is no float64 question.
"""
import numpy as np

import dpaudit

EPSILON = 1.0
THRESHOLD = 5.0
TRUE_EPSILON = 1.0   # at most (the proof's bound)
CORRECT = True
NOISE = "continuous"
OUTPUT = "discrete"


def above_threshold(queries, rng):
    eps1 = EPSILON / 2
    eps2 = EPSILON - eps1
    rho = rng.laplace(scale=1.0 / eps1)
    answers = []
    for q in queries:
        if q + rng.laplace(scale=2.0 / eps2) >= THRESHOLD + rho:
            answers.append(True)
            break
        answers.append(False)
    return answers


@dpaudit.mechanism(epsilon=EPSILON, neighbours="linf", domain=(0.0, 10.0), size=8)
def svt(data, rng, size=None):
    if size is None:
        return above_threshold(data, rng)
    eps1 = EPSILON / 2
    eps2 = EPSILON - eps1
    rho = rng.laplace(scale=1.0 / eps1, size=(size, 1))
    nu = rng.laplace(scale=2.0 / eps2, size=(size, len(data)))
    above = data + nu >= THRESHOLD + rho
    stop = np.where(above.any(axis=1), above.argmax(axis=1), len(data))
    patterns = [[False] * j + [True] for j in range(len(data))] + [[False] * len(data)]
    return [list(patterns[j]) for j in stop]
