"""opendp/opendp#314: the sized bounded integer sum's stability map truncates d_in·(U − L)/2.

Source: https://github.com/opendp/opendp/issues/314 ("Underestimated sized bounded sum integer
sensitivity", closed): with integer T, ``d_in * (U - L) / 2`` truncates, so the relation
underestimates the sensitivity by 1/2 when d_in·(U − L) is odd.

Re-creation: the sized bounded sum of n = 10 integers clamped to [L, U] = [0, 3] with Laplace
noise calibrated to the map's value at the distance of the pair, ``d_in * (U - L) // 2`` in
integer arithmetic as the Rust code did, declared on the noise function. Under the symmetric
distance, datasets of the same size are an even distance apart (one record replaced: d_in = 2),
where the truncation does not bite: 2·3 // 2 = 3 = U − L, and a replaced record moves the sum by at
most 3. The truncation only matters at odd d_in, which no pair of same-size datasets has, so there
is nothing for a pair search to find: the replay reports no violation, as it should. This row is
kept to say so (a documented bug a pair-based audit cannot reach), not counted among the found.
"""

import numpy as np

import dpaudit
from dpaudit.replay import primitive

EPSILON, L, U, N = 1.0, 0, 3, 10
D_IN = 2                     # symmetric distance of one replaced record
EXPECTED = None
SOURCE = "opendp/opendp#314"


@primitive(sensitivity="sensitivity", epsilon="epsilon", input="value", distribution="laplace")
def laplace_noise(value, sensitivity, epsilon, rng):
    return value + rng.laplace(scale=sensitivity / epsilon)


@dpaudit.mechanism(epsilon=1.0, neighbours="replace", domain=(0.0, 3.0), size=10)
def mechanism(data, rng):
    values = np.clip(np.round(np.asarray(data, dtype=float)), L, U).astype(np.int64)
    total = int(values.sum())
    sensitivity = D_IN * (U - L) // 2                # the relation's map at d_in, truncated
    return float(laplace_noise(total, sensitivity, EPSILON, rng))
