"""A noisy mean that is NOT ε-DP: its noise assumes the mean moves by 1/SIZE, but it divides by
the dataset's own size.

The author calibrates Laplace noise to the sensitivity of a mean of SIZE = 10 records in [0, 1],
Δ = 1/SIZE, so the scale is Δ/ε = 0.1 (docs/math.md#laplace). But the mean divides by n = len(data), which
add/remove neighbours change: from D = [] (mean 0 by convention) to D' = [1] the mean moves by 1,
not 1/10, so the true privacy loss is Δ_true/scale = 1/0.1 = 10, not the claimed ε = 1 (and on
larger datasets, 1/n > 1/SIZE whenever n < SIZE). ``dpaudit check examples/buggy_mean.py`` refutes
the claim and prints a small counterexample.
"""

import dpaudit

EPSILON = 1.0
SIZE = 10


@dpaudit.mechanism(epsilon=EPSILON, neighbours="add-remove", domain=(0.0, 1.0), size=SIZE)
def buggy_mean(data, rng, size=None):
    """Mean plus Laplace(1/(SIZE·ε)) noise: the bug is the data-dependent denominator len(data)."""
    mean = data.sum() / len(data) if len(data) else 0.0
    return mean + rng.laplace(scale=1.0 / (SIZE * EPSILON), size=size)
