"""The quantile exponential mechanism and the the EM-for-medians notes (2020) utilities (docs/math.md#quantile-utility, #quantile-sampler)."""

import math

import numpy as np
import pytest

from dpaudit.errors import InvalidArgument
from dpaudit.laws import PiecewiseConstantLaw
from dpaudit.reference.quantile import (
    QuantileEM,
    quantile_sensitivity,
    quantile_utility,
    quantile_utility_eq21,
    quantile_utility_eq22,
)


def test_utility_on_a_gap_is_minus_distance_of_rank_to_qn():
    data = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8])
    for k, r in enumerate([0.05, 0.15, 0.25, 0.35, 0.45, 0.55, 0.65, 0.75, 0.85]):
        for q in (0.25, 0.5, 0.9):
            assert quantile_utility(data, r, q) == pytest.approx(-abs(k - q * 8))


def test_utility_at_a_data_point_ignores_ties():
    assert quantile_utility(np.array([1.0, 2.0, 2.0, 3.0]), 2.0, 0.5) == 0.0


def test_eq22_counterexample_of_spec_4_2():
    S, S2 = np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 3.0, -1.0])
    assert quantile_utility_eq22(S, 0.0, 0.5) == 0.0
    assert quantile_utility_eq22(S2, 0.0, 0.5) == 1.0
    # without the constant the change is within max(q, 1 − q)
    assert abs(quantile_utility(S2, 0.0, 0.5) - quantile_utility(S, 0.0, 0.5)) == 0.5


def test_eq21_rewards_distance_from_the_median():
    data = np.array([1.0, 2.0, 3.0])
    assert quantile_utility_eq21(data, 2.0) == 0.0 < quantile_utility_eq21(data, 0.0) == 3.0


def test_sensitivities():
    assert quantile_sensitivity(0.3, "replace") == 1.0
    assert quantile_sensitivity(0.3, "add-remove") == 0.7
    with pytest.raises(InvalidArgument, match="neighbours"):
        quantile_sensitivity(0.3, "linf")


@pytest.mark.parametrize("q", [0.0, 1.0, -0.1, "x", True])
def test_bad_q_is_named(q):
    with pytest.raises(InvalidArgument, match="q must be"):
        quantile_utility(np.zeros(2), 0.0, q)
    with pytest.raises(InvalidArgument, match="q must be"):
        QuantileEM(1.0, q)


def test_bad_inputs_are_named():
    with pytest.raises(InvalidArgument, match="data"):
        quantile_utility(np.array([0.0, math.nan]), 0.0)
    with pytest.raises(InvalidArgument, match="r must be"):
        quantile_utility(np.zeros(2), math.inf)
    with pytest.raises(InvalidArgument, match="epsilon"):
        QuantileEM(-1.0)
    with pytest.raises(InvalidArgument, match="domain"):
        QuantileEM(1.0, 0.5, 1.0, 0.0)
    with pytest.raises(InvalidArgument, match="neighbours"):
        QuantileEM(1.0, 0.5, 0.0, 1.0, "l1")
    with pytest.raises(InvalidArgument, match="rng"):
        QuantileEM(1.0).sample(np.zeros(2), None)


@pytest.mark.parametrize("neighbours", ["replace", "add-remove"])
@pytest.mark.parametrize("q", [0.1, 0.5, 0.75])
def test_normaliser_matches_grid_integration(neighbours, q):
    """docs/math.md#quantile-sampler oracle: integrate the unnormalised density on a 2·10⁶-point grid (midpoint rule;
    its error at the 25 jumps is O(grid step), hence rel 1e-5)."""
    rng = np.random.default_rng(5)
    data = np.sort(rng.uniform(-1, 3, 25))
    m = QuantileEM(1.3, q, -2.0, 4.0, neighbours)
    law = m.law(data)
    grid = np.linspace(-2.0, 4.0, 2_000_001)
    mid = (grid[1:] + grid[:-1]) / 2
    k = np.searchsorted(data, mid)
    unnorm = np.exp(-1.3 * np.abs(k - q * data.size) / (2 * m.sensitivity))
    Z = np.sum(unnorm) * (grid[1] - grid[0])
    assert np.exp(law.log_density[0]) * Z == pytest.approx(np.exp(-1.3 * q * 25 / (2 * m.sensitivity)), rel=1e-5)
    assert law.total_mass() == pytest.approx(1.0, rel=1e-12)


def test_law_cells_clamping_and_duplicates():
    m = QuantileEM(1.0, 0.5, 0.0, 1.0)
    law = m.law(np.array([-5.0, 0.5, 0.5, 7.0]))
    assert isinstance(law, PiecewiseConstantLaw)
    assert law.edges.tolist() == [0.0, 0.0, 0.5, 0.5, 1.0, 1.0]
    assert law.total_mass() == pytest.approx(1.0)
    # the two positive-length cells have ranks 1 and 3 of n = 4: both at distance 1 from qn = 2
    assert m.log_prob(np.array([-5.0, 0.5, 0.5, 7.0]), [0.25, 0.75]) == pytest.approx([0.0, 0.0])


def test_empty_data_gives_uniform():
    m = QuantileEM(1.0, 0.5, 2.0, 6.0)
    assert m.cdf(np.array([]), [2.0, 3.0, 6.0]) == pytest.approx([0.0, 0.25, 1.0])
    x = m.sample(np.array([]), np.random.default_rng(0), 100)
    assert np.all((x >= 2.0) & (x <= 6.0))


def test_mode_is_the_quantile_cell():
    data = np.linspace(0.05, 0.95, 19)
    m = QuantileEM(5.0, 0.25, 0.0, 1.0)
    law = m.law(data)
    k = int(np.argmax(law.log_density))
    assert k == round(0.25 * 19)


def test_cdf_is_monotone_and_ends_at_one():
    m = QuantileEM(0.7, 0.4, -1.0, 1.0, "add-remove")
    data = np.random.default_rng(3).normal(0, 0.3, 40)
    y = np.linspace(-1.5, 1.5, 301)
    F = m.cdf(data, y)
    assert np.all(np.diff(F) >= -1e-15) and F[0] == 0.0 and F[-1] == pytest.approx(1.0)


def test_sample_shapes_and_range():
    m = QuantileEM(1.0, 0.5, 0.0, 1.0)
    rng = np.random.default_rng(9)
    one = m.sample(np.array([0.2, 0.4]), rng)
    many = m.sample(np.array([0.2, 0.4]), rng, size=1000)
    assert isinstance(one, float) and many.shape == (1000,)
    assert np.all((many >= 0.0) & (many <= 1.0))


def test_same_seed_same_draws():
    m = QuantileEM(1.0, 0.5, 0.0, 1.0)
    d = np.array([0.3, 0.6, 0.9])
    a = m.sample(d, np.random.default_rng(4), 10)
    b = m.sample(d, np.random.default_rng(4), 10)
    assert np.array_equal(a, b)


def test_spec_declares_the_claim_and_the_law():
    m = QuantileEM(0.9, 0.3, -1.0, 2.0, "add-remove")
    spec = m.spec(size=5)
    assert (spec.epsilon, spec.delta, spec.neighbours.value, spec.size) == (0.9, 0.0, "add-remove", 5)
    assert (spec.domain.lo, spec.domain.hi) == (-1.0, 2.0) and spec.exact
    out = spec.call_batch(np.array([0.0, 1.0]), np.random.default_rng(0), 4)
    assert len(out) == 4
    assert spec.distribution(np.array([0.0, 1.0])).total_mass() == pytest.approx(1.0)
