"""The limits of a budget (dpaudit.estimators.limits): the ε ceiling and δ floor are the exact
extremes of the bound actually used, close to ln(n / ln(2/α)) and ln(1/α)/n, and every sampled
record and every NOT REFUTED line carries them."""

import math

import numpy as np
import pytest

import dpaudit
from dpaudit.estimators.bounds import Counts, validated_bound
from dpaudit.estimators.limits import curve_limits, delta_floor, epsilon_ceiling, limits_of
from dpaudit.report.describe import one_line


@pytest.mark.parametrize("n", [1_000, 100_000, 2_000_000])
@pytest.mark.parametrize("alpha", [0.05, 1e-3])
def test_marginal_ceiling_is_the_closed_form_and_near_the_approximation(n, alpha):
    exact = math.log((alpha / 2) ** (1 / n) / (1 - (alpha / 2) ** (1 / n)))
    assert epsilon_ceiling("marginal", n, n, alpha) == pytest.approx(exact, rel=1e-9)
    assert abs(exact - math.log(n / math.log(2 / alpha))) < 0.01


@pytest.mark.parametrize("method", ["marginal", "ratio", "paired"])
def test_no_counts_give_a_bound_above_the_ceiling(method):
    rng = np.random.default_rng(7)
    n, alpha = 5_000, 0.01
    split = {"marginal": (0.5, 0.5), "ratio": (1.0,), "paired": (0.8, 0.1, 0.1)}[method]
    top = epsilon_ceiling(method, n, n, alpha, split, n, n)
    seen = []
    for _ in range(300):
        x = int(rng.integers(0, n + 1))
        y = int(rng.integers(0, max(1, x // 50) + 1))
        a = min(x, y) if method == "paired" else None
        lam = dict(lam_num=float(n), lam_den=float(n)) if method == "ratio" else {}
        c = Counts(n, n, x, y, a=a, **lam)
        seen.append(validated_bound(method, c, alpha, split).epsilon_lb)
    extreme = Counts(n, n, n, 0, a=0 if method == "paired" else None,
                     **(dict(lam_num=float(n), lam_den=float(n)) if method == "ratio" else {}))
    assert max(seen) <= top + 1e-12
    assert validated_bound(method, extreme, alpha, split).epsilon_lb == pytest.approx(top)


def test_delta_floor_is_the_least_visible_delta():
    n, alpha, eps = 100_000, 0.05, 1.0
    f = delta_floor(n, n, alpha, eps)
    approx = (1 + math.e) * math.log(2 / alpha) / n
    assert 0.5 * approx < f < 2 * approx
    # at the floor an event never seen on D' shows δ_LB > 0; one count fewer shows nothing
    k = round(f * n)
    for x, positive in ((k, True), (k - 1, False)):
        b = validated_bound("marginal", Counts(n, n, x, 0), alpha, (0.5, 0.5), delta=1e-300, epsilon=eps)
        assert (b.delta_lb > 0) is positive


def test_delta_floor_is_the_budgets_whatever_the_method():
    # the paired bound's weights are (θ1, θ2, p): its first two are not p's and q's, and took the
    # floor from a 0.8/0.1 split of the marginal bound; the floor is the least over the splits
    # the selection may give the marginal bound, for every method
    least = min(delta_floor(1000, 1000, 0.05, 1.0, s) for s in ((0.5, 0.5), (0.3, 0.7), (0.7, 0.3)))
    for method, split in (("paired", (0.8, 0.1, 0.1)), ("marginal", (0.7, 0.3)), ("ratio", (1.0,))):
        assert limits_of(method, 1000, 1000, 0.05, 1.0, split).delta_floor == least
    assert least < delta_floor(1000, 1000, 0.05, 1.0, (0.8, 0.1))


def test_limits_shrink_with_alpha_and_grow_with_n():
    a = limits_of("marginal", 10_000, 10_000, 0.05, 1.0)
    assert limits_of("marginal", 10_000, 10_000, 0.001, 1.0).epsilon_ceiling < a.epsilon_ceiling
    b = limits_of("marginal", 1_000_000, 1_000_000, 0.05, 1.0)
    assert b.epsilon_ceiling > a.epsilon_ceiling and b.delta_floor < a.delta_floor
    c = curve_limits(10_000, 0.025)  # the marginal bound's ceiling, each side at 0.025
    assert c.epsilon_ceiling == pytest.approx(epsilon_ceiling("marginal", 10_000, 10_000, 0.05))


def test_every_sampled_record_and_not_refuted_line_states_its_limits():
    @dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0, 1), size=1, float_events=False)
    def laplace(data, rng, size=None):
        return data.sum() + rng.laplace(0, 1, size=size)

    rec = dpaudit.audit(laplace, samples=100_000, seed=3).to_record()
    assert rec["verdict"] == "not_refuted"
    lim = rec["limits"]
    assert lim["basis"] == "validation" and lim["n_D"] > 10_000
    # the largest ceiling of any method and split the selection could choose, at its sizes and level
    from dpaudit.estimators.limits import best_ceiling

    top = best_ceiling(max(lim["n_D"], lim["n_D_prime"]), lim["alpha"])
    assert lim["epsilon_ceiling"] == pytest.approx(top, rel=1e-6) or lim["method"] == "ratio"
    assert 5 < lim["epsilon_ceiling"] < math.log(lim["n_D"])
    assert rec["findings"]["logic"]["limits"] == lim
    assert "this budget cannot show ε above" in one_line(rec) and "nor δ below" in one_line(rec)


def test_a_delta_lowers_the_ceiling_and_the_budget_named_is_the_least_that_reaches():
    from dpaudit.estimators.bounds import SPLITS
    from dpaudit.estimators.limits import best_ceiling, point_reach

    n, alpha = 2_000, 0.05
    pure = epsilon_ceiling("marginal", n, n, alpha)
    # δ comes off p_lo: ln((α/2)^(1/n) − δ) − ln(1 − (α/2)^(1/n)), below the pure ceiling by about ln 2
    lo = (alpha / 2) ** (1 / n)
    approx = epsilon_ceiling("marginal", n, n, alpha, delta=0.5)
    assert approx == pytest.approx(math.log((lo - 0.5) / (1 - lo)), rel=1e-9) and approx < pure - 0.6
    # a pure-only method falls back to the marginal bound for a δ claim, as the validation does
    assert epsilon_ceiling("ratio", n, n, alpha, (1.0,), n, n, delta=0.5) == pytest.approx(approx)
    # the best ceiling is at least every method's and split's, and for a δ claim the marginal's only
    best = best_ceiling(n, alpha)
    for method, splits in SPLITS.items():
        for split in splits:
            assert epsilon_ceiling(method, n, n, alpha, split, n, n) <= best + 1e-12
    assert best_ceiling(n, alpha, 0.5) == max(epsilon_ceiling("marginal", n, n, alpha, sp, delta=0.5)
                                              for sp in SPLITS["marginal"])
    assert point_reach(n, alpha, best, 4 * n) is not None and point_reach(n, alpha, best - 1e-9, 4 * n) is None
    reach = point_reach(n, alpha, 8.0, 4 * n)
    f = reach.needs / (4 * n)  # the factor the sizes grow by, rounded up to two digits
    assert best_ceiling(math.ceil(n * f), alpha) > 8.0 >= best_ceiling(int(n * f / 2 ** 0.25 / 1.1), alpha)
    assert point_reach(n, alpha, 35.0, 4 * n).needs is None  # past 10^15 samples: none dpaudit draws


def test_a_claim_out_of_the_budgets_reach_is_inconclusive_and_the_named_budget_reaches_it():
    """A mechanism that publishes its input (noise of scale 0.01) claimed at ε = 8: 2,000
    samples cannot show ε above about 3.8, so NOT REFUTED would say nothing (it would pass a CI
    gate); it is INCONCLUSIVE and names the least budget that could refute it, at which this
    audit does (the mechanism's counts are the extreme ones that reach the ceiling)."""
    @dpaudit.mechanism(epsilon=8.0, neighbours="add-remove", domain=(0, 1), size=5, float_events=False)
    def leak(data, rng, size=None):
        return data.sum() + rng.laplace(0, 0.01, size=size)

    rec = dpaudit.audit(leak, samples=2_000, seed=3).to_record()
    assert rec["verdict"] == "inconclusive"
    logic = rec["findings"]["logic"]
    assert logic["limits"]["out_of_reach"]["ceiling"] <= 8.0
    assert "out of this run's reach" in logic["reason"]
    line = one_line(rec)
    assert "INCONCLUSIVE" in line and "out of this run's reach" in line
    need = int(logic["reason"].rsplit("--samples ", 1)[1].split()[0])
    assert 20_000 < need < 1_000_000 and rec["findings"]["logic"]["limits"]["out_of_reach"]["needs_samples"] == need
    again = dpaudit.audit(leak, samples=need, seed=3).to_record()
    assert again["verdict"] == "refuted" and again["epsilon_lower_bound"] > 8.0
    # a claim within reach keeps its NOT REFUTED (a correct Laplace at ε = 1, same budget)
    @dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0, 1), size=5, float_events=False)
    def laplace(data, rng, size=None):
        return data.sum() + rng.laplace(0, 1.0, size=size)

    assert dpaudit.audit(laplace, samples=2_000, seed=3).verdict.value == "not_refuted"


