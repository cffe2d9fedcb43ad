"""Power of the sampled auditor: mechanisms that break their claim are refuted, and the bound
lies between the claim and the truth.

Each case is one seeded audit at 95% confidence with a small budget. The ε lower bound exceeds
the true ε with probability at most 5% (soundness), and with the budgets below the bound of a
mechanism this far from its claim falls short of the claim only with negligible probability
(the validated event's expected bound is at least twice the claim), so a correct auditor fails a
case with probability below about 5% + 1% (α per case, stated as 0.06). Fixed seeds, no retries.
"""

import math

import numpy as np
import pytest

import dpaudit

pytestmark = pytest.mark.statistical


def half_noise_sum(data, rng, size=None):
    """Laplace with half the scale its ε needs: true ε = 2 under add/remove on [0, 1]."""
    return data.sum() + rng.laplace(scale=0.5, size=size)


def leaky_svt(data, rng, size=None):
    """SVT that releases the noisy answer above the threshold (Lyu et al. 2017, Alg 3 style)."""
    n = 1 if size is None else size
    rho = rng.laplace(scale=2.0, size=(n, 1))
    m = data + rng.laplace(scale=2.0, size=(n, data.size))
    out = np.where(m >= rho + 1.0, m, -1000.0)
    return out if size is not None else out[0]


def biased_coin(data, rng, size=None):
    """Randomized response keeping the first record's bit with probability 0.9: ε = ln 9."""
    keep = rng.random(size) < 0.9
    bit = data[0] > 0.5
    return np.where(keep, bit, ~bit)


@pytest.mark.parametrize("func, kw, truth", [
    # a model over the reals: on float64 it is porous and refuted far above 2 (test_auditor_float.py)
    (half_noise_sum, dict(neighbours="add-remove", domain=(0, 1), size=4, float_events=False), 2.0),
    (biased_coin, dict(neighbours="replace", domain=(0, 1), size=1), math.log(9)),
    pytest.param(leaky_svt, dict(neighbours="linf", domain=(-5, 5), size=3), math.inf, marks=pytest.mark.slow),
])
def test_broken_mechanisms_are_refuted(func, kw, truth):
    r = dpaudit.audit(func, epsilon=1.0, samples=200_000, seed=7, **kw)
    assert r.verdict.value == "refuted"
    assert r.epsilon_lower_bound > 1.0  # above the claim ...
    assert r.epsilon_lower_bound <= truth  # ... and never above the truth
