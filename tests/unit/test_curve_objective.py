"""The curve audit as an objective of the sampled core (dpaudit.auditing.core, dpaudit.auditing.looks):
one group-sequential driver for the point ε and the curve gap, one look state and pair search.

The driver tests use a stub objective (no sampling). The curve audits are seeded and deterministic;
their sample counts are pinned to what the curve audit gave before it ran on the shared core (the
refactor changed no number), so an accidental change to the shared machinery shows here."""

import pytest

from dpaudit.auditing import core, looks
from dpaudit.auditing.schedule import schedule
from dpaudit.curves import audit as engine  # private: _Run, to show the curve audit subclasses the shared core
from dpaudit.curves import curve_audit

GAUSS = dict(neighbours="linf", domain=(0, 1), size=1)


def too_narrow(data, rng, size=None):
    """μ = 1.25 (σ = 0.8): a 1-GDP claim is false."""
    return data[0] + rng.normal(0.0, 0.8, size=size)


class _Result:
    def __init__(self, samples: int, error=None) -> None:
        self.samples, self.error = samples, error


class _Stub:
    """An objective that settles at look ``stop`` (0-based early look; None: never)."""

    def __init__(self, stop=None) -> None:
        self.stop, self.calls, self.seen = stop, [], []

    def look(self, j, budget, confidence, seed, timeout, progress):
        self.calls.append((j, budget, confidence, seed))
        return _Result(budget - 2)

    def settles(self, j, result):
        self.seen.append(j)
        return j == self.stop

    def entry(self, number, budget, result, alpha):
        return {"look": number, "budget": budget, "samples": result.samples, "alpha": alpha}


def test_the_driver_spends_alpha_over_the_looks_and_ends_on_the_root_seed():
    plan = schedule(400_000, 0.95)
    stub = _Stub()
    run = looks.drive(stub, plan, budget=400_000, confidence=0.95, seed=5)
    early = [(j, n, pytest.approx(1 - a), looks.look_seed(5, j))
             for j, (n, a) in enumerate(zip(plan.budgets, plan.alphas))]
    assert stub.calls[:-1] == early
    j, rest, conf, seed = stub.calls[-1]  # the final look: the rest of the budget and of α, root seed
    assert (j, seed) == (-1, 5) and rest == 400_000 - sum(n - 2 for n in plan.budgets)
    assert conf == pytest.approx(1 - plan.final_alpha)
    assert run.samples == sum(n - 2 for _, n, _, _ in stub.calls) and not run.early
    rec = run.record
    assert rec["stopped_at_look"] == len(rec["looks"]) == plan.looks and not rec["stopped_early"]
    assert sum(look["alpha"] for look in rec["looks"]) == pytest.approx(0.05)


def test_the_driver_stops_at_the_look_that_settles_and_a_plain_run_is_one_look():
    stub = _Stub(stop=1)
    run = looks.drive(stub, schedule(400_000, 0.95), budget=400_000, confidence=0.95, seed=5)
    assert [c[0] for c in stub.calls] == [0, 1] and run.early and run.record["stopped_at_look"] == 2
    plain = _Stub()
    run = looks.drive(plain, None, budget=10_000, confidence=0.9, seed=5)
    assert plain.calls == [(-1, 10_000, 0.9, 5)] and run.record is None and run.samples == 9_998


def test_the_curve_audit_runs_on_the_shared_core():
    assert issubclass(engine._Run, core.Core) and engine.search_pairs is core.search_pairs
    assert engine.drive is looks.drive and engine.SEARCH_SHARE == core.SEARCH_SHARE
    for name in ("look", "settles", "entry"):
        assert callable(getattr(engine.CurveObjective, name))


@pytest.mark.parametrize("seed, samples, looks_run", [(0, 4_998, 1), (1, 24_996, 2), (4, 4_998, 1)])
def test_a_wrong_gdp_claim_stops_where_it_did_before_the_shared_core(seed, samples, looks_run):
    r = curve_audit(too_narrow, mu=1.0, **GAUSS, seed=seed)
    seq = r.details["sequential"]
    assert r.refuted and seq["stopped_early"] and r.samples == samples
    assert seq["stopped_at_look"] == len(seq["looks"]) == looks_run
    assert r.samples == sum(look["samples"] for look in seq["looks"])
    assert seq["early_thresholds"] == engine.EARLY_THRESHOLDS
    assert [look["thresholds"] for look in seq["looks"]] == [engine.EARLY_THRESHOLDS] * looks_run


def test_the_curve_objective_scores_more_samples_per_pair_than_the_point_objective():
    r = curve_audit(too_narrow, mu=1.0, **GAUSS, samples=20_000, seed=7)
    per_pair = r.details["phases"]["patterns"]["samples_per_pair"]
    assert engine.MIN_SCORE_SAMPLES <= per_pair <= engine.MAX_SCORE_SAMPLES
    assert engine._Run.min_score == engine.MIN_SCORE_SAMPLES > core.Core.min_score
