"""Exponential mechanism by the Gumbel-max trick: CORRECT logic; integer output.

Claim: ε = 1 (pure DP), linf neighbours (4 utility scores in [−5, 5], sensitivity Δ = 1).
argmax_i (u_i + Gumbel(2Δ/ε)) samples i with probability ∝ exp(ε·u_i/(2Δ)): the exponential
mechanism (McSherry and Talwar 2007, FOCS, Thm 6), ε-DP. The index is an integer: no float64
question.
"""
import numpy as np

import dpaudit

EPSILON = 1.0
TRUE_EPSILON = 1.0   # at most (the proof's bound)
CORRECT = True
NOISE = "continuous"
OUTPUT = "discrete"


@dpaudit.mechanism(epsilon=EPSILON, neighbours="linf", domain=(-5.0, 5.0), size=4)
def exponential_mechanism(data, rng, size=None):
    shape = len(data) if size is None else (size, len(data))
    choice = np.argmax(data + rng.gumbel(scale=2.0 / EPSILON, size=shape), axis=-1)
    return int(choice) if size is None else choice
