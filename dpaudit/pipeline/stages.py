"""The stages of a check, behind one small protocol, and the state they share.

A stage is an object with a ``name`` and ``run(run)``: it reads what it needs from the
:class:`Run` (the opened target, the settings, the spec, what earlier stages found) and leaves
its outcome in ``run.outcomes[name]``. An *engine* is the stage that gives the target its
verdict, and says when it is the one to run (``wanted(settings, target)``) and which flags
replay it (``flags(run)``, for :func:`dpaudit.reproduce.check_line`). Engines live in their own
folders (:mod:`dpaudit.curves.stage`, :mod:`dpaudit.sensitivity.stage`,
:mod:`dpaudit.replay.stage`) and are named in :data:`dpaudit.pipeline.plan.ENGINES`; the sampled
audit, the default, is here, with the two halves of the fresh-process check
(:mod:`dpaudit.execution.honesty`) that surround it, and the two engines only in-memory targets
ask for (:class:`~dpaudit.pipeline.target.SpecTarget`: the pytest fixture's mechanism, an audit
of the suite): the exact audit and the curve audit that keeps its result object.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Protocol, runtime_checkable

__all__ = ["Run", "Stage", "Engine", "SampledAudit", "ExactAudit", "InMemoryCurve", "FreshStart",
           "FreshVerdict", "SLOW_FIRST_CALL", "family", "claim_of", "outcome_record", "handed"]

#: A first call at least this slow (seconds) times the audit's estimate by itself.
SLOW_FIRST_CALL = 0.05


@runtime_checkable
class Stage(Protocol):
    """One step of a check: ``run`` leaves its outcome in ``run.outcomes[self.name]``."""

    name: str

    def run(self, run: "Run") -> None: ...


@runtime_checkable
class Engine(Stage, Protocol):
    """The stage that gives a target its verdict. Its outcome is a record (a dict) or a result
    with ``to_record()``."""

    @classmethod
    def wanted(cls, settings: Any, target: Any) -> bool: ...

    def flags(self, run: "Run") -> list[str]: ...


@dataclass
class Run:
    """What the stages of one target share while it is checked. ``partial`` is what a stop by
    signal writes (the name, the claim, the stage under way, the stages finished)."""

    target: Any
    settings: Any
    progress: Any
    deadline: Optional[float] = None
    cluster: Any = None
    partial: dict = field(default_factory=dict)
    spec: Any = None
    #: the confidence this target is audited at, and the targets sharing the run's (Bonferroni)
    confidence: float = 0.95
    family: Any = None
    outcomes: dict = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)
    #: the mechanism's failure, once a stage before the engine met it (the fresh-process check's
    #: first calls): the stages after it make no calls, and the engine reports it
    failure: Any = None

    def left(self) -> Optional[float]:
        """Seconds left of the run's time limit (at least a millisecond), None without one."""
        return None if self.deadline is None else max(0.001, self.deadline - time.monotonic())

    def begin(self, stage: str) -> None:
        self.partial["under_way"] = stage

    def finished(self, stage: str, verdict: Any = None) -> None:
        said = f" ({str(verdict).replace('_', ' ').upper()})" if verdict else ""
        self.partial.setdefault("stages", []).append(f"{stage}{said}")


def claim_of(spec: Any) -> dict:
    """The claim of a spec as an ``audit`` record writes it."""
    return {"epsilon": float(spec.epsilon), "delta": float(spec.delta),
            "neighbours": spec.neighbours.value,
            "domain": [float(spec.domain.lo), float(spec.domain.hi)], "size": int(spec.size)}


class FreshStart:
    """The fresh-process check's first calls (:mod:`dpaudit.execution.honesty`): on D in the
    audit's own child, before any other call, then D in an extra child and, only if the two agree
    beyond chance, D′ in another, while the audit runs. D and D′ are the relation's first
    structured pair whose sums and means differ. A slow first call times the audit: its estimate
    (with the replay stage's calls) is shown now."""

    name = "fresh processes"

    def run(self, run: Run) -> None:
        from dpaudit.auditing.estimate import estimate_event
        from dpaudit.execution.honesty import fresh_pair
        from dpaudit.neighbours.registry import relation
        from dpaudit.spec import CallForm

        fresh, spec = run.target.fresh, run.spec
        budget = run.outcomes["budget"]
        slow = SLOW_FIRST_CALL if spec.call_form is not CallForm.BATCH else float("inf")

        def timed(per_call: float) -> None:
            if per_call >= slow:
                run.progress(_sized_by_default(
                    _with_replay_calls(estimate_event(spec, per_call, budget), per_call, run.settings),
                    budget, run.settings))
            run.partial["seconds_per_call"] = per_call

        try:
            pair = fresh_pair(relation(spec.neighbours).patterns(spec.domain, spec.size))
        except Exception:  # noqa: BLE001 - a relation without patterns: no check, the audit runs
            run.outcomes[self.name] = None
            return
        fresh.first_calls(spec, run.target.executor, pair, run.settings.seed, timed,
                          deadline=run.deadline)
        run.failure = fresh.failure
        per_call = fresh.seconds_per_call
        run.outcomes[self.name] = per_call if per_call is not None and per_call >= slow else None


