"""The finite exponential mechanism, its calibrations, and the enumeration of Δu and range (docs/math.md#em-range)."""

import math

import numpy as np
import pytest

from dpaudit.errors import InvalidArgument
from dpaudit.estimators.exact import pair_loss
from dpaudit.laws import PiecewiseConstantLaw
from dpaudit.reference.exponential import (
    ExponentialMechanism,
    count_utility,
    em_coefficient,
    em_log_probs,
    piecewise_cdf,
    piecewise_em_law,
    sample_piecewise,
    top_item_mechanism,
    utility_bounds,
)


def test_coefficients_of_the_two_calibrations():
    assert em_coefficient(1.0, 2.0, "sensitivity") == pytest.approx(0.25)
    assert em_coefficient(1.0, 2.0, "range") == pytest.approx(0.5)


def test_log_probs_are_normalised_and_match_softmax():
    u = np.array([0.0, 1.0, 3.0])
    lp = em_log_probs(u, 0.7)
    want = np.exp(0.7 * u) / np.exp(0.7 * u).sum()
    assert np.exp(lp) == pytest.approx(want, rel=1e-12)
    base = em_log_probs(u, 0.7, [0.0, math.log(2.0), -math.inf])
    assert np.isneginf(base[2]) and np.exp(base).sum() == pytest.approx(1.0)


@pytest.mark.parametrize("kw, name", [
    (dict(epsilon=0.0), "epsilon"), (dict(bound=0.0), "bound"), (dict(bound=math.nan), "bound"),
    (dict(calibration="both"), "calibration"), (dict(outputs=(1.0, 1.0)), "outputs"),
    (dict(outputs=()), "outputs"), (dict(utility=3), "utility"), (dict(neighbours="nope"), "neighbours"),
])
def test_invalid_arguments_name_themselves(kw, name):
    args = dict(epsilon=1.0, outputs=(0.0, 1.0), utility=count_utility)
    args.update(kw)
    with pytest.raises(InvalidArgument, match=name):
        ExponentialMechanism(**args)


def test_count_utility_bounds_monotone_add_remove():
    ub = utility_bounds(count_utility, (0.0, 1.0, 2.0), (0.0, 1.0, 2.0), 3, "add-remove")
    assert (ub.sensitivity, ub.range, ub.monotone) == (1.0, 1.0, True)


def test_count_utility_range_is_two_under_replace():
    ub = utility_bounds(count_utility, (0.0, 1.0, 2.0), (0.0, 1.0, 2.0), 3, "replace")
    assert (ub.sensitivity, ub.range, ub.monotone) == (1.0, 2.0, None)
    S, S2 = ub.range_witness
    assert len(S) == len(S2) == 3


def test_a_constant_shift_has_zero_range_but_full_sensitivity():
    # Dong (2020)'s example: u = |S| does not depend on r, so the mechanism does not depend on S
    ub = utility_bounds(lambda d, r: float(len(d)), (0.0, 1.0), (0.0, 1.0), 3, "add-remove")
    assert (ub.sensitivity, ub.range) == (1.0, 0.0)


def test_utility_bounds_validation():
    with pytest.raises(InvalidArgument, match="max_size"):
        utility_bounds(count_utility, (0.0,), (0.0,), 0)
    with pytest.raises(InvalidArgument, match="neighbours"):
        utility_bounds(count_utility, (0.0,), (0.0,), 2, "linf")
    with pytest.raises(InvalidArgument, match="outputs"):
        utility_bounds(count_utility, (), (0.0,), 2)


def test_pmf_of_top_item_mechanism():
    m = top_item_mechanism(1.0, items=3, calibration="range")
    p = m.pmf(np.array([0, 0, 1, 2.2]))
    counts = np.array([2.0, 1.0, 1.0])
    assert p == pytest.approx(np.exp(counts) / np.exp(counts).sum(), rel=1e-12)
    half = top_item_mechanism(1.0, items=3, calibration="sensitivity").pmf(np.array([0, 0, 1, 2.2]))
    assert half == pytest.approx(np.exp(counts / 2) / np.exp(counts / 2).sum(), rel=1e-12)


