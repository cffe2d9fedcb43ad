"""Early stopping (dpaudit.auditing.schedule, dpaudit.auditing.looks): the look schedule,
the record of the stopping rule, and the flag that turns it off."""

import math

import pytest

import dpaudit
from dpaudit.errors import InvalidArgument
from dpaudit.auditing.schedule import (BET_SPEND, BETTING, LOOK_FRACTIONS, MIN_BET, MIN_LOOK,
                                       SAMPLED, SPEND, schedule)
from dpaudit.results import Verdict


def test_schedule_spends_alpha_exactly_and_looks_geometrically():
    s = schedule(16_000_000, 0.95)
    assert s.budgets == (20_000, 80_000, 320_000, 1_280_000)
    assert all(b2 == 4 * b1 for b1, b2 in zip(s.budgets, s.budgets[1:]))
    assert math.isclose(sum(s.alphas) + s.final_alpha, 0.05, rel_tol=1e-12)
    assert s.alphas == (SPEND * s.alpha,) * 4 and s.final_alpha >= 0.6 * s.alpha - 1e-15
    assert sum(s.budgets) <= sum(LOOK_FRACTIONS) * 16_000_000 < 0.11 * 16_000_000
    assert schedule(4_000_000, 0.95).budgets == (5_000, 20_000, 80_000, 320_000)
    assert schedule(400_000, 0.95).budgets == (2_000, 8_000, 32_000)  # 500 < MIN_LOOK
    assert s.to_record()["family_alpha"] == s.alpha


def test_the_betting_look_comes_first_in_two_parts_around_the_smallest_sampled_look():
    s = schedule(4_000_000, 0.95, betting=True)
    assert s.budgets == (25_000, 5_000, 25_000, 80_000, 320_000)  # the 20,000 look replaced
    assert s.kinds == (BETTING, SAMPLED, BETTING, SAMPLED, SAMPLED)
    # one level for both parts: one wealth process (dpaudit.auditing.betting.Bettor)
    assert s.alphas[0] == pytest.approx(BET_SPEND * s.alpha) and s.alphas[2] == 0.0
    assert s.final_alpha == pytest.approx(0.5 * s.alpha)
    assert math.isclose(sum(s.alphas) + s.final_alpha, s.alpha, rel_tol=1e-12)
    # a mechanism with no batch form: 25,000 samples of betting in all, as with a batch form
    assert schedule(400_000, 0.95, betting=True).budgets == (12_500, 2_000, 12_500, 32_000)
    assert schedule(8 * MIN_BET, 0.95, betting=True).budgets == (2 * MIN_BET,)
    assert schedule(8 * MIN_BET - 1, 0.95, betting=True).budgets == ()
    assert s.to_record()["kinds"] == ["betting", "sampled", "betting", "sampled", "sampled"]


def test_small_budget_has_no_early_look():
    s = schedule(int(12.5 * MIN_LOOK) - 1, 0.9)
    assert s.budgets == () and s.looks == 1 and s.final_alpha == s.alpha


@pytest.mark.parametrize("budget, confidence, min_look", [(0, 0.9, 10), (10, 1.5, 10), (100, 0.9, 0)])
def test_schedule_rejects_bad_arguments(budget, confidence, min_look):
    with pytest.raises(InvalidArgument):
        schedule(budget, confidence, min_look)


def laplace_sum(scale):
    @dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0, 1), size=5,
                       float_events=False)  # a model over the reals (float64 x + Laplace is porous)
    def noisy_sum(data, rng, size=None):
        return data.sum() + rng.laplace(scale=scale, size=size)
    return noisy_sum


@pytest.mark.slow
def test_gross_violation_stops_at_the_first_look_and_says_so():
    r = dpaudit.audit(laplace_sum(0.25), samples=2_000_000, seed=4)  # true ε = 4
    rec = r.details["early_stop"]
    assert r.verdict is Verdict.REFUTED and r.epsilon_lower_bound > 1.0
    # the first look (2,500 samples) refutes already; a weak refutation looks on for a measured
    # ratio (looks.SATURATED_COUNT), and the run stops well before the final look
    assert rec["looks"][0]["epsilon_lb"] > 1.0
    assert rec["stopped_early"] and rec["stopped_at_look"] < len(rec["budgets"]) + 1
    assert r.samples == sum(look["samples"] for look in rec["looks"]) <= 2_000_000 // 16
    assert r.details["alpha"] == pytest.approx(rec["alphas"][0])
    assert r.confidence == 0.95  # family-wise, under the stopping rule
    assert r.to_record()["details"]["early_stop"]["rule"].startswith("Bonferroni")


def test_no_early_stop_spends_the_budget_and_has_no_record():
    r = dpaudit.audit(laplace_sum(0.25), samples=400_000, seed=4, early_stop=False)
    assert "early_stop" not in r.details and r.samples > 390_000
    assert "early_stop=False" in r.reproduce  # the rerun keeps the stopping rule


