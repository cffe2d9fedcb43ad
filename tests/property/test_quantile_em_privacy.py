"""Exact privacy of the quantile exponential mechanism and the sensitivity of the the EM-for-medians notes (2020)
utilities (docs/math.md#quantile-utility, #quantile-sampler).

Pairs come from hypothesis (``dpaudit.neighbours.strategies.neighbouring_pairs``, steered by
``hypothesis.target`` toward larger losses) and from the deterministic hunt
``dpaudit.reference.claims.exponential.order_statistic_pairs`` (end clusters, splits). The exact loss
sup|ln p − ln p'| (``pair_loss``) must never exceed ε, and the worst pair found must reach 0.95ε.
"""

import numpy as np
import pytest
from hypothesis import given, settings, target
from hypothesis import strategies as st

from dpaudit.estimators.exact import pair_loss
from dpaudit.neighbours.strategies import neighbouring_pairs
from dpaudit.reference.exponential import utility_bounds
from dpaudit.reference.quantile import QuantileEM, quantile_utility, quantile_utility_eq22
from dpaudit.reference.claims.exponential import max_pair_loss, order_statistic_pairs

SETTINGS = [(0.5, 0.5), (2.0, 0.5), (1.0, 0.2), (1.0, 0.9)]


@settings(max_examples=150)
@given(neighbouring_pairs("replace", (0.0, 1.0), (1, 9)), st.sampled_from(SETTINGS))
def test_change_one_loss_never_exceeds_epsilon(pair, setting):
    eps, q = setting
    m = QuantileEM(eps, q, 0.0, 1.0, "replace")
    loss = pair_loss(m.law(pair.dataset), m.law(pair.neighbour)).epsilon
    target(loss / eps)
    assert loss <= eps * (1 + 1e-9)


@settings(max_examples=150)
@given(neighbouring_pairs("add-remove", (0.0, 1.0), (0, 9)), st.sampled_from(SETTINGS))
def test_add_remove_loss_never_exceeds_epsilon(pair, setting):
    eps, q = setting
    m = QuantileEM(eps, q, 0.0, 1.0, "add-remove")
    loss = pair_loss(m.law(pair.dataset), m.law(pair.neighbour)).epsilon
    target(loss / eps)
    assert loss <= eps * (1 + 1e-9)


def _hunt_size(q):
    # the worst change-one pair needs a cell with rank k ≥ qn + 1 (k ≤ n), so n ≥ 1/(1 − q)
    # (and symmetrically n ≥ 1/q): a few records more than that
    return 5 if 0.3 <= q <= 0.7 else 11


@pytest.mark.parametrize("rel", ["replace", "add-remove"])
@pytest.mark.parametrize("eps, q", SETTINGS)
def test_worst_pair_hunt_comes_within_five_percent(rel, eps, q):
    m = QuantileEM(eps, q, 0.0, 1.0, rel)
    best, pair = max_pair_loss(m.law, order_statistic_pairs(_hunt_size(q), 0.0, 1.0, rel))
    assert 0.95 * eps <= best <= eps * (1 + 1e-9), pair


def test_calibrating_add_remove_with_change_one_sensitivity_is_caught():
    """Negative control: Δu = 1 under add/remove spends only max(q, 1−q)/1 of the budget, while the
    same mechanism at half the exponent (Δu = max(q,1−q)/2) exceeds ε: the hunt must see it."""
    q, eps = 0.5, 1.0
    wrong = QuantileEM(2 * eps, q, 0.0, 1.0, "add-remove")   # exponent twice the calibrated one
    best = max(max_pair_loss(wrong.law, order_statistic_pairs(n, 0.0, 1.0, "add-remove"))[0] for n in (2, 5))
    assert best > 1.5 * eps


points = st.one_of(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]), st.floats(0.0, 1.0))


@settings(max_examples=100)
@given(neighbouring_pairs("replace", (0.0, 1.0), (1, 12)), points, st.sampled_from([0.1, 0.5, 0.8]))
def test_change_one_sensitivity_at_most_one(pair, r, q):
    for u in (quantile_utility, quantile_utility_eq22):
        assert abs(u(pair.dataset, r, q) - u(pair.neighbour, r, q)) <= 1.0 + 1e-12


@settings(max_examples=100)
@given(neighbouring_pairs("add-remove", (0.0, 1.0), (0, 12)), points, st.sampled_from([0.1, 0.5, 0.8]))
def test_add_remove_sensitivity_without_constant(pair, r, q):
    gap = abs(quantile_utility(pair.dataset, r, q) - quantile_utility(pair.neighbour, r, q))
    assert gap <= max(q, 1 - q) + 1e-12


@pytest.mark.parametrize("q", [0.1, 0.5, 0.8])
def test_eq22_add_remove_sensitivity_is_twice_the_claim(q):
    """Exhaustive over ≤ 11 records from {0, 1, 2}: the worst case of eq 2.2 needs
    C> ≥ max(q,1−q)/min(q,1−q) + 1 records on one side, i.e. 10 when q = 0.1."""
    grid = tuple(np.arange(-0.5, 2.51, 0.5))
    universe = (0.0, 1.0, 2.0)
    ub = utility_bounds(lambda d, r: quantile_utility_eq22(d, r, q), grid, universe, 11, "add-remove")
    assert ub.sensitivity == pytest.approx(2 * max(q, 1 - q))
    fixed = utility_bounds(lambda d, r: quantile_utility(d, r, q), grid, universe, 11, "add-remove")
    assert fixed.sensitivity == pytest.approx(max(q, 1 - q))
    # the range (docs/math.md#quantile-utility) is 2·max(q, 1 − q) either way: no gain from range calibration here
    assert fixed.range == pytest.approx(ub.range) == pytest.approx(2 * max(q, 1 - q))
