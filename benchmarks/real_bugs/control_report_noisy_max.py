"""Control: report noisy max over 4 counting queries (records ≥ t, sensitivity 1 each) with
Laplace(2/ε) noise on each: ε-DP (Dwork and Roth 2014, Claim 3.9). A record moves all four counts,
so per-call composition adds up to more than ε: the replay says so as a note, never as a
violation (report noisy max is private for a reason composition does not see)."""

import numpy as np

import dpaudit

EPSILON = 1.0
THRESHOLDS = (0.2, 0.4, 0.6, 0.8)
EXPECTED = None
SOURCE = "control"


@dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0.0, 1.0), size=10)
def mechanism(data, rng):
    x = np.clip(data, 0.0, 1.0)
    counts = np.array([np.sum(x >= t) for t in THRESHOLDS], dtype=float)
    return int(np.argmax(counts + rng.laplace(scale=2.0 / EPSILON, size=len(counts))))
