"""Control: diffprivlib's ``tools.mean`` (bounds (0, 1), ε = 1) called as it is, no decorator,
under replace-one neighbours (diffprivlib's sensitivity (U − L)/n assumes n public). The replay
records the ``LaplaceTruncated`` mechanism's own declared sensitivity and ε and finds the input
(the clipped mean) within it."""

import warnings

import numpy as np
from diffprivlib.tools import mean

import dpaudit

EPSILON = 1.0
EXPECTED = None
SOURCE = "control"


@dpaudit.mechanism(epsilon=1.0, neighbours="replace", domain=(0.0, 1.0), size=10)
def mechanism(data, rng):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(mean(np.asarray(data, dtype=float), epsilon=EPSILON, bounds=(0.0, 1.0),
                          random_state=int(rng.integers(2**31))))
