"""Noisy histogram whose bin edges come from the data (np.histogram without range=): LOGIC BUG.

Claim: ε = 0.5 (pure DP), add-remove neighbours, records in [0, 1], 4 bins, 10 records.
``np.histogram(data, bins=4)`` spans [min(data), max(data)] (a single repeated value v gets
[v − ½, v + ½]), so one record moves every other record's bin. D′ = [1]×9 has edges 0.5, 0.75, 1,
1.25, 1.5 and counts (0, 0, 9, 0); D = [0] + [1]×9 has edges 0, 0.25, …, 1 and counts (1, 0, 0, 9):
L1 distance 19 = 2n − 1, the largest possible for counts summing to 10 and 9. With Lap(1/ε) per bin
the true ε = 19·ε = 9.5 (Laplace ratio over L1 distance, Dwork and Roth 2014, Prop. 3.7).
"""
import numpy as np

import dpaudit

EPSILON = 0.5
BINS = 4
TRUE_EPSILON = 9.5
CORRECT = False
NOISE = "continuous"
OUTPUT = "float"


@dpaudit.mechanism(epsilon=EPSILON, neighbours="add-remove", domain=(0.0, 1.0), size=10)
def noisy_histogram(data, rng, size=None):
    counts, _ = np.histogram(data, bins=BINS)
    shape = BINS if size is None else (size, BINS)
    return counts + rng.laplace(scale=1.0 / EPSILON, size=shape)
