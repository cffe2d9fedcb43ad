"""Staircase (docs/math.md#staircase): density and cdf against independent computations, law, spec."""

import math

import numpy as np
import pytest
from scipy import integrate

from dpaudit.errors import InvalidArgument
from dpaudit.estimators.exact import pair_loss
from dpaudit.laws import PiecewiseConstantLaw
from dpaudit.reference.staircase import Staircase, optimal_gamma


def test_optimal_gamma_and_height():
    eps = 1.3
    rho = math.exp(-eps)
    assert optimal_gamma(eps) == pytest.approx(math.sqrt(rho) / (1 + math.sqrt(rho)))
    m = Staircase(eps, 2.0)
    assert m.gamma == optimal_gamma(eps)
    assert m.height == pytest.approx((1 - rho) / (2 * 2.0 * math.sqrt(rho)))     # Chen, Pal and Golubchik (2016) eq (8) at γ*


@pytest.mark.parametrize("gamma", [-0.1, 1.5, "0.3", True])
def test_bad_gamma(gamma):
    with pytest.raises(InvalidArgument, match="^gamma must be a number in"):
        Staircase(1.0, 1.0, gamma)


@pytest.mark.parametrize("eps, delta, gamma", [(0.3, 1.0, None), (1.0, 2.0, 0.2), (2.5, 0.5, 0.9)])
def test_density_is_seed_eq22_and_cdf_integrates_it(eps, delta, gamma):
    m = Staircase(eps, delta, gamma)
    z = np.linspace(-12 * delta, 12 * delta, 2401) + 1e-7
    eq22 = m.height * np.exp(-eps * np.ceil(np.abs(z) / delta - m.gamma))      # Chen, Pal and Golubchik (2016) eq (22), any γ
    np.testing.assert_allclose(m.pdf(z), eq22, rtol=1e-12)
    for t in (-3.3 * delta, -0.2 * delta, 0.0, 0.7 * delta, 5.05 * delta):
        brk = [b for b in delta * (np.arange(-11, 12)[:, None] + np.array([0, m.gamma, 1 - m.gamma])).ravel()
               if -10 * delta < b < t]
        num = integrate.quad(lambda y: float(m.pdf(y)), -10 * delta, t, points=brk or None, limit=200,
                             epsabs=1e-14, epsrel=1e-13)[0]
        assert float(m.cdf(t)) == pytest.approx(num + float(m.sf(10 * delta)), abs=1e-12)
    k = np.arange(0, 6)
    np.testing.assert_allclose(m.sf(k * delta), np.exp(-eps * k) / 2, rtol=1e-12)   # P(Z ≥ kΔ) = ρ^k/2
    np.testing.assert_allclose(m.cdf(z) + m.sf(z), 1.0, rtol=1e-12)


@pytest.mark.parametrize("gamma", [None, 0.0, 0.3, 1.0])
def test_expected_abs_by_cell_sums(gamma):
    m = Staircase(0.8, 1.5, gamma)
    law = m.law(0.0, 1e-40)
    lo, hi = law.edges[:-1], law.edges[1:]
    e_abs = np.sum(np.exp(law.log_density) * (np.abs(hi) * hi - np.abs(lo) * lo) / 2)   # ∫|z| per cell
    assert e_abs == pytest.approx(m.expected_abs(), rel=1e-12)
    if gamma is None:
        assert m.expected_abs() == pytest.approx(1.5 * math.sqrt(m.rho) / (1 - m.rho))   # Chen, Pal and Golubchik (2016) eq (12)


def test_law_is_complete_and_shares_edges_with_its_shift():
    m = Staircase(0.5, 2.0)
    law = m.law(1.0)
    assert isinstance(law, PiecewiseConstantLaw)
    assert law.total_mass() + law.tail_mass == pytest.approx(1.0, abs=1e-12) and law.tail_mass <= 1e-300
    x = np.array([-7.3, -0.1, 1.0, 1.3, 4.4, 19.0])
    np.testing.assert_allclose(law.log_prob(x), m.log_prob(1.0, x), rtol=1e-12)
    spec = m.spec()
    a = spec.distribution(np.array([0.3, 0.77]))
    b = spec.distribution(np.array([0.3, 0.77, 2.0]))
    common = np.intersect1d(a.edges, b.edges)
    assert common.size >= a.edges.size - 4 * 2                 # only the ends differ: bit-identical edges
    assert pair_loss(a, b).epsilon == pytest.approx(0.5, abs=1e-9)
    with pytest.raises(InvalidArgument, match="pass a larger tail"):
        Staircase(1e-6).law(0.0)


def test_sampler_types():
    m = Staircase(1.0)
    assert isinstance(m.sample(2.0, np.random.default_rng(0)), float)
    x = m.sample(2.0, np.random.default_rng(0), (10, 3))
    assert x.shape == (10, 3)
    np.testing.assert_array_equal(x, m.sample(2.0, np.random.default_rng(0), (10, 3)))
