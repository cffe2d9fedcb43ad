"""Goodness of fit of the finite exponential-mechanism sampler against its exact pmf (docs/math.md#em-range).

Each case draws 10⁵ outputs from a fixed seed and applies one Pearson χ² test against the exact pmf
at level α = 10⁻³ (every expected count is ≥ 5 here; no retries). The power control must reject
draws of the sensitivity-calibrated mechanism against the range-calibrated pmf.
"""

import numpy as np
import pytest
from scipy import stats

from dpaudit.reference.exponential import ExponentialMechanism, piecewise_em_law, sample_piecewise, top_item_mechanism

ALPHA = 1e-3
N = 100_000
pytestmark = pytest.mark.statistical


def rng(seed):
    return np.random.default_rng(np.random.SeedSequence(seed))


def _counts(draws, outputs):
    return np.array([np.sum(draws == o) for o in outputs], dtype=float)


@pytest.mark.parametrize("eps, calibration", [(0.5, "range"), (1.0, "sensitivity"), (0.2, "range")])
def test_top_item_chi2(eps, calibration):
    m = top_item_mechanism(eps, 5, calibration)
    data = np.array([0, 0, 0, 1, 1, 2, 4, 4, 4, 4], dtype=float)
    p = m.pmf(data)
    draws = m.sample(data, rng(int(eps * 10)), N)
    assert stats.chisquare(_counts(draws, m.outputs), p * N).pvalue > ALPHA


def test_categorical_outputs_chi2():
    m = ExponentialMechanism(1.0, ("a", "b", "c"), lambda d, r: {"a": 0.0, "b": 1.0, "c": float(d.sum())}[r])
    data = np.array([0.5, 0.25])
    draws = m.sample(data, rng(11), N)
    assert stats.chisquare(_counts(draws, m.outputs), m.pmf(data) * N).pvalue > ALPHA


def test_power_control_calibration_mismatch():
    data = np.array([0, 0, 1, 2, 2, 2], dtype=float)
    draws = top_item_mechanism(1.0, 3, "sensitivity").sample(data, rng(12), N)
    p = top_item_mechanism(1.0, 3, "range").pmf(data)
    assert stats.chisquare(_counts(draws, (0.0, 1.0, 2.0)), p * N).pvalue < ALPHA


def test_piecewise_sampler_puts_the_cell_masses_right():
    """Cells [0, 1) and (1, 3] of a piecewise law, masses 1/(1 + 2e⁻¹) and the rest: two-sided
    binomial test at level α = 10⁻³ on 20 000 draws."""
    law = piecewise_em_law([0.0, 1.0, 1.0, 3.0], [0.0, 5.0, -1.0], 1.0)
    x = sample_piecewise(law, rng(2), 20_000)
    p = 1 / (1 + 2 * np.exp(-1))
    assert stats.binomtest(int(np.sum(x <= 1.0)), x.size, p).pvalue > ALPHA
