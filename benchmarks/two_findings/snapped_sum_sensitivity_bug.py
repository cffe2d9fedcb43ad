"""Snapped noisy sum of records in [0, 2] calibrated for sensitivity 1: LOGIC BUG, safe on doubles.

Claim: ε = 1 (pure DP), add-remove neighbours, records in [0, 2], 10 records.
Mironov's snapping (Mironov 2012, CCS, Thm 1) with λ = (1 + 2^-49·B)/ε is ε-DP for a
sensitivity-1 value; Σx moves by 2 when a record 2 is added. The snapped Laplace's tail cells then
have ratio e^{2/λ}: true ε = 2/λ = 2ε = 2 (to 2^-44). The output grid is the same for every input:
the float finding is expected NOT REFUTED.
"""
import math

import numpy as np

import dpaudit

EPSILON = 1.0
TRUE_EPSILON = 2.0
CORRECT = False
NOISE = "snapped"
OUTPUT = "float"


def snapping(value, *, epsilon, bound, rng, size=None):
    """Mironov's snapping mechanism for a sensitivity-1 value (Mironov 2012, CCS, Thm 1):
    clamp_B(⌊clamp_B(value) + S·λ·ln(U)⌉_Λ), U uniform on (0, 1], S a random sign, Λ the smallest
    power of two ≥ λ; (1/λ + 2^-49·B/λ)-DP for λ < B < 2^46·λ, so λ = (1 + 2^-49·B)/ε gives ε-DP."""
    lam = (1.0 + 2.0 ** -49 * bound) / epsilon
    grid = 2.0 ** math.ceil(math.log2(lam))
    n = 1 if size is None else int(size)
    u = 1.0 - rng.random(n)
    sign = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    x = min(max(float(value), -bound), bound)
    y = np.clip(grid * np.round((x + sign * lam * np.log(u)) / grid), -bound, bound)
    return y if size is not None else float(y[0])


@dpaudit.mechanism(epsilon=EPSILON, neighbours="add-remove", domain=(0.0, 2.0), size=10)
def snapped_sum(data, rng, size=None):
    return snapping(data.sum(), epsilon=EPSILON, bound=40.0, rng=rng, size=size)
