"""Control: a mean as a noisy sum over a noisy count, each with Laplace noise at ε/2 (ε-DP under
add/remove by composition; the division is post-processing)."""

import numpy as np

import dpaudit

EPSILON = 1.0
EXPECTED = None
SOURCE = "control"


@dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0.0, 1.0), size=10)
def mechanism(data, rng):
    x = np.clip(data, 0.0, 1.0)
    noisy_sum = x.sum() + rng.laplace(scale=2.0 / EPSILON)
    noisy_count = len(x) + rng.laplace(scale=2.0 / EPSILON)
    return float(noisy_sum / max(noisy_count, 1.0))
