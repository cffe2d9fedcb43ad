"""Control: a histogram of 5 fixed bins with Gaussian noise of σ = 1, i.e. μ = 1 GDP under
add/remove (Dong, Roth and Su 2022), which is (4.38, 1e-5)-DP: claimed (4.5, 1e-5)."""

import numpy as np

import dpaudit

EPSILON, DELTA, BINS, SIGMA = 4.5, 1e-5, 5, 1.0
EXPECTED = None
SOURCE = "control"


@dpaudit.mechanism(epsilon=4.5, delta=1e-05, neighbours="add-remove", domain=(0.0, 1.0), size=10)
def mechanism(data, rng):
    counts, _ = np.histogram(np.clip(data, 0.0, 1.0), bins=BINS, range=(0.0, 1.0))
    return counts + rng.normal(0.0, SIGMA, size=BINS)
