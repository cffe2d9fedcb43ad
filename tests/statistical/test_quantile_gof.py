"""Goodness of fit of the quantile-EM sampler against its exact cdf (docs/math.md#quantile-sampler).

Each case draws 10⁵ values from a fixed seed and applies one Kolmogorov–Smirnov test against the
exact piecewise-linear cdf at level α = 10⁻³, so a correct sampler fails a given case with
probability at most α; nothing retries. The last test is a power control: the same procedure must
reject draws made with a different ε.
"""

import numpy as np
import pytest
from scipy import stats

from dpaudit.reference.quantile import QuantileEM

ALPHA = 1e-3
N = 100_000
pytestmark = pytest.mark.statistical


def rng(seed):
    return np.random.default_rng(np.random.SeedSequence(seed))


def _data(kind):
    g = rng(99)
    return {
        "normal": g.normal(0.0, 1.0, 50),
        "ties-and-clamped": np.r_[np.full(5, 0.3), g.uniform(-2.0, 2.0, 20), [5.0, -5.0]],
        "empty": np.array([]),
        "large": g.normal(0.0, 1.0, 10_000),
        "one": np.array([0.7]),
    }[kind]


CASES = [
    ("normal", 1.0, 0.5, "replace"),
    ("normal", 0.2, 0.9, "add-remove"),
    ("ties-and-clamped", 1.0, 0.1, "add-remove"),
    ("empty", 1.0, 0.5, "replace"),
    ("large", 5.0, 0.25, "replace"),
    ("one", 3.0, 0.5, "add-remove"),
]


@pytest.mark.parametrize("kind, eps, q, rel", CASES)
def test_quantile_em_ks(kind, eps, q, rel):
    m = QuantileEM(eps, q, -3.0, 3.0, rel)
    data = _data(kind)
    draws = m.sample(data, rng(CASES.index((kind, eps, q, rel))), N)
    assert stats.kstest(draws, lambda y: m.cdf(data, y)).pvalue > ALPHA


def test_power_control_wrong_epsilon_is_rejected():
    data = _data("normal")
    right, wrong = QuantileEM(1.0, 0.5, -3.0, 3.0), QuantileEM(1.3, 0.5, -3.0, 3.0)
    draws = wrong.sample(data, rng(7), N)
    assert stats.kstest(draws, lambda y: right.cdf(data, y)).pvalue < ALPHA
