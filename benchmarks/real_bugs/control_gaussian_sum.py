"""Control: a clamped sum with Gaussian noise σ = Δ√(2 ln(1.25/δ))/ε ((ε, δ)-DP for ε < 1; Dwork
and Roth 2014, Theorem A.1). The replay's exact Gaussian accounting puts it below the claim."""

import math

import numpy as np

import dpaudit

EPSILON, DELTA, U = 0.9, 1e-5, 1.0
SIGMA = U * math.sqrt(2 * math.log(1.25 / DELTA)) / EPSILON
EXPECTED = None
SOURCE = "control"


@dpaudit.mechanism(epsilon=0.9, delta=1e-05, neighbours="add-remove", domain=(0.0, 1.0), size=10)
def mechanism(data, rng):
    return float(np.clip(data, 0.0, U).sum() + rng.normal(0.0, SIGMA))
