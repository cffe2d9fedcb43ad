"""Partition selection: release the keys whose Laplace-noised count exceeds a threshold. CORRECT
logic; the release is a list of integer keys.

Claim: ε = 1, δ = 1e-5, add-remove neighbours, records in [0, 8] (key = ⌊x⌋, 8 keys; one record per
user), 24 records. Only keys present in the data are candidates; each gets Lap(1/ε) and is released
when count + noise > τ with τ = 1 + ln(1/(2δ))/ε = 11.82 (Korolova, Kenthapadi, Mishra and Ntoulas
2009, WWW; Desfontaines, Voss, Gipson and Mandayam 2022, PoPETs, §3). A key present in both D and
D′ changes count by 1 (ε); a key only in D (count 1) is released with probability
½·e^{−ε(τ−1)} = δ. So (ε, δ)-DP.
"""
import math

import numpy as np

import dpaudit

EPSILON = 1.0
DELTA = 1e-5
KEYS = 8
TAU = 1.0 + math.log(1.0 / (2.0 * DELTA)) / EPSILON
TRUE_EPSILON = 1.0   # at most, at δ = 1e-5
CORRECT = True
NOISE = "continuous"
OUTPUT = "discrete"


def keys_of(data):
    return np.minimum(np.floor(data), KEYS - 1).astype(int)


@dpaudit.mechanism(epsilon=EPSILON, delta=DELTA, neighbours="add-remove", domain=(0.0, 8.0), size=24)
def partition_selection(data, rng, size=None):
    if size is None:
        keys, counts = np.unique(keys_of(data), return_counts=True)
        noisy = counts + rng.laplace(scale=1.0 / EPSILON, size=len(counts))
        return [int(k) for k in keys[noisy > TAU]]
    counts = np.bincount(keys_of(data), minlength=KEYS)
    noisy = counts + rng.laplace(scale=1.0 / EPSILON, size=(size, KEYS))
    released = (counts > 0) & (noisy > TAU)
    masks = released @ (1 << np.arange(KEYS))
    table = [[k for k in range(KEYS) if m >> k & 1] for m in range(1 << KEYS)]
    return [list(table[m]) for m in masks]
