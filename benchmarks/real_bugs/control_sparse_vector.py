"""Control: AboveThreshold (the sparse vector technique with c = 1; Lyu, Su and Li 2017,
Algorithm 1; Dwork and Roth 2014, Algorithm 1): ρ ~ Lap(2/ε) on the threshold, ν_i ~ Lap(4/ε) on
each counting query (sensitivity 1), stop at the first query above. It is ε-DP, and its control
flow depends on the data: the replay reports that as a finding (not a violation), and its
composition over the calls exceeds ε (a note: SVT's proof is not per-call composition)."""

import numpy as np

import dpaudit

EPSILON, T = 1.0, 4.0
THRESHOLDS = (0.1, 0.3, 0.5, 0.7, 0.9)
EXPECTED = None
SOURCE = "control"


@dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0.0, 1.0), size=10)
def mechanism(data, rng):
    x = np.clip(data, 0.0, 1.0)
    rho = rng.laplace(scale=2.0 / EPSILON)
    for i, t in enumerate(THRESHOLDS):
        q = float(np.sum(x >= t))
        if q + rng.laplace(scale=4.0 / EPSILON) >= T + rho:
            return i
    return -1
