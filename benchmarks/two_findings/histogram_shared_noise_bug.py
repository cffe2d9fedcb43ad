"""Noisy histogram with one Laplace draw broadcast over every bin: LOGIC BUG (infinite ε).

Claim: ε = 1 (pure DP), add-remove neighbours, records in [0, 10], 5 fixed bins, 10 records.
``counts + rng.laplace(scale=1/ε)`` adds the same scalar to every bin, so y₀ − y₁ = c₀ − c₁ exactly:
the event {y₀ − y₁ = c₀(D) − c₁(D)} has probability 1 on D and 0 on a neighbour that moves bin 0
(Dwork, McSherry, Nissim and Smith 2006 add independent noise per bin). True ε = ∞. A single
coordinate alone is ε-DP: the leak is in the differences. Only the one-call form is written.
"""
import math

import numpy as np

import dpaudit

EPSILON = 1.0
BINS = 5
TRUE_EPSILON = math.inf
CORRECT = False
NOISE = "continuous"
OUTPUT = "float"


@dpaudit.mechanism(epsilon=EPSILON, neighbours="add-remove", domain=(0.0, 10.0), size=10)
def noisy_histogram(data, rng):
    counts, _ = np.histogram(data, bins=BINS, range=(0.0, 10.0))
    return counts + rng.laplace(scale=1.0 / EPSILON)
