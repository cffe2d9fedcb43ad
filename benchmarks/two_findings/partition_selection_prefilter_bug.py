"""Partition selection that first drops keys with fewer than 10 records, then thresholds noisy
counts: LOGIC BUG (infinite ε).

Claim: ε = 1, δ = 1e-5, add-remove neighbours, records in [0, 8] (key = ⌊x⌋, 8 keys), 12 records.
The noisy threshold τ = 1 + ln(1/(2δ))/ε = 11.82 of partition_selection_ok.py is right, but a
deterministic pre-filter ("k-anonymity", count ≥ 10) comes first. With 10 records on a key in D and
9 in D′, the key is released with probability ½·e^{−ε(τ−10)} = 0.081 on D and never on D′: no ε
makes 0.081 ≤ e^ε·0 + δ, so the true ε at δ = 1e-5 is ∞ (Desfontaines et al. 2022, §3: the
selection must depend on the data only through the noisy count).
"""
import math

import numpy as np

import dpaudit

EPSILON = 1.0
DELTA = 1e-5
KEYS = 8
MIN_COUNT = 10
TAU = 1.0 + math.log(1.0 / (2.0 * DELTA)) / EPSILON
TRUE_EPSILON = math.inf
CORRECT = False
NOISE = "continuous"
OUTPUT = "discrete"


def keys_of(data):
    return np.minimum(np.floor(data), KEYS - 1).astype(int)


@dpaudit.mechanism(epsilon=EPSILON, delta=DELTA, neighbours="add-remove", domain=(0.0, 8.0), size=12)
def partition_selection(data, rng, size=None):
    if size is None:
        keys, counts = np.unique(keys_of(data), return_counts=True)
        keys, counts = keys[counts >= MIN_COUNT], counts[counts >= MIN_COUNT]
        noisy = counts + rng.laplace(scale=1.0 / EPSILON, size=len(counts))
        return [int(k) for k in keys[noisy > TAU]]
    counts = np.bincount(keys_of(data), minlength=KEYS)
    noisy = counts + rng.laplace(scale=1.0 / EPSILON, size=(size, KEYS))
    released = (counts >= MIN_COUNT) & (noisy > TAU)
    masks = released @ (1 << np.arange(KEYS))
    table = [[k for k in range(KEYS) if m >> k & 1] for m in range(1 << KEYS)]
    return [list(table[m]) for m in masks]
