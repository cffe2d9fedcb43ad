"""Report noisy max with one noise draw broadcast over every score: LOGIC BUG (infinite ε).

Claim: ε = 0.5 (pure DP), linf neighbours (5 scores in [0, 20], Δ = 1).
``data + rng.laplace(scale=2/ε)`` draws one scalar and numpy adds it to every score, so the argmax
is that of the exact scores (the mechanism of Dwork and Roth 2014, §3.3, needs one draw per score).
D = (1, 0, 0, 0, 0) gives index 0 always, its neighbour (0, 1, 0, 0, 0) index 1 always: true ε = ∞.
Only the one-call form is written: it is the idiom that hides the bug.
"""
import math

import numpy as np

import dpaudit

EPSILON = 0.5
TRUE_EPSILON = math.inf
CORRECT = False
NOISE = "continuous"
OUTPUT = "discrete"


@dpaudit.mechanism(epsilon=EPSILON, neighbours="linf", domain=(0.0, 20.0), size=5)
def report_noisy_max(data, rng):
    noisy = data + rng.laplace(scale=2.0 / EPSILON)
    return int(np.argmax(noisy))
