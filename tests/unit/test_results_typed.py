"""Results are frozen, typed values built once: typed details read as the mapping of their record,
derived numbers are methods (``strength.family(k)``), what a command knows goes in through an
``AuditContext``, and the result names its findings (today the one ``"logic"`` finding)."""

from __future__ import annotations

import dataclasses
import json

import pytest

import dpaudit
from dpaudit.claims import Domain, Neighbours, PureDP
from dpaudit.execution.base import Executor, InProcessExecutor
from dpaudit.results import (LOGIC, AuditContext, AuditResult, Counterexample, ExactDetails, Family,
                             FailureDetails, Interval, MechanismFailure, Origin, Power,
                             SampledDetails, Strength, ValidatedEvent, ValidationCounts,
                             ValidationSamples, Verdict)


def _sampled_details() -> SampledDetails:
    counts = ValidationCounts(n_D=10, n_D_prime=12, in_event_D=5, in_event_D_prime=1, both=None,
                              design="independent")
    event = ValidatedEvent(bound_method="marginal", alpha=0.05, pair_label="one above",
                           projected_bound=None, validation=counts, event_thresholds=[0.5],
                           samples=ValidationSamples([0.1], [0.2]))
    return SampledDetails(phases={"patterns": {"pairs": 3}}, timed_out=False,
                          candidates_validated=1, output_kind="real scalar", validated=event)


def test_typed_details_read_as_their_record_in_record_order():
    d = _sampled_details()
    assert list(d) == ["phases", "timed_out", "candidates_validated", "output_kind",
                       "bound_method", "alpha", "pair_label", "projected_bound", "validation",
                       "event_thresholds", "samples"]
    assert d["alpha"] == 0.05 and d["projected_bound"] is None  # a value None is still a key
    assert "early_stop" not in d and "bound_curve" not in d  # an absent optional key is absent
    assert d["validation"]["n_D"] == 10 and d["samples"]["d_prime"] == [0.2]
    assert d.to_record() == {
        "phases": {"patterns": {"pairs": 3}}, "timed_out": False, "candidates_validated": 1,
        "output_kind": "real scalar", "bound_method": "marginal", "alpha": 0.05,
        "pair_label": "one above", "projected_bound": None,
        "validation": {"n_D": 10, "n_D_prime": 12, "in_event_D": 5, "in_event_D_prime": 1,
                       "both": None, "design": "independent"},
        "event_thresholds": [0.5], "samples": {"d": [0.1], "d_prime": [0.2]}}
    assert d == d.to_record()  # compared as a mapping
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.timed_out = True  # type: ignore[misc]


def test_failure_and_exact_details():
    f = FailureDetails(MechanismFailure([0.0, 1.0]))
    assert dict(f) == {"error_dataset": [0.0, 1.0]}
    e = SampledDetails(phases={}, timed_out=True, candidates_validated=0,
                       failure=MechanismFailure(None, "'x'"))
    assert list(e.items())[-2:] == [("error_dataset", None), ("error_output", "'x'")]
    x = ExactDetails(exact_loss=1.0, witness=2.0, pairs_evaluated=3, phases={}, pair_label="p",
                     objective="loss", note="log_prob only")
    assert list(x)[-2:] == ["objective", "note"] and "delta_at_claim" not in x


def test_strength_family_is_the_bonferroni_p_value():
    refuted = Strength(p_value=4e-4, margin=1.5, marginal=False)  # no power: a refutation
    assert refuted.family(1) is refuted
    two = refuted.family(2)
    assert two.p_value == pytest.approx(8e-4) and not two.marginal
    five = refuted.family(5)
    assert five.p_value == pytest.approx(2e-3) and five.marginal  # above 1e-3: marginal now
    not_refuted = Strength(p_value=0.6, margin=0.5, marginal=False, power=Power(0.9, 2.0, None))
    assert not_refuted.family(3).p_value == 1.0 and not not_refuted.family(3).marginal
    assert not refuted.family(5, refuted=False).marginal


def _result(**extra) -> AuditResult:
    cx = Counterexample((0.0, 1.0), (0.0,), {"kind": "threshold", "text": "output > 0.5"}, 0.5, 0.1,
                        Interval(0.4, 0.6), Interval(0.05, 0.15))
    return AuditResult("m.py:f", PureDP(1.0), Neighbours.ADD_REMOVE, Verdict.REFUTED, 1.4, None,
                       0.975, 10_000, cx, "dpaudit check m.py:f", 1.0, seed=3,
                       details=_sampled_details(),
                       strength=Strength(p_value=4e-4, margin=1.4, marginal=False),
                       domain=Domain(0, 1), size=10, **extra)


def test_what_the_command_knows_is_built_into_the_record():
    plain = _result().to_record()
    rec = _result(family=Family(targets=5, confidence=0.9),
                  origin=Origin({"path": "m.py", "line": 3}, "strict"),
                  declared_by="epsilon as reported by the sandboxed code").to_record()
    assert list(rec)[len(plain):] == ["family", "location", "isolation"]
    assert list(rec)[:len(plain)] == list(plain)
    assert rec["family"] == {"targets": 5, "confidence": 0.9, "correction": "bonferroni"}
    assert rec["p_value"] == pytest.approx(2e-3) and rec["marginal"] is True
    assert plain["p_value"] == 4e-4 and plain["marginal"] is False
    assert rec["location"] == {"path": "m.py", "line": 3} and rec["isolation"] == "strict"
    assert list(rec["claim"])[-1] == "declared_by"
    json.dumps(rec, allow_nan=False)


def test_findings_name_the_one_finding():
    r = _result(family=Family(targets=5, confidence=0.9))
    assert list(r.findings) == [LOGIC]
    f = r.findings[LOGIC]
    assert f.verdict is Verdict.REFUTED and f.epsilon_lower_bound == 1.4
    assert f.strength.p_value == pytest.approx(2e-3)  # the strength as the run reads it
    assert f.details is r.details


def test_an_engine_not_listed_writes_its_own_kind_ungraded():
    r = dataclasses.replace(_result(), method="replay")
    rec = r.to_record()
    assert rec["kind"] == r.kind == "replay" and "p_value" not in rec
    assert _result().kind == "audit"


def test_audit_builds_the_context_in():
    calls = []

    def line(own_randomness: bool) -> str:
        calls.append(own_randomness)
        return "dpaudit check m.py:f --seed=1"

    context = AuditContext(reproduce=line, family=Family(2, 0.95),
                           origin=Origin(None, "none (in process)"))
    r = dpaudit.audit(lambda d, rng: float(rng.laplace()), epsilon=1.0, domain=(0, 1), size=2,
                      samples=1000, seed=1, executor=InProcessExecutor(), context=context)
    assert r.reproduce == "dpaudit check m.py:f --seed=1" and calls == [False]
    assert r.family == Family(2, 0.95) and r.origin.isolation == "none (in process)"
    rec = r.to_record()
    assert list(rec)[-4:] == ["details", "family", "location", "isolation"]
    assert rec["location"] is None
    assert isinstance(r.details, SampledDetails) and isinstance(r.strength, Strength)


def test_the_executors_keep_the_protocol():
    from dpaudit.execution.fork import ForkExecutor

    assert isinstance(InProcessExecutor(), Executor)
    assert issubclass(ForkExecutor, Executor)
    assert not isinstance(object(), Executor)
