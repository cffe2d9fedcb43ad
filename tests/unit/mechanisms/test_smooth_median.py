"""Smooth sensitivity of the median, the SS mechanisms, Theorem 1 and the seed claims
(docs/math.md#smooth-sensitivity, #duff-theorem-1, #errata)."""

import math

import numpy as np
import pytest
from scipy import stats
from scipy.special import lambertw

from dpaudit.claims import ApproxDP, PureDP
from dpaudit.errors import InvalidArgument
from dpaudit.laws import ContinuousLaw
from dpaudit.results import Verdict
from dpaudit.reference.analysis.duff_bounds import (
    level_set_measure,
    theorem1_assumption_holds,
    theorem1_bound,
    theorem1_constant,
    theorem1_radius,
)
from dpaudit.reference.claims import evaluate
from dpaudit.reference.claims.exponential import claims, order_statistic_pairs
from dpaudit.reference.smooth_mechanisms import SmoothCauchyMedian, SmoothLaplaceMedian, laplace_beta
from dpaudit.reference.analysis.smooth_sensitivity import (
    median_local_sensitivity,
    median_of,
    median_smooth_sensitivity,
)


def test_median_conventions():
    assert median_of([4.0, 1.0, 3.0, 2.0], "low") == 2.0
    assert median_of([4.0, 1.0, 3.0, 2.0], "avg") == 2.5
    assert median_of([3.0, 1.0, 2.0], "low") == median_of([3.0, 1.0, 2.0], "avg") == 2.0
    with pytest.raises(InvalidArgument, match="data"):
        median_of([], "low")


def test_replace_one_closed_form_by_hand():
    # s = (0 | 1, 2, 3 | 10), m = 2; pairs (i, j) with i ≤ 2 ≤ j: the best at β = 1 is
    # (s_4 − s_2)·e^{−1} = 8/e vs (s_3 − s_2)·1 = 1 vs (s_4 − s_0)e^{−3} = 10/e³
    got = median_smooth_sensitivity([1.0, 2.0, 3.0], 1.0, 0.0, 10.0, "replace")
    assert got == pytest.approx(8 / math.e)
    assert median_local_sensitivity([1.0, 2.0, 3.0], 0.0, 10.0, "replace") == 1.0


def test_add_remove_closed_form_by_hand():
    # n = 1: LS = max(s_1 − a, b − s_1)/2
    assert median_local_sensitivity([2.0], 0.0, 10.0, "add-remove") == 4.0
    assert median_smooth_sensitivity([2.0], 5.0, 0.0, 10.0, "add-remove") == pytest.approx(4.0)
    # β = 0 gives GS = (b − a)/2
    assert median_smooth_sensitivity([2.0, 3.0], 0.0, 0.0, 10.0, "add-remove") == pytest.approx(5.0)


@pytest.mark.parametrize("rel", ["replace", "add-remove"])
def test_ls_le_ss_le_gs_and_smoothness(rel):
    rng = np.random.default_rng(7)
    gs = 10.0 if rel == "replace" else 5.0
    for _ in range(30):
        n = int(rng.integers(1, 30))
        data = rng.normal(size=n)
        beta = float(rng.uniform(0.01, 2.0))
        ss = median_smooth_sensitivity(data, beta, -5, 5, rel)
        assert median_local_sensitivity(data, -5, 5, rel) <= ss + 1e-12 <= gs + 1e-12
        # SS(S') ≤ e^β SS(S) for a neighbour S'
        other = np.r_[data[1:], 5.0] if rel == "replace" else np.r_[data, 5.0]
        if other.size:
            ss2 = median_smooth_sensitivity(other, beta, -5, 5, rel)
            assert ss2 <= math.exp(beta) * ss * (1 + 1e-12) and ss <= math.exp(beta) * ss2 * (1 + 1e-12)


def test_smooth_sensitivity_validation():
    with pytest.raises(InvalidArgument, match="beta"):
        median_smooth_sensitivity([1.0], -1.0, 0, 1)
    with pytest.raises(InvalidArgument, match="method"):
        median_smooth_sensitivity([1.0], 1.0, 0, 1, method="slow")
    with pytest.raises(InvalidArgument, match="neighbours"):
        median_smooth_sensitivity([1.0], 1.0, 0, 1, "linf")
    with pytest.raises(InvalidArgument, match="data"):
        median_smooth_sensitivity([], 1.0, 0, 1)


def test_laplace_beta_corrected_and_literal():
    eps, delta = 1.0, 1e-3
    d_prime = 2 * delta / (math.exp(eps / 2) + 1)
    assert laplace_beta(eps, delta) == pytest.approx(eps / (2 * math.log(2 / d_prime)))
    assert laplace_beta(eps, delta, "literal") == pytest.approx(eps / (2 * math.log(2 / delta)))
    with pytest.raises(InvalidArgument, match="delta"):
        laplace_beta(eps, 0.0)
    with pytest.raises(InvalidArgument, match="beta_rule"):
        laplace_beta(eps, 0.1, "loose")


