"""The betting look (dpaudit.auditing.betting): its false refutations stay within α on tight,
correct mechanisms, its confidence sequence's lower end stays below the true ε, and it refutes
what it is there for in a few hundred samples. Fixed seeds, stated α, no retry."""

import math

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.stats import binom

import dpaudit
from dpaudit.auditing.betting import _lower_end, bet, kelly  # private: the look's own parts
from dpaudit.execution.base import InProcessExecutor
from dpaudit.spec import MechanismSpec

pytestmark = pytest.mark.statistical


def laplace_sum(scale, epsilon=1.0):
    @dpaudit.mechanism(epsilon=epsilon, neighbours="add-remove", domain=(0, 1), size=1)
    def noisy_sum(data, rng, size=None):
        return data.sum() + rng.laplace(0.0, scale, size=size)
    return noisy_sum


def randomized_response(epsilon_true, claim=1.0):
    keep = math.exp(epsilon_true) / (1.0 + math.exp(epsilon_true))

    @dpaudit.mechanism(epsilon=claim, neighbours="linf", domain=(0, 1), size=1)
    def rr(data, rng, size=None):
        bit = int(data[0] >= 0.5)
        return np.where(rng.random(size) < keep, bit, 1 - bit).astype(np.int64)
    return rr


def spec_of(mech):
    return MechanismSpec.from_function(mech, float_policy="off")


def test_kelly_is_the_maximiser_of_the_log_growth():
    vals = np.array([1.0, 1.0 - math.e, -math.e, 0.0])
    for w in ([0.5, 0.1, 0.05, 0.35], [0.6, 0.0, 0.1, 0.3], [0.2, 0.1, 0.2, 0.5]):
        w = np.array(w)
        cap = 1.0 / math.e
        got = float(kelly(vals, w, cap))
        best = minimize_scalar(lambda lam: -np.dot(w, np.log1p(lam * vals)), bounds=(0.0, cap * (1 - 1e-9)),
                               method="bounded", options={"xatol": 1e-10})
        want = best.x if np.dot(w, vals) > 0 else 0.0
        assert got == pytest.approx(want, abs=1e-6)


def test_the_lower_end_is_the_run_of_refuted_points_from_zero():
    t = math.log(20)
    assert _lower_end(np.array([5.0, 4.0, 3.5, 1.0, 9.0]), t) == 2  # the 9.0 after a gap is not taken
    assert _lower_end(np.array([1.0, 9.0]), t) == 0
    assert _lower_end(np.array([9.0, 9.0]), t) == 1


@pytest.mark.parametrize("mech", [laplace_sum(1.0), randomized_response(1.0)], ids=["laplace", "rr"])
def test_a_tight_mechanism_is_refuted_at_most_alpha_of_the_time(mech):
    # 200 betting looks at α = 0.1 on a mechanism exactly at its claim: the refutations stay
    # below the 99.9% quantile of Bin(200, 0.1) (33); Ville's inequality promises at most 10%
    # (5 of 200 each on this machine; at larger ε it comes closer to α: docs/math.md)
    spec = spec_of(mech)
    refuted = sum(bet(spec, InProcessExecutor(), budget=1_000, alpha=0.1, seed=s).refuted
                  for s in range(5_000, 5_200))
    assert refuted <= binom.ppf(0.999, 200, 0.1)


def test_its_bound_stays_below_the_true_epsilon_and_its_refutations_are_fast():
    # true ε = 2 (half the claimed noise); 40 seeds at α = 0.05: each bound is above 2 with
    # probability at most 0.05, so at most the 99.9% quantile of Bin(40, 0.05) (6) are; the
    # median refutation within 600 samples (an oracle that knows the best event needs 128)
    spec = spec_of(laplace_sum(0.5))
    runs = [bet(spec, InProcessExecutor(), budget=20_000, alpha=0.05, seed=s) for s in range(40)]
    assert all(r.refuted for r in runs)
    assert sum(r.epsilon_lb > 2.0 for r in runs) <= binom.ppf(0.999, 40, 0.05)
    assert float(np.median([r.refuted_at for r in runs])) <= 600


