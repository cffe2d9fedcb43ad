"""Casacuberta, Shoemate, Vadhan and Wagaman (CCS 2022): a float sum's sensitivity taken as U − L.

Source: S. Casacuberta, M. Shoemate, S. Vadhan, C. Wagaman, "Widespread Underestimation of
Sensitivity in Differentially Private Libraries and How to Fix It", ACM CCS 2022
(arXiv:2207.10635). Libraries computed a bounded sum in floating point and calibrated the noise
to the sensitivity of the sum over the reals (U − L for a sized dataset with one record
replaced); the rounding of the partial sums makes the float sum move by more, by as much as a
unit in the last place of the total, which for large bounds exceeds U − L many times. OpenDP's fix
(``make_sized_bounded_float_ordered_sum``, docs) adds a relaxation of n² / 2^(k−1) · max(|L|, U).

Re-creation: the sized sequential float64 sum of n = 10 records clamped to [L, U] = [2^50,
2^50 + 1] with the sensitivity U − L = 1 declared on the noise function (``@primitive``), one
record replaced. The partial sums reach 10 · 2^50, where doubles are 2 apart: replacing one
record can move the float sum by 2, twice the declared sensitivity. The replay (its patterns and
its record orders) finds the declared sensitivity exceeded at the call of the noise.
"""

import numpy as np

import dpaudit
from dpaudit.replay import primitive

EPSILON = 1.0
L, U = 2.0 ** 50, 2.0 ** 50 + 1.0
N = 10
EXPECTED = "sensitivity_exceeded"
SOURCE = "Casacuberta, Shoemate, Vadhan, Wagaman, CCS 2022 (arXiv:2207.10635)"


@primitive(sensitivity="sensitivity", epsilon="epsilon", input="value", distribution="laplace")
def laplace_noise(value, sensitivity, epsilon, rng):
    return value + rng.laplace(scale=sensitivity / epsilon)


# the domain is [L, U] = [2^50, 2^50 + 1], written out: dpaudit check reads the claim from the source
@dpaudit.mechanism(epsilon=1.0, neighbours="replace", domain=(1125899906842624.0, 1125899906842625.0), size=10)
def mechanism(data, rng):
    total = 0.0
    for x in np.clip(data, L, U):                    # sequential float64 summation
        total += float(x)
    return float(laplace_noise(total, U - L, EPSILON, rng))  # replay: expected site
