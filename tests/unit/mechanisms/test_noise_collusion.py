"""Count remap, collusion median, exact order statistics and the S1 loss formulas (docs/math.md#expected-loss)."""

import math

import numpy as np
import pytest
from scipy import integrate

from dpaudit.errors import InvalidArgument
from dpaudit.reference import collusion as col
from dpaudit.reference.analysis import expected_loss as el
from dpaudit.reference.geometric import Geometric
from dpaudit.reference.laplace import Laplace
from dpaudit.reference.staircase import Staircase

RHOS = np.array([0.05, 0.3, 0.6, 0.95])


def test_round_to_count_and_clamp():
    np.testing.assert_array_equal(col.round_to_count([-0.7, 0.49, 0.51, 2.6]), [-1, 0, 1, 3])
    np.testing.assert_array_equal(col.round_to_count([-0.7, 0.49, 7.2], n=5), [0, 0, 5])


def test_collusion_median_conventions():
    x = np.array([[3.0, 1.0, 2.0, 10.0], [0.0, 0.0, 5.0, -1.0]])
    np.testing.assert_array_equal(col.collusion_median(x), [2.0, 0.0])
    np.testing.assert_array_equal(col.collusion_median(x, convention="avg"), [2.5, 0.0])
    np.testing.assert_array_equal(col.collusion_median(x[:, :3]), [2.0, 0.0])
    with pytest.raises(InvalidArgument, match="^convention must be 'low' or 'avg'"):
        col.collusion_median(x, convention="high")
    with pytest.raises(InvalidArgument, match="^outputs must be a non-empty array"):
        col.collusion_median(np.zeros((2, 0)))


@pytest.mark.slow
@pytest.mark.parametrize("noise", [Laplace(0.9), Staircase(0.9), Staircase(2.0, 1.0, 0.1)])
@pytest.mark.parametrize("k, j", [(1, 1), (4, 2), (5, 1)])
def test_order_statistic_against_its_density(noise, k, j):
    """E|X_(j)| = ∫|t| k!/((j−1)!(k−j)!) F^{j−1}(1−F)^{k−j} f dt (David and Nagaraja, eq (2.1.6))."""
    c = math.factorial(k) / (math.factorial(j - 1) * math.factorial(k - j))
    dens = lambda t: abs(t) * c * noise.cdf(t) ** (j - 1) * noise.sf(t) ** (k - j) * noise.pdf(t)  # noqa: E731
    brk = None
    if isinstance(noise, Staircase):
        brk = sorted(set((np.arange(-60, 61)[:, None] + np.array([0, noise.gamma, 1 - noise.gamma])).ravel()))
    num = sum(integrate.quad(lambda t: float(dens(t)), a, b, epsabs=1e-13, epsrel=1e-12)[0]
              for a, b in zip(*(lambda e: (e[:-1], e[1:]))(np.array(brk if brk else np.linspace(-60, 60, 121)))))
    assert el.expected_abs_order_statistic(noise, k, j) == pytest.approx(num, rel=1e-8)


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_lattice_order_statistic_by_brute_enumeration(k):
    """Every k-tuple of atoms in [−15, 15] (the rest has mass < 1e-13), weighted by its probability."""
    g = Geometric(2.0)
    atoms = np.arange(-15, 16)
    grids = np.meshgrid(*([atoms] * k), indexing="ij")
    tuples = np.stack([x.ravel() for x in grids], axis=1)
    prob = np.prod(g.pmf(tuples), axis=1)
    low_median = np.sort(tuples, axis=1)[:, (k + 1) // 2 - 1]
    want = float(np.sum(prob * np.abs(low_median)))
    assert el.expected_abs_median(g, k) == pytest.approx(want, rel=1e-9)


def test_exact_loss_formulas_match_the_mechanisms():
    for r in RHOS:
        eps = -math.log(r)
        assert el.laplace_loss(r, 2.0) == pytest.approx(Laplace(eps, 2.0).expected_abs())
        assert el.staircase_loss(r, 2.0) == pytest.approx(Staircase(eps, 2.0).expected_abs())
        assert el.geometric_loss(r) == pytest.approx(Geometric(eps).expected_abs())
        assert el.count_laplace_loss(r) == pytest.approx(el.rounded_expected_abs(Laplace(eps)), rel=1e-10)
        assert el.count_staircase_loss(r) == pytest.approx(el.rounded_expected_abs(Staircase(eps)), rel=1e-10)
        assert el.count_staircase_loss(r) == pytest.approx(r / (1 - r) + math.sqrt(r) / 2)   # docs/math.md#expected-loss


def test_collusion_formulas_asymptotic_and_seed_eq18_wrong():
    r, k = 0.5, 2001
    eps = -math.log(r)
    assert el.expected_abs_median(Laplace(eps), k) == pytest.approx(float(el.collusion_laplace_loss(r, k)), rel=0.02)
    assert el.expected_abs_median(Staircase(eps), k) == pytest.approx(float(el.collusion_staircase_loss(r, k)), rel=0.01)
    g = Geometric(-math.log(0.2))
    exact = el.expected_abs_median(g, 25)
    assert exact < 2e-4 < 0.1 < float(el.collusion_geometric_loss_seed(0.2, 25))
    for kk in (1, 5, 25, 60):
        assert el.expected_abs_median(g, kk) <= el.geometric_median_bound(0.2, kk)


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.2, 1.5])
def test_rho_is_validated(bad):
    with pytest.raises(InvalidArgument, match="^rho must be in"):
        el.laplace_loss(bad)


def test_k_is_validated():
    with pytest.raises(InvalidArgument, match="^k must be an integer >= 1"):
        el.collusion_laplace_loss(0.5, 0)


def test_order_statistic_needs_a_known_noise():
    with pytest.raises(InvalidArgument, match="^noise must be a Laplace, Staircase or Geometric"):
        el.expected_abs_order_statistic(object(), 3, 2)
    with pytest.raises(InvalidArgument, match="^j must be in 1..k"):
        el.expected_abs_order_statistic(Laplace(1.0), 3, 4)
