"""Clopper-Pearson bounds and the three ε lower bounds (dpaudit/estimators/bounds.py).

Their coverage (seeded simulations) is tested in tests/statistical/test_bound_coverage.py.
"""

import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.errors import InvalidArgument
from dpaudit.estimators.bounds import (Counts, bonferroni, cp_lower, cp_upper, projected_lb,
                                       validated_bound)


@pytest.mark.parametrize("k, n", [(0, 10), (3, 10), (10, 10), (57, 1000), (999, 1000)])
def test_cp_bounds_are_the_beta_quantiles(k, n):
    a = 0.05
    lo = 0.0 if k == 0 else stats.beta.ppf(a, k, n - k + 1)
    hi = 1.0 if k == n else stats.beta.ppf(1 - a, k + 1, n - k)
    assert cp_lower(k, n, a) == pytest.approx(lo, rel=1e-9, abs=1e-12)
    assert cp_upper(k, n, a) == pytest.approx(hi, rel=1e-9, abs=1e-12)


def test_cp_vectorised_and_degenerate():
    lo = cp_lower(np.array([0, 5]), np.array([10, 10]), 0.1)
    assert lo.shape == (2,) and lo[0] == 0.0 and 0 < lo[1] < 0.5
    assert cp_upper(0, 0, 0.1) == 1.0


def test_cp_bounds_give_statsmodels_numbers():
    """The bounds take the Beta quantiles from scipy.special (importing statsmodels costs a
    `dpaudit check` about a second): they must stay the numbers of statsmodels'
    ``proportion_confint(k, n, alpha=2a, method="beta")``, which are scipy.stats'
    ``beta.ppf(a, k, n - k + 1)`` and ``beta.isf(a, k + 1, n - k)``, to the last few bits, on
    counts up to 10^6 and levels from 1e-12 to 0.3 (seeded draws). (statsmodels itself is not
    imported: it loads Polars, after which no fork pool starts in this test process.)"""
    rng = np.random.default_rng(20261205)
    n = rng.integers(0, 10**6, 400).astype(float)
    k = np.floor(rng.random(400) * (n + 1))
    m = np.maximum(n, 1.0)
    for a in (1e-12, 1e-6, 0.025, 0.3):
        with np.errstate(all="ignore"):
            lo, hi = stats.beta.ppf(a, k, m - k + 1), stats.beta.isf(a, k + 1, m - k)
        lo, hi = np.where((n <= 0) | (k <= 0), 0.0, lo), np.where((n <= 0) | (k >= n), 1.0, hi)
        np.testing.assert_allclose(cp_lower(k, n, a), lo, rtol=1e-12, atol=0)
        np.testing.assert_allclose(cp_upper(k, n, a), hi, rtol=1e-12, atol=0)


def test_marginal_bound_by_hand():
    c = Counts(1000, 1000, 500, 200)
    b = validated_bound("marginal", c, 0.1, (0.5, 0.5))
    p_lo, q_hi = cp_lower(500, 1000, 0.05), cp_upper(200, 1000, 0.05)
    assert b.epsilon_lb == pytest.approx(math.log(p_lo / q_hi), rel=1e-12)
    b2 = validated_bound("marginal", c, 0.1, (0.5, 0.5), delta=0.1, epsilon=0.5)
    assert b2.epsilon_lb == pytest.approx(math.log((p_lo - 0.1) / q_hi), rel=1e-12)
    assert b2.delta_lb == pytest.approx(p_lo - math.exp(0.5) * q_hi, rel=1e-12)
    assert b.p == 0.5 and b.q == 0.2
    assert b.p_interval[0] < 0.5 < b.p_interval[1]


def test_no_evidence_gives_zero():
    assert validated_bound("marginal", Counts(100, 100, 0, 0), 0.1, (0.5, 0.5)).epsilon_lb == 0.0
    assert validated_bound("ratio", Counts(100, 100, 0, 0, None, 100.0, 100.0), 0.1, (1.0,)).epsilon_lb == 0.0
    assert validated_bound("paired", Counts(100, 100, 0, 0, 0), 0.1, (0.8, 0.1, 0.1)).epsilon_lb == 0.0


