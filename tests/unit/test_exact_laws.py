"""Exact privacy loss and hockey-stick divergence against closed forms."""

import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.estimators.exact import hockey_stick, pair_loss, privacy_loss
from dpaudit.laws import ContinuousLaw, DiscreteLaw, PiecewiseConstantLaw


@pytest.mark.slow
@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
def test_laplace_shift_by_sensitivity_has_loss_epsilon(eps):
    p = ContinuousLaw(stats.laplace(0.0, 1 / eps), (0.0,))
    q = ContinuousLaw(stats.laplace(1.0, 1 / eps), (1.0,))
    assert privacy_loss(p, q) == pytest.approx(eps, abs=1e-9)
    assert hockey_stick(p, q, eps) == pytest.approx(0.0, abs=1e-9)


@pytest.mark.slow
def test_laplace_hockey_stick_closed_form():
    # For Lap(0,b) vs Lap(1,b) and 0 <= e < 1/b: δ(e) = 1 − exp((e − 1/b)/2)  (Balle et al. 2018 style).
    b, e = 1 / 0.7, 0.3
    p = ContinuousLaw(stats.laplace(0.0, b), (0.0,))
    q = ContinuousLaw(stats.laplace(1.0, b), (1.0,))
    assert hockey_stick(p, q, e) == pytest.approx(1 - math.exp((e - 1 / b) / 2), rel=1e-7)


@pytest.mark.slow
def test_gaussian_hockey_stick_closed_form():
    # Balle and Wang 2018, Thm 8: δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) with μ = shift/σ = 1.
    got = hockey_stick(stats.norm(0, 1), stats.norm(1, 1), 1.0)
    want = stats.norm.cdf(-1 + 0.5) - math.e * stats.norm.cdf(-1 - 0.5)
    assert got == pytest.approx(want, rel=1e-7)


def test_truncated_geometric_loss_is_exact():
    eps = 0.7
    loss = pair_loss(stats.dlaplace(eps, 0), stats.dlaplace(eps, 1))
    assert loss.epsilon == pytest.approx(eps, abs=1e-12)


def test_atom_missing_from_complete_law_is_infinite_loss():
    p = DiscreteLaw.from_pmf([0, 1], [0.5, 0.5])
    q = DiscreteLaw.from_pmf([0, 1, 2], [0.4, 0.4, 0.2])
    assert pair_loss(p, q).epsilon == math.inf and pair_loss(p, q).witness == 2
    assert hockey_stick(q, p, 0.0) == pytest.approx(0.2)


def test_piecewise_constant_refinement():
    p = PiecewiseConstantLaw([0, 1, 2], np.log([0.5, 0.5]))
    q = PiecewiseConstantLaw([0, 0.5, 2], np.log([0.4, 0.8 / 1.5]))
    assert privacy_loss(p, q) == pytest.approx(math.log(0.5 / 0.4))
    # ∫(p − q)⁺ = 0.5·(0.5 − 0.4) on [0, 0.5]
    assert hockey_stick(p, q, 0.0) == pytest.approx(0.05)
