"""Control: the exponential mechanism (McSherry and Talwar 2007) over 4 candidates with utility
u(D, r) = number of records ≥ r/4 (sensitivity 1), sampled with ``rng.choice(p=...)`` at
probabilities ∝ exp(ε u / 2). The replay reads the probabilities as the draw's input and accounts
the draw exactly: max_r |ln p_r(D) − ln p_r(D′)| ≤ ε."""

import numpy as np

import dpaudit

EPSILON = 1.0
CANDIDATES = np.array([0.0, 0.25, 0.5, 0.75])
EXPECTED = None
SOURCE = "control"


@dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0.0, 1.0), size=10)
def mechanism(data, rng):
    x = np.clip(data, 0.0, 1.0)
    utility = np.array([np.sum(x >= r) for r in CANDIDATES], dtype=float)
    weights = np.exp(EPSILON * (utility - utility.max()) / 2.0)
    return int(rng.choice(len(CANDIDATES), p=weights / weights.sum()))
