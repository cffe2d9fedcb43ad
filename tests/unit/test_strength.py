"""dpaudit.estimators.strength: the claim's p-value, the margin, the marginal label and the power
statement, checked against the bounds they are defined from."""

import pytest

from dpaudit.estimators.bounds import Counts, validated_bound
from dpaudit.estimators.strength import MARGINAL_P, detectable, grade, p_value

CASES = [  # (method, counts, split)
    ("marginal", Counts(100_000, 100_000, 30_000, 11_500), (0.5, 0.5)),
    ("marginal", Counts(50_000, 52_000, 2_000, 700), (0.3, 0.7)),
    ("ratio", Counts(80_000, 80_000, 9_000, 3_400, lam_num=80_000.0, lam_den=80_000.0), (1.0,)),
    ("paired", Counts(60_000, 60_000, 20_000, 7_600, a=7_000), (0.8, 0.1, 0.1)),
]


@pytest.mark.parametrize("method,counts,split", CASES)
@pytest.mark.parametrize("epsilon", [0.5, 0.9, 1.0, 1.2])
def test_p_value_is_the_level_at_which_the_bound_crosses_the_claim(method, counts, split, epsilon):
    for k in (1, 3):
        p = p_value(method, counts, split, k, epsilon)
        assert 0 < p <= 1
        if p < 1:
            above = validated_bound(method, counts, p / k, split, 0.0, epsilon).epsilon_lb
            below = validated_bound(method, counts, p / k * 0.99, split, 0.0, epsilon).epsilon_lb
            assert above > epsilon >= below  # refuted at p, not at 1% less: p is the crossing
        else:
            assert validated_bound(method, counts, 0.5 / k, split, 0.0, epsilon).epsilon_lb <= epsilon


@pytest.mark.slow
@pytest.mark.parametrize("method,counts,split", CASES)
def test_p_value_agrees_with_the_verdict_at_every_confidence(method, counts, split):
    for confidence in (0.95, 0.999):
        for epsilon in (0.3, 0.9, 1.0, 1.1, 1.5):
            alpha = 1 - confidence
            b = validated_bound(method, counts, alpha, split, 0.0, epsilon)
            refuted = b.epsilon_lb > epsilon
            s = grade(method, counts, split, alpha, 1, epsilon, 0.0, b.epsilon_lb, refuted)
            assert (s.p_value <= alpha) == refuted
            assert s.margin == pytest.approx(b.epsilon_lb / epsilon)
            assert s.marginal == (refuted and s.p_value > MARGINAL_P)
            assert (s.power is None) == refuted


def test_a_barely_refuted_claim_is_marginal_and_a_gross_one_is_not():
    counts = Counts(100_000, 100_000, 30_000, 11_500)  # ln(30000/11500) ≈ 0.959
    b = validated_bound("marginal", counts, 0.05, (0.5, 0.5), 0.0, 0.93)
    s = grade("marginal", counts, (0.5, 0.5), 0.05, 1, 0.93, 0.0, b.epsilon_lb, b.epsilon_lb > 0.93)
    assert b.epsilon_lb > 0.93 and s.marginal and MARGINAL_P < s.p_value <= 0.05
    s = grade("marginal", counts, (0.5, 0.5), 0.05, 1, 0.5, 0.0, b.epsilon_lb, True)
    assert not s.marginal and s.p_value < 1e-100


def test_delta_claims_use_the_same_bound():
    counts = Counts(100_000, 100_000, 30_000, 11_000)
    p = p_value("marginal", counts, (0.5, 0.5), 1, 0.9, delta=0.01)
    assert validated_bound("marginal", counts, p, (0.5, 0.5), 0.01, 0.9).epsilon_lb > 0.9
    assert p_value("marginal", counts, (0.5, 0.5), 1, 0.9, delta=0.05) > p  # a larger δ is harder


def test_power_needs_the_event_seen_under_the_neighbour():
    assert detectable(Counts(1000, 1000, 10, 0), 0.05, 1.0).epsilon is None


def test_the_report_shows_the_strength_of_a_sampled_verdict():
    from dpaudit.report.html import render_html
    from dpaudit.report.kinds import kind_of
    from dpaudit.report.model import make_run

    rec = {"kind": "audit", "target": "m.py:f", "verdict": "refuted", "elapsed_s": 1.0,
           "claim": {"epsilon": 1.0, "delta": 0.0, "neighbours": "add-remove"},
           "epsilon_lower_bound": 1.02, "delta_lower_bound": None, "confidence": 0.975,
           "samples": 1000, "counterexample": None, "reproduce": "", "error": None,
           "p_value": 0.012, "margin": 1.02, "marginal": True, "power": None, "reproducible": False,
           "family": {"targets": 2, "confidence": 0.95, "correction": "bonferroni"}}
    facts = dict(kind_of(rec).facts())
    assert facts["p-value of the claim (family-wise)"].startswith("0.012 — MARGINAL")
    assert facts["margin ε_LB / ε"] == "1.02"
    assert facts["reproducible from the seed"].startswith("no: the mechanism draws its own")
    assert facts["family-wise over"] == "2 targets at 95% (Bonferroni)"
    passed = dict(rec, verdict="not_refuted", marginal=False, p_value=0.4,
                  power={"probability": 0.9, "epsilon": 1.31, "delta": 0.002})
    assert dict(kind_of(passed).facts())["this budget would refute (probability 0.9)"] == \
        "ε ≥ 1.31 or δ ≥ 0.002 at the claimed ε"
    html = render_html(make_run([rec], seed=1, started=0.0, finished=1.0, command="dpaudit check"))
    assert "MARGINAL (above 0.001)" in html


def test_the_power_lines_binomial_quantile_is_scipys():
    """The power statement's 5% / 95% binomial quantiles come from a bisection on scipy.special's
    CDF (a check need not import scipy.stats): they must be the integers binom.ppf gives, at
    p = 0, p = 1, tiny p and counts up to 10^7 (seeded draws)."""
    import numpy as np
    from scipy.stats import binom

    from dpaudit.estimators.strength import _binom_quantile  # private: the helper itself, against scipy

    rng = np.random.default_rng(20261205)
    ns = np.concatenate([rng.integers(1, 60, 100), rng.integers(1, 10**7, 100)])
    ps = np.concatenate([[0.0, 1.0], rng.random(98), 10 ** rng.uniform(-9, 0, 100)])
    for n, p in zip(ns.tolist(), ps.tolist()):
        for level in (0.05, 0.95):
            assert _binom_quantile(level, n, p) == int(binom.ppf(level, n, p)), (level, n, p)
