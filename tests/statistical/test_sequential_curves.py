"""Curve audits that stop early (dpaudit.curves.audit with the looks of dpaudit.auditing.schedule):
sound under the stopping rule, and refuting a wrong claim at an early look.

α of the soundness test: each audit of a correct mechanism at 95% confidence refutes it with
probability at most 0.05 under the stopping rule (Bonferroni over the looks: docs/math.md,
"Sequential audits"), so among 20 independent seeded audits the number of refutations is
stochastically at most Bin(20, 0.05), and P(Bin(20, 0.05) > 3) = 0.0159: a sound auditor fails
it with probability below 1.6%. Fixed seeds, no retries. The 100-audit version of both tests
(limit 10, α = 0.0115) runs in ``benchmarks/size_and_power.py``, which imports them from here. The mechanism is the Gaussian mechanism
with σ = 1 against its own exact curve (1-GDP), tight at every ε; the budget (400,000) gives
three early looks (2,000, 8,000 and 32,000 samples) before the final one.

The test can fail: the same audits with a schedule that spends no α (every look at the full α/2
one-sided level 0.5, i.e. bounds without confidence) are refuted more than 10 times in the
benchmark's 100 (``sequential_curves.naive``), but only 3 times in these 20, too few to show here;
the spending itself, the looks' α and the final α adding up to the audit's α, is checked on every
audit of ``test_a_wrong_gdp_claim_is_refuted_at_an_early_look_and_says_where``.
"""

import pytest

from dpaudit.auditing.schedule import Schedule, schedule
from dpaudit.curves import audit as engine
from dpaudit.curves import curve_audit
from dpaudit.estimators.limits import curve_limits

pytestmark = [pytest.mark.statistical, pytest.mark.slow]

LIMIT = 3
SEEDS = range(2000, 2020)
SAMPLES = 400_000


def gauss(data, rng, size=None):
    """Exactly 1-GDP on linf neighbours of size 1 (sensitivity 1, σ = 1)."""
    return data[0] + rng.normal(0.0, 1.0, size=size)


def too_narrow(data, rng, size=None):
    """μ = 1.25 (σ = 0.8): a 1-GDP claim is false."""
    return data[0] + rng.normal(0.0, 0.8, size=size)


def refutations(f=gauss, seeds=SEEDS) -> tuple[int, int]:
    """(refuted audits, audits that stopped at an early look) among the seeded audits."""
    refuted = early = 0
    for s in seeds:
        r = curve_audit(f, mu=1.0, neighbours="linf", domain=(0, 1), size=1, samples=SAMPLES,
                        confidence=0.95, seed=s)
        assert r.error is None
        seq = r.details["sequential"]
        assert seq is not None and len(seq["budgets"]) == 3
        refuted += r.refuted
        early += seq["stopped_early"]
    return refuted, early


def test_correct_gaussian_refuted_at_most_3_of_20_with_early_stopping():
    refuted, early = refutations()
    assert refuted <= LIMIT
    assert early == refuted  # a correct claim stops early only by a (false) refutation


def break_schedule(monkeypatch) -> None:
    def naive(budget, confidence):  # BROKEN: every look at level 0.5, no confidence at all
        s = schedule(budget, confidence)
        return Schedule(s.budget, 0.05, s.budgets, (0.5,) * len(s.budgets), 0.5)

    monkeypatch.setattr(engine, "schedule", naive)


@pytest.mark.parametrize("seed", range(5))
def test_a_wrong_gdp_claim_is_refuted_at_an_early_look_and_says_where(seed):
    r = curve_audit(too_narrow, mu=1.0, neighbours="linf", domain=(0, 1), size=1, seed=seed)
    seq = r.details["sequential"]
    assert r.refuted and seq["stopped_early"] and r.samples <= 100_000 < 4_000_000
    assert r.samples == sum(look["samples"] for look in seq["looks"])
    assert sum(seq["alphas"]) + seq["final_alpha"] == pytest.approx(0.05)
    focus = r.details["focus"]
    assert focus["basis"].startswith("selection") and 0 <= focus["epsilon"] <= max(r.epsilons)
    assert r.mu_lower_bound > 1.0
    lim = r.to_record()["limits"]  # the band's own: n per dataset at its per-bound level
    exact = curve_limits(r.details["validation"]["n_D"], r.details["level"])
    assert lim["epsilon_ceiling"] == pytest.approx(exact.epsilon_ceiling) and lim["epsilon_ceiling"] > 3.0
    assert lim["delta_floor"] == pytest.approx(exact.delta_floor) and 0 < lim["delta_floor"] < 0.05


def test_zcdp_focus_names_the_renyi_order():
    r = curve_audit(too_narrow, rho=0.5, neighbours="linf", domain=(0, 1), size=1, seed=1,
                    samples=400_000)
    assert r.details["focus"]["renyi_order"] >= 1.0


def test_no_early_stop_is_one_look_and_is_rerun_as_such():
    r = curve_audit(gauss, mu=1.0, neighbours="linf", domain=(0, 1), size=1, samples=100_000,
                    seed=3, early_stop=False)
    assert r.details.get("sequential") is None and "early_stop=False" in r.reproduce
    assert r.samples > 99_000 and r.to_record()["refutable"]["text"].count("cannot show ε above") == 1
