"""google/differential-privacy#405: NaN passes ClampFloat64 and reaches the noisy sum.

Source: https://github.com/google/differential-privacy/pull/405 ("Reject NaN in ClampFloat64 and
check L1 sensitivity overflow in Laplace noise"; the maintainers confirm that it affects
``BoundedSumFloat64``'s ``Add``). ``ClampFloat64`` in ``go/dpagg/helpers.go`` returns ``e`` when
neither ``e > upper`` nor ``e < lower`` holds, which is the case for NaN (IEEE 754 comparisons with
NaN are false); the bounded sum adds it, and ``AddNoiseFloat64`` adds Laplace noise calibrated to
l0 · lInf to a NaN: the output is NaN exactly when the dataset holds the record.

Re-creation (Python for Go): the clamp with the same two comparisons, the bounded sum, and the
noise function with the sensitivity it is given (l0 · max(|lower|, |upper|)), marked with
``@primitive``. The claim is the library's: ε-DP for any input, since the sum clamps; the audit is
run with ``nonfinite=True`` (neighbours that add a NaN, +inf or −inf record). The replay finds the
declared sensitivity exceeded, with a NaN input on D′, at the call of the noise.
"""

import numpy as np

import dpaudit
from dpaudit.replay import primitive

EPSILON, LOWER, UPPER = 1.0, -1.0, 1.0
EXPECTED = "sensitivity_exceeded"
SOURCE = "google/differential-privacy#405"
REPLAY = {"nonfinite": True}


def clamp_float64(e, lower, upper):
    """``ClampFloat64``: NaN is neither above ``upper`` nor below ``lower``."""
    if e > upper:
        return upper
    if e < lower:
        return lower
    return e


@primitive(sensitivity=lambda a: a["l0"] * a["linf"], epsilon="epsilon", input="x",
           distribution="laplace")
def add_noise_float64(x, l0, linf, epsilon, rng):
    """``AddNoiseFloat64``: Laplace noise of scale l0 · lInf / ε."""
    return x + rng.laplace(scale=l0 * linf / epsilon)


@dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(-1.0, 1.0), size=10)
def mechanism(data, rng):
    total = 0.0
    for e in data:                                   # BoundedSumFloat64.Add
        total += clamp_float64(float(e), LOWER, UPPER)
    linf = max(abs(LOWER), abs(UPPER))
    return float(add_noise_float64(total, 1, linf, EPSILON, rng))  # replay: expected site