def test_generic_utility_and_vectorised_scores_agree():
    m = top_item_mechanism(0.8, items=4)
    generic = ExponentialMechanism(0.8, m.outputs, count_utility, 1.0, "range")
    data = np.array([0.0, 3.0, 3.0, 1.4, 2.6])
    assert m.law(data).log_pmf == pytest.approx(generic.law(data).log_pmf, rel=1e-12)


@pytest.mark.parametrize("calibration, lo, hi", [("range", 0.95, 1.0), ("sensitivity", 0.45, 0.5)])
def test_exact_loss_of_the_worst_histogram_pair(calibration, lo, hi):
    # add one record to an empty item while another item holds all the mass: the loss tends to
    # ε (range calibration) or ε/2 (sensitivity calibration, needlessly conservative on counts)
    eps = 1.0
    m = top_item_mechanism(eps, items=3, calibration=calibration)
    d = np.zeros(12)
    loss = pair_loss(m.law(d), m.law(np.r_[d, 1.0])).epsilon
    assert lo * eps <= loss <= hi * eps


def test_sampler_returns_outputs_and_non_numeric_outputs_work():
    rng = np.random.default_rng(0)
    m = top_item_mechanism(2.0, items=3)
    draws = m.sample(np.array([2.0] * 5), rng, size=1000)
    # P(2) = 0.99991, so a correct sampler draws fewer than 900 twos with probability below 1e-260
    assert set(np.unique(draws)) <= {0.0, 1.0, 2.0} and np.mean(draws == 2.0) > 0.9
    assert m.sample(np.array([2.0]), rng) in (0.0, 1.0, 2.0)
    cat = ExponentialMechanism(1.0, ("a", "b"), lambda d, r: float(r == "a") * len(d))
    assert set(cat.sample(np.ones(3), rng, size=50)) <= {"a", "b"}
    assert cat.law(np.ones(3)).atoms == ("a", "b")


def test_sampler_rejects_a_legacy_seed():
    with pytest.raises(InvalidArgument, match="rng"):
        top_item_mechanism(1.0).sample(np.zeros(2), 42)


def test_spec_exposes_claim_and_exact_law():
    m = top_item_mechanism(0.5, items=3)
    spec = m.spec(size=6)
    assert spec.epsilon == 0.5 and spec.delta == 0.0 and spec.neighbours.value == "add-remove"
    assert spec.size == 6 and spec.domain.lo == -0.5 and spec.domain.hi == 2.5 and spec.exact
    out = spec.call_batch(np.array([0.0, 1.0]), np.random.default_rng(1), 7)
    assert len(out) == 7
    law = spec.distribution(np.array([0.0, 1.0]))
    assert np.exp(law.log_pmf).sum() == pytest.approx(1.0)


def test_piecewise_law_sampler_and_cdf():
    law = piecewise_em_law([0.0, 1.0, 1.0, 3.0], [0.0, 5.0, -1.0], 1.0)
    assert isinstance(law, PiecewiseConstantLaw) and law.total_mass() == pytest.approx(1.0)
    x = sample_piecewise(law, np.random.default_rng(2), 20000)
    assert np.all((x >= 0) & (x <= 3))
    assert piecewise_cdf(law, [-1.0, 0.0, 1.0, 3.0, 4.0]) == pytest.approx(
        [0.0, 0.0, 1 / (1 + 2 * math.exp(-1)), 1.0, 1.0])
    # the zero-length cell [1, 1] carries no mass and is never drawn as an atom (the mass of each
    # cell is tested statistically in tests/statistical/test_exponential_gof.py)
    assert np.mean(x == 1.0) == 0.0


def test_piecewise_law_validation():
    with pytest.raises(InvalidArgument):
        piecewise_em_law([0.0, 1.0], [0.0, 1.0], 1.0)
    with pytest.raises(InvalidArgument):
        piecewise_em_law([0.0, 0.0], [0.0], 1.0)
