"""Non-finite outputs are outputs: NaN and ±inf are atoms of the output space, not errors.

``dpaudit check examples/non_finite.py:mean examples/non_finite.py:overflows`` refutes ``mean`` (NaN on the empty dataset, finite on
its neighbours) and ``overflows`` (+inf once the records' sum passes log(DBL_MAX) ≈ 709.78), each
with a counterexample that says "non-finite output"; ``always_nan`` releases nothing about its
input (a constant output) and is not refuted.
"""

import numpy as np

import dpaudit


@dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0, 1), size=3)
def mean(data, rng, size=None):
    """The mean plus Laplace(1) noise; 0/0 = NaN on the empty dataset."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.sum(data) / len(data) + rng.laplace(scale=1.0, size=size)


@dpaudit.mechanism(epsilon=1.0, neighbours="replace", domain=(0, 1000), size=2)
def overflows(data, rng, size=None):
    """exp of the sum plus Laplace(1) noise: finite for small records, +inf for large ones."""
    with np.errstate(over="ignore"):
        return np.exp(np.sum(data)) + rng.laplace(scale=1.0, size=size)


@dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0, 1), size=3)
def always_nan(data, rng, size=None):
    """A constant output (NaN): 0-DP, so never refuted."""
    return np.nan if size is None else np.full(size, np.nan)
