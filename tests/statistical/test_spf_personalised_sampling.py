"""The personalised mechanisms' samplers draw from their exact laws (goodness of fit).

Each test has α = 1e-3 (the chance it fails on a correct sampler), a fixed seed, and no retry.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dpaudit.reference.sensitivity_preprocessing import PersonalisedExponential, PersonalisedLaplace

pytestmark = pytest.mark.statistical

ALPHA = 1e-3


def test_laplace_sampler_matches_its_cdf():
    """Kolmogorov-Smirnov against the exact CDF, 20 000 draws, α = 1e-3."""
    mech = PersonalisedLaplace((0.5, 1.0, 0.2), (0.5, 2.0, 1.0))
    draws = mech.sample(1.7, np.random.default_rng(20260501), size=20_000)
    assert stats.kstest(draws, lambda y: mech.cdf(1.7, y)).pvalue > ALPHA


def test_exponential_sampler_matches_its_pmf():
    """Pearson χ² against the exact pmf, 20 000 draws, α = 1e-3."""
    outs = (0.0, 0.25, 0.5, 0.75, 1.0)
    mech = PersonalisedExponential((0.5, 1.0), (1.0, 0.5), outs)
    scores = np.array([-2.0, -1.0, 0.0, -1.0, -3.0])
    draws = mech.sample(scores, np.random.default_rng(20260502), size=20_000)
    observed = np.array([np.sum(draws == o) for o in outs])
    expected = mech.pmf(scores) * draws.size
    assert stats.chisquare(observed, expected).pvalue > ALPHA