def test_cauchy_mechanism_parameters_and_law():
    m = SmoothCauchyMedian(1.2, -10, 10)
    assert m.alpha == m.beta == pytest.approx(0.2) and m.claim == PureDP(1.2)
    data = np.array([0.0, 0.5, 1.0])
    law = m.law(data)
    assert isinstance(law, ContinuousLaw)
    scale = median_smooth_sensitivity(data, 0.2, -10, 10, "replace") / 0.2
    assert law.dist.pdf(0.5) == pytest.approx(stats.cauchy(0.5, scale).pdf(0.5))
    with pytest.raises(InvalidArgument, match="alpha \\+ beta"):
        SmoothCauchyMedian(1.0, alpha=0.5, beta=0.6)
    assert SmoothCauchyMedian(1.0, alpha=1 / 8, beta=1 / 2).alpha == 0.125


def test_laplace_mechanism_parameters_and_law():
    m = SmoothLaplaceMedian(1.0, 0.001, -10, 10, "add-remove")
    assert m.alpha == 0.5 and m.claim == ApproxDP(1.0, 0.001) and m.convention == "avg"
    data = np.array([0.0, 1.0])
    law = m.law(data)
    assert law.dist.mean() == pytest.approx(0.5)
    assert law.dist.std() == pytest.approx(math.sqrt(2) * m.smooth_sensitivity(data) / 0.5)


@pytest.mark.parametrize("make", [lambda: SmoothCauchyMedian(1.0, -1, 1),
                                  lambda: SmoothLaplaceMedian(1.0, 0.01, -1, 1)])
def test_sampler_shapes_and_spec_are_complete(make):
    """(That the draws are centred on the median is a statistical test: tests/statistical/test_smooth_gof.py.)"""
    m = make()
    data = np.linspace(-0.5, 0.5, 21)
    x = m.sample(data, np.random.default_rng(3), 4001)
    assert x.shape == (4001,) and np.all(np.isfinite(x)) and isinstance(m.sample(data, np.random.default_rng(3)), float)
    spec = m.spec(size=21)
    assert spec.exact and spec.neighbours.value == "replace" and spec.size == 21
    assert len(spec.call_batch(data, np.random.default_rng(0), 5)) == 5


def test_theorem1_radius_uses_lambert_w():
    t = theorem1_radius(1.0, 0.1, 0.01, -10, 10)
    assert t == pytest.approx(4 * lambertw(1.0 * 20 / (0.01 * 0.1)).real)
    assert theorem1_radius(1.0, 0.1, 0.01, -10, 10, "sharp") < t
    with pytest.raises(InvalidArgument, match="C must be"):
        theorem1_radius(1.0, 0.1, 0.0)
    with pytest.raises(InvalidArgument, match="delta"):
        theorem1_radius(1.0, 0.0, 1.0)


def test_theorem1_constant_is_the_largest_feasible():
    data = np.linspace(-1, 1, 201)
    C = theorem1_constant(data, 1.0, 0.05, -10, 10)
    assert C is not None
    assert theorem1_assumption_holds(data, 1.0, 0.05, C, -10, 10)
    assert not theorem1_assumption_holds(data, 1.0, 0.05, C * 1.001, -10, 10)
    b = theorem1_bound(data, 1.0, 0.05, None, -10, 10)
    assert b.assumption_holds and b.C == C
    assert b.bound == pytest.approx(4 * (math.e - 1) * b.smooth_sensitivity * b.W / 1.0)
    assert b.beta == pytest.approx(1.0 / b.radius)


def test_level_sets_grow_with_t():
    data = np.linspace(0, 1, 11)
    vals = [level_set_measure(data, t, "avg", -1, 2) for t in (0, 0.5, 1, 2, 5, 100)]
    assert vals[0] == vals[1] == 0.0 and all(a <= b for a, b in zip(vals, vals[1:]))
    assert vals[-1] == pytest.approx(3.0)


@pytest.mark.slow
def test_every_seed_claim_check_agrees_with_its_recorded_verdict():
    checks = [c.evaluate() for c in claims()]
    assert len(checks) == len(claims()) >= 14
    bad = [(c.claim.id, c.evidence.detail) for c in checks if not c.agrees]
    assert not bad
    ids = {c.claim.id: c for c in checks}
    assert ids["s004-thm3-eq22-as-written"].evidence.verdict is Verdict.REFUTED
    assert ids["s004-thm3-eq22-as-written"].evidence.observed == pytest.approx(1.0)
    assert ids["s004-thm2-change-one"].evidence.observed == pytest.approx(1.0)
    assert ids["s004-eq21-sign"].evidence.counterexample["mode_cell"] in (0, 9)
    for c in checks:
        rec = c.to_record()
        assert rec["verdict"] in ("refuted", "not_refuted") and rec["kind"] == "seed-claim"
    with pytest.raises(InvalidArgument, match="claim_id"):
        evaluate("no-such-claim")


def test_order_statistic_pairs_are_neighbours():
    for rel in ("replace", "add-remove"):
        for d, d2 in order_statistic_pairs(4, 0.0, 1.0, rel):
            if rel == "replace":
                assert d.size == d2.size == 4 and np.sum(~np.isin(d2, d)) <= 1
            else:
                assert abs(d.size - d2.size) == 1
