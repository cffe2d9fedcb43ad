"""Long vector outputs end to end (dpaudit.audit on a 300-bin histogram).

A histogram of records in [0, 300) (add-remove neighbours, 10 records: one record moves one bin
by one) released with two-sided geometric noise on every bin, claimed ε = 0.1. The fitted scores
of vectors longer than 64 coordinates see only the 64 that differ most on their fitting rows, and
the 8 that differ most get events of their own (:mod:`dpaudit.estimators.selection`).

* ``noisy_hist(1.0)``: noise for ε = 1 per bin, so the mechanism is 1-DP and no better. Power: it
  must be REFUTED with ε_LB ≥ 0.5 at 90% from 10⁵ samples.
* ``noisy_hist(0.1)``: ε = 0.1 as claimed. Size: audited at 99.9% confidence it is refuted with
  probability at most α = 0.001, so this test fails on correct code with probability ≤ 0.1%.

Fixed seed, nothing retried.
"""

import math

import numpy as np
import pytest

import dpaudit

pytestmark = [pytest.mark.statistical, pytest.mark.slow]

BINS = 300
CLAIM = dict(epsilon=0.1, neighbours="add-remove", domain=(0, BINS), size=10, samples=100_000,
             seed=11, early_stop=False)


def noisy_hist(eps: float):
    p = 1 - math.exp(-eps)  # two-sided geometric of parameter e^(-ε): ε-DP for one bin moved by 1

    def mech(data, rng, size=None):
        n = 1 if size is None else size
        h = np.bincount(np.clip(np.asarray(data, dtype=int), 0, BINS - 1), minlength=BINS)
        y = h + rng.geometric(p, (n, BINS)) - rng.geometric(p, (n, BINS))
        return y if size is not None else y[0]

    return mech


def test_long_histogram_with_too_little_noise_is_refuted():
    r = dpaudit.audit(noisy_hist(1.0), confidence=0.9, **CLAIM)
    assert r.verdict.value == "refuted", r
    assert r.epsilon_lower_bound >= 0.5


def test_long_histogram_as_claimed_is_not_refuted():
    r = dpaudit.audit(noisy_hist(0.1), confidence=0.999, **CLAIM)
    assert r.verdict.value == "not_refuted", r
