"""A noisy sum that forgets to clip: its records may be as large as 5, its noise hides a change of
1. The release is the noisy value itself, so the replay computes the privacy loss of an added record
exactly (|Δ|/b = 5 at the line of the noise) and refutes ε = 1 without sampling
(docs/replay.md#the-accounting)."""

import numpy as np

import dpaudit


@dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0.0, 5.0), size=10)
def noisy_sum(data, rng):
    total = np.sum(data)  # forgot np.clip(data, 0.0, 1.0)
    return total + rng.laplace(scale=1.0)
