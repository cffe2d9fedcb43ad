"""Early stopping (dpaudit.auditing.schedule, dpaudit.auditing.looks): the look schedule,
the record of the stopping rule, and the flag that turns it off."""

import math

import pytest

import dpaudit
from dpaudit.errors import InvalidArgument
from dpaudit.auditing.schedule import LOOK_FRACTIONS, MIN_LOOK, SPEND, schedule
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
    a = dpaudit.audit(f, samples=24_000, seed=11).to_record()
    b = dpaudit.audit(f, samples=24_000, seed=11, early_stop=False).to_record()
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


@pytest.mark.parametrize("seed", [4, 6])
def test_a_marginal_refutation_gets_one_more_look_and_reads_plainly(seed):
    # claim 0.5, true ε 1 (twice the claim): these seeds' first look refuted with a family-wise
    # p of 0.0025 and 0.0041 and stopped there, the verdict reading "MARGINAL, confirm with
    # another seed"; one more look (a few thousand samples) gives p < 1e-20 on the same run
    @dpaudit.mechanism(epsilon=0.5, neighbours="add-remove", domain=(0, 1), size=1)
    def twice(data, rng):
        return float(data.sum()) + rng.laplace(0.0, 1.0)

    r = dpaudit.audit(twice, float="off", seed=seed)
    looks = r.details["early_stop"]["looks"]
    assert r.verdict is Verdict.REFUTED and len(looks) == 2 and r.details["early_stop"]["stopped_early"]
    assert 0.5 < looks[0]["epsilon_lb"] < looks[1]["epsilon_lb"] == r.epsilon_lower_bound
    assert not r.strength.marginal and r.strength.p_value < 1e-20
    assert r.samples == sum(x["samples"] for x in looks) < 12_000


def test_a_marginal_refutation_stands_when_the_look_after_it_fails(monkeypatch):
    # the one more look a marginal refutation gets met the mechanism's failure: the run's ERROR
    # dropped the refutation it had made; the logic finding keeps it (the run is the mechanism's
    # ERROR, as a failure at any look makes it: the extra look found the failure)
    from dpaudit.auditing import looks
    from dpaudit.errors import MechanismError

    @dpaudit.mechanism(epsilon=0.5, neighbours="add-remove", domain=(0, 1), size=1)
    def twice(data, rng):
        return float(data.sum()) + rng.laplace(0.0, 1.0)

    real = looks.PointLooks.look

    def look(self, j, budget, confidence, seed, timeout, progress):
        out = real(self, j, budget, confidence, seed, timeout, progress)
        if j == 1:  # the look after seed 4's marginal first look fails before it answers
            out.error, out.answers = MechanismError("failed on purpose", None), {}
        return out

    monkeypatch.setattr(looks.PointLooks, "look", look)
    r = dpaudit.audit(twice, float="off", seed=4)
    logic = r.findings["logic"]
    assert r.verdict is Verdict.ERROR and "failed on purpose" in r.error
    assert logic.verdict is Verdict.REFUTED and logic.epsilon_lower_bound > 0.5


def test_a_refutation_that_no_early_look_settles_skips_the_final_look():
    # an (ε, δ) claim never settles on a measured ratio (its ε lives near δ), and this one is
    # refuted below ε = 5 at the last early look (ε ≥ 1.21 of a true 1.41, family-wise p near
    # 1e-12, far from the marginal 0.001 on any machine): it looked on through the final look,
    # all 400,000 samples; it ends at the early looks now
    @dpaudit.mechanism(epsilon=1.0, delta=0.1269, neighbours="linf", domain=(0, 1), size=1,
                       float_events=False)
    def gauss(data, rng, size=None):
        return data[0] + rng.normal(0.0, 1 / 1.2, size=size)  # σ 20% too narrow for the claim

    r = dpaudit.audit(gauss, samples=400_000, seed=1)
    rec = r.details["early_stop"]
    refuting = [x["epsilon_lb"] for x in rec["looks"] if x["epsilon_lb"] > 1.0]
    assert r.verdict is Verdict.REFUTED and rec["stopped_early"]
    assert len(rec["looks"]) == len(rec["budgets"]) and r.samples <= sum(rec["budgets"]) + 1_000
    assert refuting and r.epsilon_lower_bound == max(refuting) < 1.41 and r.strength.p_value < 1e-6
    assert r.confidence == 0.95 and r.details["alpha"] <= 0.05


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
