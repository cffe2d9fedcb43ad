"""Coverage of the three ε lower bounds of dpaudit/estimators/bounds.py, by seeded simulation.

Each bound is computed on m = 1,500 simulated data sets whose true ratio p/q is known, at level
α = 0.1 for the bound; the fraction of bounds above ln(p/q) must not exceed α by more than 3
binomial standard deviations, α + 3·√(α(1 − α)/m). For a correct bound each test fails with
probability below 0.2% (the normal approximation of the binomial tail beyond 3σ); the seeds are
fixed, so the outcome is deterministic, and nothing is retried.
"""

import math

import numpy as np
import pytest

from dpaudit.estimators.bounds import Counts, validated_bound

pytestmark = pytest.mark.slow


def _miss_rate(lbs: np.ndarray, truth: float) -> float:
    return float(np.mean(lbs > truth))


def _limit(alpha: float, m: int) -> float:
    return alpha + 3 * math.sqrt(alpha * (1 - alpha) / m)


@pytest.mark.statistical
def test_ratio_bound_coverage():
    rng = np.random.default_rng(11)
    p, q, lam, alpha, m = 0.02, 0.015, 20_000.0, 0.1, 1500
    xs, ys = rng.poisson(lam * p, m), rng.poisson(lam * q, m)
    lbs = np.array([validated_bound("ratio", Counts(1, 1, int(x), int(y), None, lam, lam), alpha, (1.0,)).epsilon_lb
                    for x, y in zip(xs, ys)])
    assert _miss_rate(lbs, math.log(p / q)) <= _limit(alpha, m)


@pytest.mark.statistical
def test_paired_bound_coverage_under_coupling():
    # D in S = {U < p}, D' in S = {U < q} on the same uniform U (a shifted-noise coupling):
    # the pairs in both are Bin(n, q), those in D only Bin(n - both, (p - q)/(1 - q))
    rng = np.random.default_rng(12)
    p, q, n, alpha, m = 0.05, 0.04, 4000, 0.1, 1500
    ys = rng.binomial(n, q, m)                       # both in S
    xs = ys + rng.binomial(n - ys, (p - q) / (1 - q))  # D in S
    lbs = [validated_bound("paired", Counts(n, n, int(x), int(y), int(y)), alpha, (0.8, 0.1, 0.1)).epsilon_lb
           for x, y in zip(xs, ys)]
    assert _miss_rate(np.array(lbs), math.log(p / q)) <= _limit(alpha, m)


@pytest.mark.statistical
def test_paired_delta_bounds_coverage_under_coupling():
    # the same coupling with an (ε, δ) claim: the true ε at δ is ln((p − δ)/q) and the true
    # δ(ε) is p − e^ε q; neither lower bound may exceed its truth more often than α
    rng = np.random.default_rng(14)
    p, q, delta, eps, n, alpha, m = 0.39, 0.083, 0.127, 1.0, 3000, 0.1, 1500
    ys = rng.binomial(n, q, m)
    xs = ys + rng.binomial(n - ys, (p - q) / (1 - q))
    bounds = [validated_bound("paired", Counts(n, n, int(x), int(y), int(y)), alpha, (0.6, 0.2, 0.2),
                              delta=delta, epsilon=eps) for x, y in zip(xs, ys)]
    assert _miss_rate(np.array([b.epsilon_lb for b in bounds]), math.log((p - delta) / q)) <= _limit(alpha, m)
    assert _miss_rate(np.array([b.delta_lb for b in bounds]), p - math.exp(eps) * q) <= _limit(alpha, m)


@pytest.mark.statistical
def test_marginal_bound_coverage():
    rng = np.random.default_rng(13)
    p, q, n, alpha, m = 0.3, 0.25, 2000, 0.1, 1500
    xs, ys = rng.binomial(n, p, m), rng.binomial(n, q, m)
    lbs = np.array([validated_bound("marginal", Counts(n, n, int(x), int(y)), alpha, (0.5, 0.5)).epsilon_lb
                    for x, y in zip(xs, ys)])
    assert _miss_rate(lbs, math.log(p / q)) <= _limit(alpha, m)
