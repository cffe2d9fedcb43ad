"""The power statement of dpaudit.estimators.strength, checked by simulating validation counts."""

import math

import numpy as np
import pytest

from dpaudit.estimators.bounds import Counts, cp_lower, cp_upper
from dpaudit.estimators.strength import detectable


@pytest.mark.statistical
def test_power_statement_holds_by_simulation():
    """At the stated ε' (and δ'), simulated validation counts refute the claim in at least 90% of
    runs. 4,000 runs each, fixed seed; the statement is a sufficient condition (≥ 0.9, typically
    0.95), and the check allows 0.88: a true rate of 0.9 falls below 0.88 with probability < 1e-3
    (binomial tail), so α < 1e-3 per assertion."""
    rng = np.random.default_rng(20261124)
    n1, n2, q, epsilon, alpha = 40_000, 41_000, 0.12, 1.0, 0.05
    counts = Counts(n1, n2, int(round(n1 * q * math.e)), int(round(n2 * q)))
    power = detectable(counts, alpha, epsilon)
    assert power.epsilon is not None and power.epsilon > epsilon and power.delta is not None
    q_hat = counts.y / n2
    for p_true in (math.exp(power.epsilon) * q_hat, math.exp(epsilon) * q_hat + power.delta):
        x = rng.binomial(n1, p_true, size=4000)
        y = rng.binomial(n2, q_hat, size=4000)
        refuted = np.asarray(cp_lower(x, n1, alpha / 2)) > math.exp(epsilon) * np.asarray(cp_upper(y, n2, alpha / 2))
        assert refuted.mean() >= 0.88
    # and the statement is not vacuous: well below ε' the rate is far from 0.9
    x = rng.binomial(n1, math.exp(epsilon + 0.2 * (power.epsilon - epsilon)) * q_hat, size=4000)
    y = rng.binomial(n2, q_hat, size=4000)
    assert (np.asarray(cp_lower(x, n1, alpha / 2)) > math.e * np.asarray(cp_upper(y, n2, alpha / 2))).mean() < 0.5
