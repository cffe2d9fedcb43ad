"""Control: a histogram of 5 fixed bins with Laplace(1/ε) noise on each count (ε-DP under
add/remove: one record changes one count by 1)."""

import numpy as np

import dpaudit

EPSILON, BINS = 1.0, 5
EXPECTED = None
SOURCE = "control"


@dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0.0, 1.0), size=10)
def mechanism(data, rng):
    counts, _ = np.histogram(np.clip(data, 0.0, 1.0), bins=BINS, range=(0.0, 1.0))
    return counts + rng.laplace(scale=1.0 / EPSILON, size=BINS)