@pytest.mark.slow
def test_without_an_early_look_the_audit_is_the_plain_one():
    f = laplace_sum(0.5)
    # below 8 × MIN_BET samples there is no betting look, and below 12.5 × MIN_LOOK no other
    a = dpaudit.audit(f, samples=7_999, seed=11).to_record()
    b = dpaudit.audit(f, samples=7_999, seed=11, early_stop=False).to_record()
    assert "early_stop" not in a["details"]  # nothing was stopped early: nothing to record
    assert b.pop("reproduce") == a.pop("reproduce").replace(", seed=", ", early_stop=False, seed=")
    for rec in (a, b):
        rec.pop("elapsed_s")
    assert a == b


@pytest.mark.slow
def test_correct_mechanism_runs_every_look():
    r = dpaudit.audit(laplace_sum(1.0), samples=400_000, seed=3)
    rec = r.details["early_stop"]
    assert r.verdict is Verdict.NOT_REFUTED and not rec["stopped_early"]
    assert len(rec["looks"]) == 1 + len(rec["budgets"]) and r.samples <= 400_000


def test_cli_flag_turns_early_stopping_off_and_the_reproduce_line_keeps_it():
    from dpaudit.cli import build_parser
    from dpaudit.config import resolve_settings
    from dpaudit.reproduce import check_command

    on = resolve_settings(build_parser().parse_args(["check", "m.py", "--epsilon", "1"]))
    off = resolve_settings(build_parser().parse_args(["check", "m.py", "--epsilon", "1",
                                                      "--no-early-stop"]))
    assert on.early_stop and not off.early_stop
    kw = dict(epsilon=1.0, delta=0.0, neighbours="add-remove", domain=dpaudit.Domain(0, 1),
              size=3, seed=1)
    assert "--no-early-stop" in check_command("m.py", early_stop=False, **kw)
    assert "--no-early-stop" not in check_command("m.py", **kw)


@dpaudit.mechanism(epsilon=0.5, neighbours="add-remove", domain=(0, 1), size=1)
def twice(data, rng):
    return float(data.sum()) + rng.laplace(0.0, 1.0)  # claim 0.5, true ε 1 (twice the claim)


def _weakened(monkeypatch, log_wealth):
    """Make the betting look's refutation reach only ``log_wealth`` (a marginal one: its
    family-wise p is (α/α_bet)·e^−log_wealth), the rest of the run as it is."""
    from dataclasses import replace

    from dpaudit.auditing import looks, sampled

    real = looks.betting.look

    def weak(*args, **kwargs):
        out = real(*args, **kwargs)
        ans = out.answers[sampled.LOGIC]
        if ans.bound is not None:
            ans.bound = replace(ans.bound, log_wealth=log_wealth)
        return out

    monkeypatch.setattr(looks.betting, "look", weak)


def test_the_betting_look_refutes_a_gross_violation_plainly_in_hundreds_of_samples():
    # the betting look (dpaudit.auditing.betting) refutes twice the claim after a few hundred
    # samples and bets on until its p-value is not marginal; its bound stays below the true ε
    r = dpaudit.audit(twice, float="off", seed=4)
    looks = r.details["early_stop"]["looks"]
    assert r.verdict is Verdict.REFUTED and len(looks) == 1 and looks[0]["kind"] == "betting"
    assert looks[0]["refuted_at"] <= looks[0]["samples"] == r.samples < 3_000
    assert 0.5 < r.epsilon_lower_bound < 1.0 and r.details["bound_method"] == "betting"
    assert not r.strength.marginal and r.strength.p_value <= 1e-3
    assert r.details["alpha"] == pytest.approx(r.details["early_stop"]["alphas"][0])


@pytest.mark.slow  # its budget (4·10⁶) is what puts a 5,000-sample look next; it draws 10,000
def test_a_marginal_refutation_gets_one_more_look_and_reads_plainly(monkeypatch):
    # a refutation whose family-wise p is above 0.001 read "MARGINAL, confirm with another
    # seed"; it gets one more look, whose samples say it plainly, and the stronger is reported
    _weakened(monkeypatch, math.log(400.0))  # p = 5/400 = 0.0125
    # the look after the betting look is the smallest sampled one: 5,000 samples of 4·10⁶
    r = dpaudit.audit(twice, float="off", seed=4, samples=4_000_000)
    looks = r.details["early_stop"]["looks"]
    assert r.verdict is Verdict.REFUTED and len(looks) == 2 and r.details["early_stop"]["stopped_early"]
    assert 0.5 < looks[0]["epsilon_lb"] < looks[1]["epsilon_lb"] == r.epsilon_lower_bound
    assert not r.strength.marginal and r.strength.p_value < 1e-12
    assert r.samples == sum(x["samples"] for x in looks) < 10_000


