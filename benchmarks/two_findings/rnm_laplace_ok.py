"""Report noisy max (the index of the largest noisy score), Laplace noise: CORRECT logic; integer output.

Claim: ε = 0.5 (pure DP), linf neighbours (5 scores in [0, 20], each moving by at most Δ = 1).
argmax_i (q_i + Lap(2Δ/ε)) is ε-DP for scores of sensitivity Δ (Dwork and Roth 2014, §3.3; Ding,
Wang, Wang, Zhang and Kifer 2018, Alg. 5). The index is an integer: no float64 question.
"""
import numpy as np

import dpaudit

EPSILON = 0.5
TRUE_EPSILON = 0.5   # at most (the proof's bound)
CORRECT = True
NOISE = "continuous"
OUTPUT = "discrete"


@dpaudit.mechanism(epsilon=EPSILON, neighbours="linf", domain=(0.0, 20.0), size=5)
def report_noisy_max(data, rng, size=None):
    if size is None:
        return int(np.argmax(data + rng.laplace(scale=2.0 / EPSILON, size=len(data))))
    return np.argmax(data + rng.laplace(scale=2.0 / EPSILON, size=(size, len(data))), axis=1)
