"""Laplace (docs/math.md#laplace): exact law against closed forms, sampler contract, canonical spec."""

import math

import numpy as np
import pytest
from scipy import integrate

from dpaudit.claims import Domain, Neighbours, PureDP
from dpaudit.errors import InvalidArgument
from dpaudit.estimators.exact import pair_loss
from dpaudit.laws import ContinuousLaw
from dpaudit.spec import CallForm
from dpaudit.reference.laplace import SNAP_BITS, Laplace, snapped_sum_units


@pytest.mark.parametrize("kw, name", [({"epsilon": 0}, "epsilon"), ({"epsilon": -1}, "epsilon"),
                                      ({"epsilon": math.nan}, "epsilon"),
                                      ({"epsilon": 1, "sensitivity": 0}, "sensitivity"),
                                      ({"epsilon": 1, "sensitivity": math.inf}, "sensitivity")])
def test_bad_parameters_name_the_argument(kw, name):
    with pytest.raises(InvalidArgument, match=f"^{name} must be a finite number > 0, got"):
        Laplace(**kw)


@pytest.mark.parametrize("eps, delta", [(0.1, 1.0), (1.0, 2.0), (4.0, 0.5)])
def test_density_matches_the_corrected_formula(eps, delta):
    m = Laplace(eps, delta)
    z = np.linspace(-30, 30, 101) * delta / eps
    want = eps / (2 * delta) * np.exp(-eps * np.abs(z) / delta)          # docs/math.md#laplace
    np.testing.assert_allclose(m.pdf(z), want, rtol=1e-12)
    np.testing.assert_allclose(m.log_prob(0.0, z), np.log(want), rtol=1e-12)
    mass = integrate.quad(lambda t: float(m.pdf(t)), -np.inf, np.inf)[0]
    assert mass == pytest.approx(1.0, abs=1e-10)
    np.testing.assert_allclose(m.cdf(z) + m.sf(z), 1.0, rtol=1e-12)
    np.testing.assert_allclose(m.cdf(-z), m.sf(z), rtol=1e-12)
    assert m.expected_abs() == pytest.approx(delta / eps, rel=1e-15)


def test_sampler_shapes_types_and_same_draws_on_one_seed():
    m = Laplace(0.5)
    x = m.sample(3.0, np.random.default_rng(7), 1000)
    assert x.shape == (1000,) and x.dtype == float
    np.testing.assert_array_equal(x, m.sample(3.0, np.random.default_rng(7), 1000))
    assert isinstance(m.sample(3.0, np.random.default_rng(7)), float)
    assert m.noise(np.random.default_rng(1), (2, 3)).shape == (2, 3)


@pytest.mark.parametrize("bad", [None, 3, np.random.RandomState(0)])
def test_sampler_needs_an_explicit_generator(bad):
    with pytest.raises(InvalidArgument, match="^rng must be a numpy.random.Generator"):
        Laplace(1.0).noise(bad, 3)


@pytest.mark.parametrize("value", ["a", math.nan, [1.0, math.inf], None])
def test_bad_true_answers_are_one_line_errors(value):
    with pytest.raises(InvalidArgument, match="^value must be a finite number"):
        Laplace(1.0).sample(value, np.random.default_rng(0), 3)


def test_negative_size_is_rejected():
    with pytest.raises(InvalidArgument, match="^size must be an integer >= 0, got -1"):
        Laplace(1.0).noise(np.random.default_rng(0), -1)


def test_law_and_worst_pair_loss():
    m = Laplace(0.7, 3.0)
    law = m.law(1.5)
    assert isinstance(law, ContinuousLaw) and law.breakpoints == (1.5,)
    assert law.dist.pdf(2.0) == pytest.approx(float(m.pdf(0.5)))
    assert pair_loss(m.law(0.0), m.law(3.0)).epsilon == pytest.approx(0.7, abs=1e-9)
    with pytest.raises(InvalidArgument, match="^value must be a finite number"):
        m.law(math.inf)


def test_snapped_sum_is_exact_and_clamped():
    assert snapped_sum_units([0.0, 1.0, 2.0, -1.0], 1.0) == 2 * 2 ** SNAP_BITS
    assert snapped_sum_units([0.5], 2.0) == 2 ** (SNAP_BITS - 2)
    a = snapped_sum_units([0.1, 0.2, 0.3], 1.0)
    assert snapped_sum_units([0.1, 0.2, 0.3, 1.0], 1.0) - a == 2 ** SNAP_BITS     # exactly Δ
    with pytest.raises(InvalidArgument, match="^data must be an array of finite numbers"):
        snapped_sum_units([0.1, math.nan], 1.0)


def test_spec_is_the_canonical_sum():
    m = Laplace(1.5, 2.0)
    spec = m.spec(size=7)
    assert spec.claim == PureDP(1.5) and spec.neighbours is Neighbours.ADD_REMOVE
    assert spec.domain == Domain(0.0, 2.0) and spec.size == 7 and spec.call_form is CallForm.BATCH
    data = np.array([0.5, 1.0, 3.0])                                   # 3.0 is clamped to Δ = 2
    out = spec.call_batch(data, np.random.default_rng(0), 5)
    assert len(out) == 5
    assert spec.distribution(data).dist.median() == pytest.approx(3.5)
    worst = pair_loss(spec.distribution(data), spec.distribution(np.r_[data, 2.0])).epsilon
    assert worst == pytest.approx(1.5, abs=1e-9)
