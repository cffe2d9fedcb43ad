"""Noisy sum made safe on doubles by Mironov's snapping mechanism: CORRECT, a snapped control.

Claim: ε = 1 (pure DP), add-remove neighbours, records in [0, 4], 10 records.
The sum has sensitivity Δ = 4: snapping is applied to Σx/4 (sensitivity 1) with B = 20 and the
result multiplied by 4 (exact: a power of two; post-processing either way). Snapping is ε-DP on
doubles (Mironov 2012, CCS, Thm 1): the output lies on the grid 4ΛZ ∩ [−4B, 4B], the same for every
input. True ε = 1 (to 2^-45). The float finding is expected NOT REFUTED.
"""
import math

import numpy as np

import dpaudit

EPSILON = 1.0
TRUE_EPSILON = 1.0
CORRECT = True
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


@dpaudit.mechanism(epsilon=EPSILON, neighbours="add-remove", domain=(0.0, 4.0), size=10)
def snapped_sum(data, rng, size=None):
    return 4.0 * snapping(data.sum() / 4.0, epsilon=EPSILON, bound=20.0, rng=rng, size=size)
