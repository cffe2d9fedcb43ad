"""A correct ε-DP noisy sum: records in [0, 1], add/remove neighbours, Laplace noise of scale 1/ε,
computed so that it stays ε-DP on doubles (Mironov's snapping mechanism).

Run ``dpaudit check examples/laplace_sum.py`` to audit it, and ``examples/buggy_mean.py`` for one
that is not private. (``data.sum() + rng.laplace(scale=1/ε)`` is ε-DP over the reals but not on
float64: x + noise and x' + noise reach different sets of doubles; dpaudit refutes it.)
"""
import math

import dpaudit


@dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0.0, 1.0), size=10)
def noisy_sum(data, rng, size=None):
    """Sum of records in [0, 1] (sensitivity 1 under add/remove) plus snapped Laplace(1/ε) noise."""
    return snapping(data.sum(), epsilon=1.0, bound=20.0, rng=rng, size=size)


def snapping(value, *, epsilon, bound, rng, size=None):
    """Mironov's snapping mechanism for a sensitivity-1 value (Mironov 2012, CCS, Theorem 1):

        clamp_B( ⌊ clamp_B(value) + S·λ·ln(U) ⌉_Λ ),  U uniform on (0, 1], S a random sign,

    Λ the smallest power of two ≥ λ, ⌊·⌉_Λ rounding to the nearest multiple of Λ. It is
    (1/λ + 2^-49·B/λ)-DP for λ < B < 2^46·λ, so λ = (1 + 2^-49·B)/ε gives ε-DP. The output lies
    on the grid ΛZ ∩ [−B, B], the same for every input, so the bits reveal nothing more.
    """
    import numpy as np

    lam = (1.0 + 2.0 ** -49 * bound) / epsilon
    if not lam < bound < 2.0 ** 46 * lam:
        raise ValueError(f"bound must satisfy λ < B < 2^46·λ with λ = {lam!r}, got {bound!r}")
    grid = 2.0 ** math.ceil(math.log2(lam))
    n = 1 if size is None else int(size)
    u = 1.0 - rng.random(n)                         # uniform on (0, 1]
    sign = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    x = min(max(float(value), -bound), bound)
    y = np.clip(grid * np.round((x + sign * lam * np.log(u)) / grid), -bound, bound)
    return y if size is not None else float(y[0])
