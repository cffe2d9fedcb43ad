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


@pytest.mark.parametrize("sigma, shift, eps", [(0.5, 0.1, 2.0), (1.0, 0.1, 1.0), (3.0, 1.0, 4.0),
                                              (3.0, 0.1, 0.5), (1.0, 1.0, 4.0)])
def test_a_tiny_gaussian_delta_keeps_its_relative_precision(sigma, shift, eps):
    """δ from 10⁻⁵ down to 10⁻⁹¹ (the same closed form as above, μ = shift/σ) to 10⁻⁹ relative:
    the masses of the optimal event come from each law's far tail (adaptive quadrature of
    (p − e^ε q)⁺ was 60% to 100% off below 10⁻²⁰)."""
    mu = shift / sigma
    want = stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2)
    got = hockey_stick(ContinuousLaw(stats.norm(0, sigma)), ContinuousLaw(stats.norm(shift, sigma)), eps)
    assert got == pytest.approx(want, rel=1e-9, abs=0.0)


def test_heavy_tails_and_a_flat_ratio():
    """Cauchy laws: at ε = 0 both directions give the total variation (2/π)·arctan(Δ/2γ); a
    Laplace pair at ε = Δ/b, where the ratio equals e^ε on a whole tail, has δ = 0 exactly, and
    just below it the closed form of test_laplace_hockey_stick_closed_form."""
    p = ContinuousLaw(stats.cauchy(0, 1), (0.0,))
    q = ContinuousLaw(stats.cauchy(3, 1), (3.0,))
    tv = 2 / math.pi * math.atan(1.5)
    assert hockey_stick(p, q, 0.0) == pytest.approx(tv, rel=1e-9)
    assert hockey_stick(q, p, 0.0) == pytest.approx(tv, rel=1e-9)
    a = ContinuousLaw(stats.laplace(0, 1), (0.0,))
    b = ContinuousLaw(stats.laplace(1, 1), (1.0,))
    assert hockey_stick(a, b, 1.0) == 0.0
    e = 1 - 1e-6
    assert hockey_stick(a, b, e) == pytest.approx(1 - math.exp((e - 1) / 2), rel=1e-9)


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