def _sized_by_default(event: dict, budget: int, settings: Any) -> dict:
    """The estimate event, saying first that the audit will draw fewer calls when neither
    ``--samples`` nor ``--timeout`` is given and the default budget would take longer than
    :data:`dpaudit.auditor.DEFAULT_FIT_SECONDS` (:func:`dpaudit.auditor.default_fit`)."""
    from dpaudit.auditor import default_fit, with_fit_hint

    fit = default_fit(budget, event) if settings.sizes_by_default else None
    return event if fit is None else with_fit_hint(event, fit)


def _with_replay_calls(event: dict, per_call: float, settings: Any) -> dict:
    """The time estimate of a sampled audit with its replay stage's calls added (at most
    :data:`dpaudit.replay.search.BUDGET`, before the sampling; none with ``--no-replay``)."""
    if not settings.replay_stage:
        return event
    from dpaudit.replay.search import BUDGET

    out = dict(event)
    out["replay_calls"] = BUDGET
    out["calls"] = int(out.get("calls") or 0) + BUDGET
    if isinstance(out.get("estimated_seconds"), (int, float)):
        out["estimated_seconds"] = float(out["estimated_seconds"]) + BUDGET * per_call
    return out


class FreshVerdict:
    """The fresh-process check's answer, waited for (until the time limit at most: the check then
    says nothing): :class:`~dpaudit.execution.honesty.FixedNoise` or None."""

    name = "fresh verdict"

    def run(self, run: Run) -> None:
        fresh = run.target.fresh
        wait = fresh.wait_seconds(run.settings.call_timeout)
        if run.deadline is not None:
            wait = min(wait, max(0.0, run.deadline - time.monotonic()))
        run.outcomes[self.name] = fresh.result(timeout=wait)


class SampledAudit:
    """The sampled audit (:func:`dpaudit.audit`): the default engine, on the sandbox child (or
    Dask, or in process), with what the check knows handed in as its
    :class:`~dpaudit.results.AuditContext`. An in-memory target
    (:class:`~dpaudit.pipeline.target.SpecTarget`) is audited with its own keywords, and with
    the context only where a ``dpaudit check`` line reruns it."""

    name = "sampling"

    @classmethod
    def wanted(cls, settings: Any, target: Any) -> bool:
        return True

    def flags(self, run: Run) -> list[str]:
        return run.target.claim_flags(run.spec)

    def reproduce(self, run: Run, own_randomness: bool = False,
                  samples: Optional[int] = None, cut: bool = False) -> str:
        """The check line that reruns this audit; ``samples``: the budget the auditor fitted
        to the time limit, in place of the run's; ``cut``: the time limit cut the audit short
        (the line then carries ``--timeout``)."""
        from dpaudit.reproduce import check_line

        s = run.settings
        return check_line(run.target.name, self.flags(run), seed=s.seed,
                          samples=samples or run.outcomes["budget"], confidence=run.confidence,
                          in_process=run.target.in_process_flag,
                          call_timeout=s.call_timeout, memory=s.memory,
                          own_randomness=own_randomness, early_stop=s.early_stop,
                          float_policy=run.spec.float_policy, replay_stage=s.replay_stage,
                          timeout=s.timeout if cut else None, settings=s)

    def run(self, run: Run) -> None:
        import dpaudit.auditor
        from dpaudit.auditor import DEFAULT_FIT_SECONDS
        from dpaudit.errors import MechanismError
        from dpaudit.report.model import location
        from dpaudit.results import AuditContext, Origin, error_record

        s, spec = run.settings, run.spec
        run.begin("sampling")
        origin = Origin(location(spec.source), run.target.isolation)
        context = AuditContext(reproduce=lambda own=False, n=None, cut=False:
                               self.reproduce(run, own, n, cut),
                               family=run.family, origin=origin, time_limit=s.timeout,
                               seconds_per_call=run.outcomes.get(FreshStart.name),
                               failure=run.failure, started=run.started,
                               fit_within=DEFAULT_FIT_SECONDS if s.sizes_by_default else None)
        keywords = getattr(run.target, "keywords", None)  # the rerun line is in run.partial already
        try:
            if keywords is not None:  # an in-memory target (SpecTarget): its own keywords
                run.outcomes[self.name] = dpaudit.auditor.audit(
                    handed(run), seed=s.seed, **keywords,
                    **({"context": context} if run.target.rerunnable else {}))
                return
            run.outcomes[self.name] = dpaudit.auditor.audit(
                spec, samples=s.samples, confidence=run.confidence, seed=s.seed,
                executor=run.target.executor or run.cluster, progress=_kept(run),
                timeout=run.left(), early_stop=s.early_stop, context=context)
        except MechanismError as exc:  # the auditor should have made it an ERROR verdict
            run.outcomes[self.name] = error_record(
                "audit", run.target.name, str(exc), reproduce=self.reproduce(run),
                elapsed_s=time.monotonic() - run.started, location=origin.location,
                isolation=run.target.isolation)


