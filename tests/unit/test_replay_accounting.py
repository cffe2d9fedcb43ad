"""The replay's accounting formulas (dpaudit/replay/accounting.py) against known values, and the
tracked arithmetic that observes a draw's input (dpaudit/replay/tracked.py) on one record and one
replay run."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from dpaudit.replay.accounting import (categorical_epsilon, compose, gaussian_mu, gdp_delta,
                                       gdp_epsilon, laplace_epsilon, norm_of, zcdp_epsilon)
from dpaudit.replay.compare import compare
from dpaudit.replay.generator import RecordingGenerator
from dpaudit.replay.session import Run, active


def test_laplace_and_gaussian_per_call_terms():
    assert laplace_epsilon([1.0, -1.0], 2.0) == pytest.approx(1.0)
    assert laplace_epsilon([1.0, 1.0], [1.0, 4.0]) == pytest.approx(1.25)
    assert gaussian_mu([3.0, 4.0], 5.0) == pytest.approx(1.0)
    assert laplace_epsilon([0.0], 0.0) == 0.0            # no shift, no noise: nothing spent
    assert math.isinf(laplace_epsilon([1.0], 0.0))
    assert math.isinf(laplace_epsilon([float("nan")], 1.0))
    assert norm_of([1.0, -2.0, 2.0], "l2") == pytest.approx(3.0)
    assert norm_of([1.0, -2.0], "linf") == 2.0
    assert math.isnan(norm_of([1.0, float("nan")], "l1"))


def test_the_zcdp_conversion_is_bun_and_steinke_proposition_1_3():
    rho, delta = 0.5, 1e-5
    assert zcdp_epsilon(rho, delta) == pytest.approx(rho + 2 * math.sqrt(rho * math.log(1 / delta)))
    assert math.isinf(zcdp_epsilon(0.1, 0.0))
    assert zcdp_epsilon(0.0, 0.0) == 0.0


def test_the_exact_gaussian_profile_matches_its_formula_and_inverts():
    mu, eps = 1.0, 2.0
    by_hand = norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)
    assert gdp_delta(eps, mu) == pytest.approx(by_hand, rel=1e-12)
    e = gdp_epsilon(mu, 1e-5)
    assert gdp_delta(e, mu) == pytest.approx(1e-5, rel=1e-6)
    assert e == pytest.approx(4.3772, abs=1e-3)


def test_the_classical_gaussian_is_within_its_claim_under_the_exact_profile_only():
    """σ = Δ√(2 ln(1.25/δ))/ε at ε = 1, δ = 1e-5: zCDP gives 1.011 > 1, the exact profile 0.751."""
    sigma = math.sqrt(2 * math.log(1.25 / 1e-5))
    mu = 1.0 / sigma
    assert zcdp_epsilon(mu * mu / 2, 1e-5) == pytest.approx(1.0113, abs=1e-3)
    comp = compose([], [mu], [], 1e-5)
    assert comp.epsilon == pytest.approx(0.751, abs=1e-3)
    assert "exact Gaussian" in comp.conversion


def test_composition_adds_laplace_gaussian_and_declared_terms():
    comp = compose([0.5, 0.25], [0.6, 0.8], [(0.1, 1e-6)], 1e-5)
    assert comp.epsilon_laplace == pytest.approx(0.75)
    assert comp.mu == pytest.approx(1.0)
    assert comp.delta_gaussian == pytest.approx(1e-5 - 1e-6)
    assert comp.epsilon == pytest.approx(0.75 + gdp_epsilon(1.0, 9e-6) + 0.1)
    pure = compose([], [0.5], [], 0.0)
    assert math.isinf(pure.epsilon) and pure.conversion.startswith("none")


def test_a_categorical_draw_is_its_largest_log_ratio():
    assert categorical_epsilon([0.5, 0.5], [0.5, 0.5]) == 0.0
    assert categorical_epsilon([0.8, 0.2], [0.5, 0.5]) == pytest.approx(math.log(0.5 / 0.2))
    assert math.isinf(categorical_epsilon([1.0, 0.0], [0.5, 0.5]))


def _pair(f, d, dp, seed=1):
    rec = Run("record", seed)
    with active(rec):
        out_d = f(np.asarray(d, dtype=float), RecordingGenerator(np.random.PCG64(seed), rec))
    rep = Run("replay", seed, recorded=rec)
    with active(rep):
        out_dp = f(np.asarray(dp, dtype=float), RecordingGenerator(np.random.PCG64(seed + 1), rep))
    return rec, rep, out_d, out_dp


def test_the_input_is_read_from_numpy_arithmetic_in_the_draws_units():
    def f(data, rng):
        return 3.0 - 2.0 * rng.laplace(scale=0.5) + data.sum()

    rec, rep, out_d, out_dp = _pair(f, [1.0], [1.0, 1.0])
    assert out_d == out_dp                          # the noisy value is frozen
    report = compare(rec, rep, out_d, out_dp, np.array([1.0]), np.array([1.0, 1.0]), "", 1.0, 0.0)
    row = report.rows[0]
    # value = −2·Z + (3 + Σx): input in Z's units is (3 + Σx)/(−2); it moves by 1/2
    assert row.shift == pytest.approx(0.5)
    assert row.epsilon == pytest.approx(0.5 / 0.5)
    assert row.observed == "arithmetic"


def test_loc_is_the_input_and_the_output_stands_in_when_arithmetic_is_lost():
    def by_loc(data, rng):
        return rng.laplace(loc=data.sum(), scale=2.0)

    def via_float(data, rng):
        return data.sum() + float(rng.laplace(scale=2.0))   # float() leaves the tracking

    for f, how in ((by_loc, "argument"), (via_float, "output")):
        rec, rep, out_d, out_dp = _pair(f, [0.0], [0.0, 1.0])
        report = compare(rec, rep, out_d, out_dp, np.array([0.0]), np.array([0.0, 1.0]), "", 1.0, 0.0)
        assert report.rows[0].observed == how
        assert report.rows[0].epsilon == pytest.approx(0.5)


def test_a_replay_that_leaves_the_record_answers_with_fresh_draws():
    def f(data, rng):
        for _ in range(len(data)):
            rng.laplace()
        return 0.0

    rec, rep, _, _ = _pair(f, [1.0], [1.0, 1.0])
    assert rep.divergence is not None and rep.divergence.index == 1
    assert rep.calls[1].fresh and not rep.calls[0].fresh