def test_a_curve_claim_out_of_reach_is_inconclusive_and_the_test_of_reach_is_conservative():
    from dpaudit.curves import curve_audit
    from dpaudit.curves.claims import gdp_delta
    from dpaudit.estimators.limits import _curve_extremes, _curve_reached  # private: checked on a dense grid

    claim = lambda e: gdp_delta(6.0, e)  # noqa: E731
    eps = np.linspace(0.0, 12.0, 200_001)
    for band, level in (("cp", 0.05 / 8), ("dkw", 0.025)):
        for n in (300, 600, 3_000, 30_000):
            lo, hi = _curve_extremes(band, n, level)
            reached = bool(np.any(lo - np.exp(eps) * hi > claim(eps)))
            # never out of reach where some ε is reached (a dense grid finds none the test missed)
            assert _curve_reached(claim, band, n, level) or not reached

    def leak(data, rng, size=None):
        return data[0] + rng.normal(0, 0.01, size=size)

    r = curve_audit(leak, mu=6.0, neighbours="linf", domain=(0, 1), size=1, samples=2_000, seed=3)
    assert r.verdict.value == "inconclusive"
    rec = r.to_record()
    assert "out of this run's reach" in rec["details"]["out_of_reach"] and "note" not in rec["details"]
    assert "INCONCLUSIVE" in one_line(rec) and "out of this run's reach" in one_line(rec)
    # a claim within reach at the same budget keeps its verdict (μ = 1 of a correct Gaussian)
    def gaussian(data, rng, size=None):
        return data[0] + rng.normal(0, 1.0, size=size)

    assert curve_audit(gaussian, mu=1.0, neighbours="linf", domain=(0, 1), size=1, samples=2_000,
                       seed=3).verdict.value == "not_refuted"