def test_bound_grows_without_cap_when_the_other_side_never_fires():
    # no probability floor: with q = 0 the bound is ln(x / ln(1/α)) and keeps growing with x
    lbs = [validated_bound("ratio", Counts(n, n, n // 2, 0, None, float(n), float(n)), 0.1, (1.0,)).epsilon_lb
           for n in (10**3, 10**5, 10**7)]
    assert lbs[0] < lbs[1] < lbs[2] and lbs[2] > 14.0


def test_methods_refuse_what_they_cannot_bound():
    with pytest.raises(InvalidArgument, match="method"):
        validated_bound("ratio", Counts(10, 10, 5, 1), 0.1, (1.0,))  # not Poisson
    with pytest.raises(InvalidArgument, match="pure DP"):
        validated_bound("ratio", Counts(10, 10, 5, 1, None, 10.0, 10.0), 0.1, (1.0,), delta=0.01)
    with pytest.raises(InvalidArgument, match="method must be one of"):
        validated_bound("magic", Counts(10, 10, 5, 1), 0.1, (1.0,))


def test_bonferroni():
    assert bonferroni(0.9, 4) == pytest.approx(0.025)
    with pytest.raises(InvalidArgument):
        bonferroni(0.9, 0)


def test_projection_grows_with_the_validation_budget_and_needs_events():
    args = dict(n=10_000, x=[500], y=[200], a=[150], alpha=0.1)
    for method, split in (("marginal", (0.5, 0.5)), ("ratio", (1.0,)), ("paired", (0.8, 0.1, 0.1))):
        small = projected_lb(method, args["n"], args["x"], args["y"], args["a"], 1e4, 0.1, split)[0]
        big = projected_lb(method, args["n"], args["x"], args["y"], args["a"], 1e7, 0.1, split)[0]
        assert small < big < math.log(500 / 200) + 1e-9
    assert projected_lb("ratio", 100, [0], [3], [0], 1e6, 0.1, (1.0,))[0] == -math.inf


def test_paired_bound_takes_delta_off_the_numerator():
    # (p - δ)/q ≥ (p_lo - δ)/(θ1_hi p_lo + θ2_hi (1 - p_lo)) (bounds.py docstring): as δ → 0 the
    # δ form meets the pure one, it falls as δ grows, and nothing is shown once p_lo ≤ δ
    c, split = Counts(6606, 6606, 2570, 547, 547), (0.8, 0.1, 0.1)
    pure = validated_bound("paired", c, 0.005, split).epsilon_lb
    tiny = validated_bound("paired", c, 0.005, split, delta=1e-12, epsilon=1.0).epsilon_lb
    assert tiny == pytest.approx(pure, rel=1e-9)
    lbs = [validated_bound("paired", c, 0.005, split, delta=d, epsilon=1.0).epsilon_lb
           for d in (0.01, 0.1, 0.3)]
    assert pure > lbs[0] > lbs[1] > lbs[2] == 0.0


def test_paired_delta_bounds_agree_on_the_refutation():
    # ε_LB > ε exactly when δ_LB(ε) > δ: the report's two numbers never disagree
    split, delta = (0.6, 0.2, 0.2), 0.127
    for x, a, c in ((2570, 547, 0), (3242, 898, 3), (2947, 716, 40), (900, 850, 5), (6000, 10, 1)):
        b = validated_bound("paired", Counts(6606, 6606, x, a + c, a), 0.005, split, delta=delta,
                            epsilon=1.0)
        assert (b.epsilon_lb > 1.0) == (b.delta_lb > delta), (x, a, c, b)


def test_paired_beats_marginal_on_coupled_counts_with_delta():
    # a shift of Gaussian noise: D' in S implies D in S, so θ2 = 0 and θ1 = q/p is known to
    # within θ1(1 − θ1)/X rather than 1/X + 1/Y (Gaussian, 10% too narrow, ε = 1, δ = 0.127)
    c = Counts(6606, 6606, 2570, 547, 547)
    paired = validated_bound("paired", c, 0.005, (0.8, 0.1, 0.1), delta=0.127, epsilon=1.0)
    marginal = validated_bound("marginal", c, 0.005, (0.5, 0.5), delta=0.127, epsilon=1.0)
    assert paired.epsilon_lb > 1.0 > marginal.epsilon_lb
