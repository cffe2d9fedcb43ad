"""A mechanism as third-party code often comes: no dpaudit import, no declared claim.

Its author says it is 0.5-DP for records in [0, 1] under add/remove neighbours. Give the claim on
the command line::

    dpaudit check examples/third_party_count.py --epsilon 0.5 --domain 0:1

It counts the records above 1/2 (sensitivity 1 under add/remove) and adds two-sided geometric
noise with ratio e^{-ε} (docs/math.md#geometric), so the claim holds and dpaudit does not refute it.
"""

import math

import numpy as np

EPSILON = 0.5


def mechanism(data, rng):
    """Count of records > 1/2 plus two-sided geometric noise, P(K = k) ∝ e^{-ε|k|}."""
    p = 1.0 - math.exp(-EPSILON)  # success probability of each one-sided geometric
    noise = int(rng.geometric(p)) - int(rng.geometric(p))
    return int(np.count_nonzero(data > 0.5)) + noise