def test_a_marginal_refutation_stands_when_the_look_after_it_fails(monkeypatch):
    # the one more look a marginal refutation gets met the mechanism's failure: the run's ERROR
    # dropped the refutation it had made; the logic finding keeps it (the run is the mechanism's
    # ERROR, as a failure at any look makes it: the extra look found the failure)
    from dpaudit.auditing import looks
    from dpaudit.errors import MechanismError

    _weakened(monkeypatch, math.log(400.0))
    real = looks.PointLooks.look

    def look(self, j, budget, confidence, seed, timeout, progress):
        out = real(self, j, budget, confidence, seed, timeout, progress)
        if j == 1:  # the look after the marginal betting look fails before it answers
            out.error, out.answers = MechanismError("failed on purpose", None), {}
        return out

    monkeypatch.setattr(looks.PointLooks, "look", look)
    r = dpaudit.audit(twice, float="off", seed=4)
    logic = r.findings["logic"]
    assert r.verdict is Verdict.ERROR and "failed on purpose" in r.error
    assert logic.verdict is Verdict.REFUTED and logic.epsilon_lower_bound > 0.5
    assert logic.details["bound_method"] == "betting" and logic.strength.marginal


def test_an_approximate_claim_is_refuted_by_the_betting_look_with_its_delta_bound():
    # an (ε, δ) claim 20% too narrow: the betting look refutes it at the claimed ε and bounds δ
    # there too (its δ_LB is above the claimed δ); it went on through the early looks before
    @dpaudit.mechanism(epsilon=1.0, delta=0.1269, neighbours="linf", domain=(0, 1), size=1,
                       float_events=False)
    def gauss(data, rng, size=None):
        return data[0] + rng.normal(0.0, 1 / 1.2, size=size)  # σ 20% too narrow for the claim

    r = dpaudit.audit(gauss, samples=400_000, seed=1)
    rec = r.details["early_stop"]
    assert r.verdict is Verdict.REFUTED and rec["stopped_early"] and len(rec["looks"]) == 1
    assert 1.0 < r.epsilon_lower_bound < 1.41 and r.strength.p_value <= 1e-3
    # the true δ at ε = 1 of the σ = 1/1.2 Gaussian is 0.1805 (δ_μ(ε) with μ = 1.2)
    assert 0.1269 < r.delta_lower_bound < 0.1805
    assert r.samples <= rec["budgets"][0] and r.confidence == 0.95


def _answer(question, eps_lb):
    # a look's answer as PointLooks.settles reads it: counts far from marginal (p ≪ 0.001)
    from types import SimpleNamespace

    from dpaudit.estimators.bounds import Counts

    bound = SimpleNamespace(epsilon_lb=eps_lb, alpha=0.0045, method="marginal")
    choice = SimpleNamespace(split=(0.5, 0.5), method="marginal")
    return SimpleNamespace(question=question, bound=bound, alpha=0.0045, absent=None,
                           candidate=SimpleNamespace(choice=choice), timed_out=False,
                           counts=Counts(1000, 1000, 700, 20))


@pytest.mark.parametrize("float_lb, logic_rides_along", [(0.0, True), (1.3, False)])
def test_the_logic_rides_along_when_the_final_look_runs_anyway(float_lb, logic_rides_along):
    # a weak logic refutation (an (ε, δ) claim: no measured ratio) at the last of two early looks;
    # while the float64 question is unrefuted the final look runs for it, and the logic goes along
    # (its bound may grow there for free); with both refuted, no final look is run
    from types import SimpleNamespace

    from dpaudit.auditing import looks, sampled

    spec = SimpleNamespace(epsilon=1.0, delta=0.1)
    point = looks.PointLooks(spec, None, (sampled.LOGIC, sampled.FLOAT), alpha=0.05, early=2)
    out = SimpleNamespace(error=None, answers={sampled.LOGIC: _answer(sampled.LOGIC, 1.2),
                                               sampled.FLOAT: _answer(sampled.FLOAT, float_lb)})
    ends = point.settles(1, out)
    assert (sampled.LOGIC in point.pending) is logic_rides_along
    assert ends is not logic_rides_along


def test_a_marginal_refutation_never_replaces_a_plain_one_and_a_later_betting_part_always_does():
    # a sampled look's larger but marginal bound replaced the betting look's plain refutation, and
    # the run read MARGINAL; and a betting part that tied its earlier part's bound lost to it,
    # reporting the earlier (smaller) wealth: the strongest refutation is chosen by _stronger
    from types import SimpleNamespace

    from dpaudit.auditing import sampled
    from dpaudit.auditing.looks import _marginal, _stronger  # private: the rule under test
    from dpaudit.estimators.bounds import Counts

    spec = SimpleNamespace(epsilon=1.0, delta=0.0)
    plain = _answer(sampled.LOGIC, 1.2)
    marginal = _answer(sampled.LOGIC, 1.5)
    marginal.counts = Counts(1000, 1000, 70, 20)  # p of about 0.04: marginal
    assert _marginal(marginal, spec, 0.05) and not _marginal(plain, spec, 0.05)
    assert not _stronger(marginal, plain, spec, 0.05)
    assert _stronger(plain, marginal, spec, 0.05)

    def betting(log_wealth):
        bound = SimpleNamespace(epsilon_lb=1.1, alpha=0.01, method="betting", log_wealth=log_wealth)
        return SimpleNamespace(question=sampled.LOGIC, bound=bound, alpha=0.01, counts=plain.counts,
                               candidate=plain.candidate)

    first, second = betting(6.0), betting(9.6)  # the same bound: the later part's wealth counts
    assert _stronger(second, first, spec, 0.05)
