"""A correct ε-DP noisy sum: records in [0, 1], add/remove neighbours, Laplace noise of scale 1/ε.

Run ``dpaudit check examples/laplace_sum.py`` to audit it, and ``examples/buggy_mean.py`` for one
that is not private.
"""

import dpaudit


@dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0.0, 1.0), size=10)
def noisy_sum(data, rng, size=None):
    """Sum of records in [0, 1] (sensitivity 1 under add/remove) plus Laplace(1/ε) noise."""
    return data.sum() + rng.laplace(scale=1.0 / 1.0, size=size)
