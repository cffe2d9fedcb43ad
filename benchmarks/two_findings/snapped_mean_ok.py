"""Noisy mean with a public size, made safe on doubles by Mironov's snapping mechanism: CORRECT, a
snapped control.

Claim: ε = 0.5 (pure DP), replace neighbours (n = 16 public), records in [−1, 1].
The mean has sensitivity Δ = (hi − lo)/n = 2/16 = 0.125: snapping is applied to mean/Δ (sensitivity
1, in [−8, 8]) with B = 64 and the result multiplied by Δ (a power of two: exact). ε-DP on doubles
(Mironov 2012, CCS, Thm 1). True ε = 0.5. The float finding is expected NOT REFUTED.
"""
import math

import numpy as np

import dpaudit

EPSILON = 0.5
SENSITIVITY = 2.0 / 16
TRUE_EPSILON = 0.5
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


@dpaudit.mechanism(epsilon=EPSILON, neighbours="replace", domain=(-1.0, 1.0), size=16)
def snapped_mean(data, rng, size=None):
    y = snapping(data.mean() / SENSITIVITY, epsilon=EPSILON, bound=64.0, rng=rng, size=size)
    return SENSITIVITY * y
