"""Goodness of fit of the Duff sampler against its exact cdf (docs/math.md#duff-sampler).

Each case draws 10⁵ values from a fixed seed and applies one Kolmogorov–Smirnov test against the
exact cdf at level α = 10⁻³ (a correct sampler fails a case with probability ≤ α; no retries).
The power controls must reject draws made with a different ε or the other median convention.
"""

import numpy as np
import pytest
from scipy import stats

from dpaudit.reference.duff import Duff

ALPHA = 1e-3
N = 100_000
pytestmark = pytest.mark.statistical


def rng(seed):
    return np.random.default_rng(np.random.SeedSequence(seed))


DATA = {
    "normal-even": rng(1).normal(0.0, 1.0, 40),
    "normal-odd": rng(2).normal(0.0, 1.0, 41),
    "ties": np.array([0.0, 0.0, 0.0, 1.0, 1.0, 2.5]),
    "empty": np.array([]),
}


@pytest.mark.parametrize("kind", sorted(DATA))
@pytest.mark.parametrize("conv", ["low", "avg"])
@pytest.mark.parametrize("eps", [0.5, 3.0])
def test_duff_ks(kind, conv, eps):
    m = Duff(eps, -3.0, 3.0, conv)
    data = DATA[kind]
    seed = sorted(DATA).index(kind) * 100 + (conv == "avg") * 10 + int(eps)
    draws = m.sample(data, rng(seed), N)
    assert stats.kstest(draws, lambda y: m.cdf(data, y)).pvalue > ALPHA


def test_power_control_wrong_epsilon():
    data = DATA["normal-even"]
    draws = Duff(1.2, -3.0, 3.0).sample(data, rng(5), N)
    assert stats.kstest(draws, lambda y: Duff(1.0, -3.0, 3.0).cdf(data, y)).pvalue < ALPHA


def test_power_control_wrong_convention():
    data = np.array([0.0, 0.1, 2.0, 2.1])        # the conventions differ on the middle gap
    draws = Duff(3.0, -3.0, 3.0, "low").sample(data, rng(6), N)
    assert stats.kstest(draws, lambda y: Duff(3.0, -3.0, 3.0, "avg").cdf(data, y)).pvalue < ALPHA
