"""Goodness of fit of the smooth-sensitivity mechanisms against their law given the data (docs/math.md#ss-mechanisms).

Each case draws 10⁵ outputs from a fixed seed and applies one Kolmogorov–Smirnov test against the
exact cdf of T(S) + (SS_β(S)/α)·Z at level α = 10⁻³ (a correct sampler fails a case with
probability ≤ α; no retries). The power control must reject draws made with the seed's literal
β = ε/(2 ln(2/δ)) against the law of the corrected β.
"""

import numpy as np
import pytest
from scipy import stats

from dpaudit.reference.smooth_mechanisms import SmoothCauchyMedian, SmoothLaplaceMedian

ALPHA = 1e-3
N = 100_000
pytestmark = pytest.mark.statistical


def rng(seed):
    return np.random.default_rng(np.random.SeedSequence(seed))


DATA = rng(3).normal(0.0, 1.0, 31)

MECHS = {
    "cauchy-replace": SmoothCauchyMedian(1.0, -10, 10),
    "cauchy-add-remove-nrs-full": SmoothCauchyMedian(2.0, -10, 10, "add-remove", alpha=0.25, beta=1.0),
    "laplace-replace": SmoothLaplaceMedian(1.0, 1e-3, -10, 10),
    "laplace-add-remove": SmoothLaplaceMedian(0.5, 0.9, -10, 10, "add-remove"),
}


@pytest.mark.parametrize("name", sorted(MECHS))
def test_smooth_mechanism_ks(name):
    m = MECHS[name]
    draws = m.sample(DATA, rng(sorted(MECHS).index(name)), N)
    assert stats.kstest(draws, m.law(DATA).dist.cdf).pvalue > ALPHA


@pytest.mark.parametrize("make", [lambda: SmoothCauchyMedian(1.0, -1, 1),
                                  lambda: SmoothLaplaceMedian(1.0, 0.01, -1, 1)], ids=["cauchy", "laplace"])
def test_sampler_is_centred_on_the_median(make):
    """The noise is symmetric about T(S), so #(draws < T(S)) ~ Bin(n, ½): two-sided binomial test
    at level α = 10⁻³ (a fixed band |median − T(S)| < 0.05 at n = 4001 would fail a correct Cauchy
    sampler with probability 7.6%)."""
    m = make()
    data = np.linspace(-0.5, 0.5, 21)
    x = m.sample(data, rng(3), 4001)
    below = int(np.sum(x < m.target(data)))
    assert stats.binomtest(below, x.size, 0.5).pvalue > ALPHA


def test_power_control_literal_beta_is_a_different_law():
    data = rng(4).normal(0.0, 1.0, 15)
    literal = SmoothLaplaceMedian(2.0, 0.9, -10, 10, beta_rule="literal")
    corrected = SmoothLaplaceMedian(2.0, 0.9, -10, 10)
    draws = literal.sample(data, rng(8), N)
    assert stats.kstest(draws, corrected.law(data).dist.cdf).pvalue < ALPHA
