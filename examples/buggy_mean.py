"""A noisy mean that is NOT ε-DP: its noise is calibrated to the dataset's own size.

The mean of n records in [0, 1] moves by at most 1/n when one record is added or removed, so the
author adds Laplace noise of scale 1/(n ε) with n = len(data). But n is what add/remove
neighbours differ in: D and D' get noise of different scales b = 1/(n ε) and b' = 1/((n+1) ε), and
the log-ratio of two Laplace densities of different scales grows without bound in the tails,
|ln p_D(y) − ln p_D'(y)| ≈ |y| (1/b' − 1/b) (SPEC §2.1 for the density). The claim ε = 1 is false;
``dpaudit check examples/buggy_mean.py`` refutes it and prints a small counterexample.
"""

import dpaudit

EPSILON = 1.0


@dpaudit.mechanism(epsilon=EPSILON, neighbours="add-remove", domain=(0.0, 1.0), size=10)
def buggy_mean(data, rng, size=None):
    """Mean plus Laplace(1/(n ε)) noise, n = len(data): the bug is the data-dependent n."""
    n = max(len(data), 1)
    return data.sum() / n + rng.laplace(scale=1.0 / (n * EPSILON), size=size)
