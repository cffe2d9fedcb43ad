"""The result of one check: the verdict over its stages, decided once, into a frozen result.

:func:`decide` reads the stages' outcomes (the engine's result or record; around a sampled audit,
the fresh-process check's answer and the replay stage's record) and builds the
:class:`CheckResult`; nothing patches its record afterwards. The rules, in order:

1. noise fixed at import (:mod:`dpaudit.execution.honesty`) refutes the logic with ε = ∞ (a new
   :class:`~dpaudit.results.AuditResult` whose logic finding is the fixed noise; the float64
   finding stands as found; an ERROR stays: the mechanism failed);
2. the replay stage then decides where its evidence is stronger
   (:func:`dpaudit.replay.stage.verdict_of_stage`); its record is kept under ``"replay"``;
3. the record names the settings a trusted pyproject.toml gave (``settings_from``) and a float
   policy the mechanism's own declaration relaxed (``float_policy_from``), and every string in it
   is made one line (:func:`dpaudit.pipeline.target.clean_record`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Mapping, Optional

from dpaudit.pipeline.target import clean_record
from dpaudit.results import Verdict, error_record

__all__ = ["CheckResult", "decide", "failed"]


@dataclass(frozen=True)
class CheckResult:
    """One target's check: ``kind``, ``verdict``, ``target`` and ``reproduce`` as its record has
    them, ``result`` the engine's own result object when it gave one (an
    :class:`~dpaudit.results.AuditResult`, a :class:`~dpaudit.curves.CurveResult`, …),
    ``stages`` the stages that ran, and :meth:`to_record` the record every report renders."""

    record: Mapping[str, Any]
    result: Any = None
    stages: tuple[str, ...] = ()

    @property
    def kind(self) -> str:
        return str(self.record.get("kind"))

    @property
    def verdict(self) -> Verdict:
        return Verdict(self.record.get("verdict"))

    @property
    def target(self) -> str:
        return str(self.record.get("target"))

    @property
    def reproduce(self) -> str:
        return str(self.record.get("reproduce") or "")

    def to_record(self) -> dict:
        """The record (a fresh copy: a reader may change its own)."""
        import copy

        return copy.deepcopy(dict(self.record))


def failed(target: str, message: str, reproduce: str = "", **extra: Any) -> CheckResult:
    """The result of a target that could not be checked (an ``audit`` ERROR record)."""
    rec = error_record("audit", target, message, reproduce=reproduce, **extra)
    return CheckResult(record=MappingProxyType(clean_record(rec)))


def decide(outcomes: Mapping[str, Any], engine: str, settings: Any, given: str,
           spec: Any = None, stages: tuple = (), library: Optional[Mapping] = None,
           computed: Optional[Mapping] = None) -> CheckResult:
    """The :class:`CheckResult` of a target from its stages' ``outcomes`` (rules in the module
    docstring); ``engine`` names the outcome that gives the verdict; a library target's record names its
    ``library``; ``computed`` the claim fields its source computed with OpenDP's map, recomputed
    (``claim_computed``: :mod:`dpaudit.execution.computed_claims`)."""
    outcome = outcomes[engine]
    result = None if isinstance(outcome, Mapping) else outcome
    fixed = outcomes.get("fresh verdict")
    if fixed is not None and result is not None and spec is not None:
        result = _fixed_noise(result, fixed, spec, settings)
    record = dict(outcome) if result is None else result.to_record()
    stage = outcomes.get("replay stage")
    if stage is not None:
        from dpaudit.replay.stage import verdict_of_stage

        said = verdict_of_stage(record, stage)
        record = {**record, "replay": stage, **(said or {})}
    if computed:
        record = {**record, "claim_computed": dict(computed)}
    if library:  # a library target: name, version, its claim (as the suite's records)
        record = {**record, "library": dict(library)}
    else:
        record = _provenance(record, settings, given)
    return CheckResult(record=MappingProxyType(clean_record(record)), result=result,
                       stages=tuple(stages))


def _provenance(record: dict, settings: Any, given: str) -> dict:
    """``record`` with ``settings_from``: the settings of its target taken from the pyproject.toml
    with ``--trust-config`` (:func:`dpaudit.config.settings_from_file`), which the verdict line,
    the reproduce line and the reports name as the file's (:mod:`dpaudit.report.provenance`); and
    ``float_policy_from: "declaration"`` when the audited code's own decorator relaxed the float
    policy, so the line does not read ``--float off`` as if the user had passed it."""
    from dpaudit.config import settings_from_file

    taken = {} if not settings.trusted or not settings.config_path else \
        settings_from_file(settings, given, str(record.get("target") or ""))
    if record.get("float_policy") in ("off", "warn") and "float" not in taken \
            and settings.origin.get("float") != "flag" and not settings.claim_for(given).get("float"):
        # neither a flag nor the file: the mechanism's own declaration chose it
        record = {**record, "float_policy_from": "declaration"}
    if not taken:
        return record
    return {**record, "settings_from": {"file": os.path.relpath(settings.config_path),
                                        "settings": taken}}


def _fixed_noise(result: Any, found: Any, spec: Any, settings: Any) -> Any:
    """``result``, or a REFUTED one (ε = ∞) when the noise is the same in every fresh process and
    the first releases on D and D′ differ (an ERROR stays: the mechanism failed)."""
    from dpaudit.execution.honesty import ALPHA
    from dpaudit.results import (FLOAT, LOGIC, AuditResult, Counterexample, Finding,
                                 FixedNoiseDetails, FixedNoiseFacts, Interval)

    if getattr(result, "verdict", None) is Verdict.ERROR or not isinstance(result, AuditResult):
        return result
    event = {"kind": "fixed-noise", "text": found.reason, "atoms": [found.first]}
    cx = Counterexample(found.dataset, found.neighbour, event, 1.0, 0.0, Interval(1.0, 1.0),
                        Interval(0.0, 0.0))
    details = FixedNoiseDetails(FixedNoiseFacts(
        first_on_D=found.first, first_on_D_prime=found.first_neighbour,
        agreements=found.agreements, calls=found.calls, p=found.p, alpha=ALPHA))
    # noise fixed at import is the logic's failure (no randomness at all); the float64 finding of
    # the audit stands as it was found
    delta_lb: Optional[float] = 1.0 if spec.delta else None
    logic = Finding(verdict=Verdict.REFUTED, epsilon_lower_bound=float("inf"),
                    delta_lower_bound=delta_lb, counterexample=cx, strength=None,
                    details=details, question=LOGIC, alpha=ALPHA, samples=3 * found.calls)
    answers = {**dict(result.answers or {}), LOGIC: logic}
    return AuditResult(target=result.target, claim=spec.claim, neighbours=spec.neighbours,
                       verdict=Verdict.REFUTED, epsilon_lower_bound=float("inf"),
                       delta_lower_bound=delta_lb, confidence=result.confidence,
                       samples=3 * found.calls, counterexample=cx, reproduce=result.reproduce,
                       elapsed_s=result.elapsed_s or 0.0, seed=settings.seed, details=details,
                       reproducible=result.reproducible, domain=spec.domain, size=spec.size,
                       family=result.family, origin=result.origin, declared_by=result.declared_by,
                       answers={q: answers[q] for q in (LOGIC, FLOAT) if q in answers},
                       float_policy=result.float_policy, decided_by=LOGIC)