def _kept(run: Run) -> Callable[[Any], None]:
    """The run's progress, keeping in ``run.partial["sampling"]`` what a stop by signal must not
    lose: the samples drawn so far and each early look's line once it is finished (its bound
    holds at its own α on its own samples, :mod:`dpaudit.auditing.looks`)."""
    kept = run.partial.setdefault("sampling", {"samples": 0, "looks": []})

    def report(event: Any) -> None:
        if isinstance(event, Mapping):
            if event.get("phase") == "estimate" and isinstance(event.get("budget"), int):
                event = _sized_by_default(dict(event), event["budget"], run.settings)
            if isinstance(event.get("samples"), int):
                kept["samples"] = max(kept["samples"], event["samples"])
            if isinstance(event.get("look_done"), Mapping):
                kept["looks"].append(dict(event["look_done"]))
        run.progress(event)

    return report


def handed(run: Run) -> Any:
    """What an in-memory target's engine is given: the target's mechanism as it was given (the
    suite's target, with its claim fields among the keywords), else the run's spec (a spec
    given, or built from a function; the replay stage may have added pairs to it)."""
    from dpaudit.spec import MechanismSpec

    given = run.target.mechanism
    return run.spec if given is None or isinstance(given, MechanismSpec) else given


class ExactAudit:
    """The exact audit (:func:`dpaudit.exact_audit`): the exact privacy loss of a spec with its
    output law over searched pairs, for an in-memory target that asks for it (the pytest
    fixture's ``exact=True``, the suite's ``exact(...)``), with the target's keywords; its
    reproduce line is the engine's own (``dpaudit check`` has no exact audit)."""

    name = "exact"

    @classmethod
    def wanted(cls, settings: Any, target: Any) -> bool:
        return bool(getattr(target, "exact", False))

    def flags(self, run: Run) -> list[str]:
        return run.target.claim_flags(run.spec)

    def run(self, run: Run) -> None:
        import dpaudit.auditor

        run.begin("exact")
        run.outcomes[self.name] = dpaudit.auditor.exact_audit(
            handed(run), seed=run.settings.seed, **run.target.keywords)


#: claim fields the curve audit does not take (it asks the logic question only)
_NOT_CURVE = ("float", "float_events", "rho", "mu", "renyi", "profile")


class InMemoryCurve:
    """The curve audit (:func:`dpaudit.curve_audit`) of an in-memory target whose claim is a
    curve (the pytest fixture's): its outcome is the :class:`~dpaudit.curves.CurveResult`
    itself, with the engine's own reproduce line (the fixture returns it), and the target's
    keywords (``samples=``, ``grid=``, ``band=``, ...) go to the engine. A file or library
    target's curve claim is :mod:`dpaudit.curves.stage`'s."""

    name = "curve"

    @classmethod
    def wanted(cls, settings: Any, target: Any) -> bool:
        return getattr(target, "keywords", None) is not None and bool(target.curve)

    def flags(self, run: Run) -> list[str]:
        return run.target.claim_flags(run.spec, point=False)

    def run(self, run: Run) -> None:
        from dpaudit.curves import curve_audit

        run.begin("curve")
        target = run.target
        claim = {k: v for k, v in target.overrides.items() if k not in _NOT_CURVE}
        given = target.func if target.mechanism is None else target.mechanism
        run.outcomes[self.name] = curve_audit(given, **target.curve, seed=run.settings.seed,
                                              **claim, **target.keywords)


def family(settings: Any, targets: Optional[int] = None) -> Any:
    """The targets sharing the run's family-wise confidence (Bonferroni), when there are several:
    each is audited at 1 − (1 − confidence)/targets, and its p-value for the run is
    :meth:`dpaudit.results.Strength.family` (the smallest run-level 1 − confidence at which it is
    refuted)."""
    from dpaudit.results import Family

    count = settings.family if targets is None else targets
    if count < 2:
        return None
    return Family(targets=count, confidence=settings.confidence)


def outcome_record(outcome: Any) -> Mapping[str, Any]:
    """An engine's outcome as a record: a record already, or its result's ``to_record()``."""
    return outcome if isinstance(outcome, Mapping) else outcome.to_record()