def test_an_approximate_claim_gets_a_delta_bound_below_the_true_delta():
    from scipy.stats import norm

    @dpaudit.mechanism(epsilon=1.0, delta=0.05, neighbours="linf", domain=(0, 1), size=1)
    def gauss(data, rng, size=None):
        return data[0] + rng.normal(0.0, 0.5, size=size)  # μ = 2: δ(1) = 0.3177

    mu = 2.0
    true_delta = norm.cdf(-1 / mu + mu / 2) - math.e * norm.cdf(-1 / mu - mu / 2)
    runs = [bet(spec_of(gauss), InProcessExecutor(), budget=20_000, alpha=0.05, seed=s) for s in range(10)]
    assert all(r.refuted for r in runs)
    # each δ bound is above the truth with probability at most 0.05: at most 3 of 10 (99.9%)
    assert all(r.delta_lb > 0.05 for r in runs)
    assert sum(r.delta_lb > true_delta for r in runs) <= binom.ppf(0.999, 10, 0.05)


def test_a_claim_too_large_to_bet_on_gets_no_betting_look():
    # at ε above MAX_EPSILON the largest safe bet cannot win within the look: no level is spent on it
    from dpaudit.auditing.betting import MAX_EPSILON

    r = dpaudit.audit(laplace_sum(1.0, epsilon=MAX_EPSILON + 1.0), samples=400_000, seed=1,
                      float="off")
    assert "betting" not in r.details["early_stop"]["kinds"]


def test_nothing_refuted_at_the_claimed_delta_bounds_delta_by_zero():
    # a Gaussian whose true δ(1) is 0.127 against a claim of δ = 0.2: the δ grid starts at the
    # claim, and nothing there refuted is no bound above 0 (it read δ ≥ 0.2, the claim itself)
    @dpaudit.mechanism(epsilon=1.0, delta=0.2, neighbours="linf", domain=(0, 1), size=1)
    def gauss(data, rng, size=None):
        return data[0] + rng.normal(0.0, 1.0, size=size)

    r = bet(spec_of(gauss), InProcessExecutor(), budget=4_000, alpha=0.05, seed=3)
    assert not r.refuted and r.delta_lb == 0.0


def test_a_time_limit_in_the_betting_look_is_inconclusive_not_a_pass():
    # 0.5 ms a call, 0.4 s to run: the limit falls in the betting look, which took the
    # TimeLimitReached of a call it cut for the mechanism's failure; the run read NOT REFUTED
    # from no samples (exit 0), where no verdict was reached
    import time

    @dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0, 1), size=3)
    def slow(data, rng):
        time.sleep(0.0005)
        return round(float(np.sum(data)) + rng.laplace(0.0, 1.0), 2)

    # the default executor (forked workers) ends a call the limit cuts with TimeLimitReached
    r = dpaudit.audit(slow, seed=3, float="off", samples=200_000, timeout=0.4)
    assert r.verdict.value == "inconclusive"


def test_a_mechanism_that_returns_none_now_and_then_is_not_an_error_of_the_betting_look():
    # its first draws (8 rows a pair) fixed "real numbers" and a later None ended the run in
    # ERROR (10 seeds of 10); the betting look now stops and the sampled looks fix the output
    # kind from their larger first batch, as they did before it
    @dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0, 1), size=3)
    def sometimes_none(data, rng, size=None):
        n = 1 if size is None else size
        v = np.round(float(np.sum(data)) + rng.laplace(0.0, 1.0, n), 1)
        out = [None if u < 0.05 else float(x) for u, x in zip(rng.random(n), v)]
        return out[0] if size is None else out

    for seed in (11, 12, 13):
        r = dpaudit.audit(sometimes_none, samples=50_000, seed=seed, float="off")
        assert r.error is None, r.error
        first = r.details["early_stop"]["looks"][0]
        assert first["kind"] == "betting"
