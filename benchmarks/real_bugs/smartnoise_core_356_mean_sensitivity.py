"""opendp/smartnoise-core#356: the add/remove sensitivity of a mean taken with the data's own n.

Source: https://github.com/opendp/smartnoise-core/issues/356 ("Incorrect sensitivity
calculations", D. Kifer, closed): the whitepaper ``whitepapers/sensitivities/mean/mean.pdf``,
§2.1, derives the add/remove sensitivity of the mean of n records in [L, U] as (U − L)/n with n the
size of the *current* dataset, which add/remove neighbours change, so the noise scale
(U − L)/(n ε) is itself a function of the private data (and the empty dataset is left out).

Re-creation: the mean of records clamped to [0, 1] with Laplace noise of scale (U − L)/(n ε),
n = len(data) (at least 1), add-remove neighbours, n ≤ 10, ε = 1. The replay sees the scale of the
Laplace call differ between D and D′: a data-dependent noise scale at the noise line.
"""

import numpy as np

import dpaudit

EPSILON, L, U = 1.0, 0.0, 1.0
EXPECTED = "data_dependent_noise_scale"
SOURCE = "opendp/smartnoise-core#356"


@dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0.0, 1.0), size=10)
def mechanism(data, rng):
    x = np.clip(np.asarray(data, dtype=float), L, U)
    n = max(len(x), 1)
    mean = float(x.sum()) / n
    sensitivity = (U - L) / n                       # §2.1: n of the current dataset
    return mean + rng.laplace(scale=sensitivity / EPSILON)  # replay: expected site