def test_the_advice_to_confirm_a_marginal_refutation_names_a_budget_within_reach():
    from dpaudit.estimators.limits import best_ceiling
    from dpaudit.estimators.strength import confirm_advice

    n, alpha = 3_000, 0.045
    near = best_ceiling(n, alpha) - 0.05  # refutable at 95%, above what 0.999 could show at n
    rec = {"seed": 1, "confidence": 0.95, "samples": 15_000, "claim": {"epsilon": near},
           "limits": {"n_D": n, "n_D_prime": n, "alpha": alpha}}
    advice = confirm_advice(rec)
    assert advice.startswith("confirm with --seed=2 --confidence=0.999 --samples=")
    need = int(advice.split("--samples=")[1].split()[0])
    assert need > 15_000 and best_ceiling(n * need // 15_000, alpha * 0.001 / 0.05) > near
    # 0.999 reaches ε = 1 at this budget: ten times the run's budget, for an effect found with
    # little to spare (a probe's marginal refutation, 40,843 samples of 400,000, was NOT REFUTED by
    # a rerun at 0.999 on 400,000, and confirmed on 4,000,000 after 24,028)
    far = dict(rec, claim={"epsilon": 1.0})
    assert confirm_advice(far) == ("confirm with --seed=2 --confidence=0.999 --samples=150000 (10× "
                                   "this run's budget: early stopping ends the rerun at the first "
                                   "look that confirms)")
    stopped_early = dict(far, reproduce="dpaudit check m.py:f --epsilon=1 --samples=400000 --seed=1")
    assert "--samples=4000000 (10× this run's budget" in confirm_advice(stopped_early)
