"""A noisy sum of records clipped at 1, its clip written as x − max(x − 1, 0) (a ReLU, as
neural-network code writes a clamp), with a bug that lives only at a numeric corner.

Records lie in [0, 2^60] (1152921504606846976), add/remove neighbours, at most 10 records; each record's contribution
min(x, 1) has sensitivity 1, released with Mironov's snapping mechanism at ε = 1 (so the float64
output reveals nothing more: ``examples/laplace_sum.py``). Over the reals x − max(x − 1, 0) =
min(x, 1). In float64 it is not: for 2^53 ≤ x < 2^54 the doubles are 2 apart, x − 1 is a halfway
case and rounds to even (IEEE 754-2008, §4.3.1), so x − (x − 1) is 0 where x's last significand
bit is even and 2 where it is odd; above 2^54, x − 1 rounds to x and the contribution is 0. A
record at the float above 2^53 (2^53 + 2) contributes 2: removing it moves the sum by 2, twice
the sensitivity, and the mechanism is only 2ε-DP. The domain's ends (0, 2^60), its midpoint and
a grid of 2^40-multiples contribute 0 or 1, so the relation's structured patterns never see it.

``buggy`` is that mechanism; ``fixed`` clips with min(x, 1) and is ε-DP (the control).
"""
import math

import numpy as np

import dpaudit

EPSILON = 1.0
BOUND = 20.0


@dpaudit.mechanism(epsilon=EPSILON, neighbours="add-remove", domain=(0.0, 1152921504606846976.0), size=10)
def buggy(data, rng, size=None):
    """Σ (x − max(x − 1, 0)) plus snapped Laplace(1/ε): 2ε-DP at records 2^53 + 2 (module docstring)."""
    data = np.asarray(data, dtype=float)
    return snapping(float(np.sum(data - np.maximum(data - 1.0, 0.0))), rng=rng, size=size)


@dpaudit.mechanism(epsilon=EPSILON, neighbours="add-remove", domain=(0.0, 1152921504606846976.0), size=10)
def fixed(data, rng, size=None):
    """Σ min(x, 1) plus snapped Laplace(1/ε): ε-DP (the control)."""
    data = np.asarray(data, dtype=float)
    return snapping(float(np.sum(np.minimum(data, 1.0))), rng=rng, size=size)


def snapping(value, *, rng, size=None, epsilon=EPSILON, bound=BOUND):
    """Mironov's snapping mechanism for a sensitivity-1 value (Mironov 2012, CCS, Theorem 1):
    clamp_B(⌊clamp_B(value) + S·λ·ln(U)⌉_Λ), U uniform on (0, 1], S a random sign, Λ the smallest
    power of two ≥ λ; (1/λ + 2^-49·B/λ)-DP for λ < B < 2^46·λ, so λ = (1 + 2^-49·B)/ε is ε-DP."""
    lam = (1.0 + 2.0 ** -49 * bound) / epsilon
    grid = 2.0 ** math.ceil(math.log2(lam))
    n = 1 if size is None else int(size)
    u = 1.0 - rng.random(n)
    sign = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    x = min(max(float(value), -bound), bound)
    y = np.clip(grid * np.round((x + sign * lam * np.log(u)) / grid), -bound, bound)
    return y if size is not None else float(y[0])
