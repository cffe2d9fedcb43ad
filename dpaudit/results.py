"""Verdicts and frozen results, and their canonical JSON records.

Three kinds of evidence are never confused (docs/ARCHITECTURE.md#kinds-of-evidence): sampling and search can only REFUTE or
fail to refute; only a proof PROVES; a solver that gives up is INCONCLUSIVE, never a pass.

Every result type in dpaudit (sampled or exact audit here, ``SensitivityResult`` in
``dpaudit.sensitivity``, ``FormalResult`` in ``dpaudit.formal``) has ``to_record() -> dict``, a
JSON-ready dict with at least the common keys

``kind`` (``"audit"`` | ``"exact"`` | ``"sensitivity"`` | ``"formal"``, or a kind another package
registers, :mod:`dpaudit.report.kinds`), ``target``, ``verdict``
(a :class:`Verdict` value), ``elapsed_s``, ``reproduce`` (a command line or Python snippet, may be
``""``), ``error`` (message or ``None``),

plus its kind's own keys (for ``audit``: the canonical ``claim``, ``epsilon_lower_bound``,
``delta_lower_bound``, ``confidence``, ``samples``, ``counterexample``).

A result is built once, whole, by the layer that knows it, and never patched afterwards: the
engine fills its typed details (:class:`SampledDetails`, :class:`ExactDetails`,
:class:`FailureDetails`, :class:`FixedNoiseDetails`, each field documented where it is declared),
the command that asked for the audit hands in what only it knows (:class:`AuditContext`), and
derived numbers are methods (the family-wise p-value is :meth:`Strength.family`). A result names
its findings (:attr:`AuditResult.findings`, today the one :data:`LOGIC` finding) and its evidence
engine (:data:`ENGINES`). Reports (JSON, HTML,
JUnit, SARIF, Markdown) are rendered from these records only, each asking the record's kind
(:func:`dpaudit.report.kinds.kind_of`) for its wording. :func:`error_record` builds the record of a
check that could not run. Non-finite floats are written as the strings
``"inf"``, ``"-inf"`` and ``"nan"`` so the JSON stays standard.
"""

from __future__ import annotations

import math
from collections.abc import Mapping as _MappingABC
from dataclasses import dataclass, field, fields, replace
from enum import Enum
from types import MappingProxyType
from typing import Any, Callable, Iterator, Mapping, Optional, Protocol, Union, runtime_checkable

import numpy as np

from dpaudit.claims import Domain, Neighbours, PrivacyClaim

__all__ = [
    "Result",
    "FORMAT_VERSION",
    "Verdict",
    "Interval",
    "Counterexample",
    "MARGINAL_P",
    "Power",
    "Strength",
    "Details",
    "MechanismFailure",
    "ValidationCounts",
    "ValidationSamples",
    "ValidatedEvent",
    "SampledDetails",
    "ExactDetails",
    "FailureDetails",
    "FixedNoiseFacts",
    "FixedNoiseDetails",
    "Family",
    "Origin",
    "AuditContext",
    "LOGIC",
    "FLOAT",
    "NOT_APPLICABLE",
    "Finding",
    "ENGINES",
    "AuditResult",
    "jsonable",
    "error_record",
]

#: Version of the JSON result format (bump on incompatible changes).
FORMAT_VERSION = "1.0"


class Verdict(str, Enum):
    """The outcome of checking one claim, with its own one-line meaning."""

    REFUTED = "refuted"
    NOT_REFUTED = "not_refuted"
    PROVED = "proved"
    INCONCLUSIVE = "inconclusive"
    ERROR = "error"
    INTERRUPTED = "interrupted"

    @property
    def description(self) -> str:
        return {
            "refuted": "the claim is false: a counterexample was found",
            "not_refuted": "no violation found; this is not a proof",
            "proved": "the claim holds: proved by a solver or exact arithmetic",
            "inconclusive": "the check could not decide; this is not a pass",
            "error": "the check could not run: the mechanism or its input failed",
            "interrupted": "the run was stopped (Ctrl-C, SIGTERM) before this check finished; "
                           "this is not a pass, and not the mechanism's error",
        }[self.value]

    @property
    def label(self) -> str:
        """What a human reads: ``REFUTED``, ``NOT REFUTED``, ``PROVED``, ``INCONCLUSIVE``, ``ERROR``."""
        return self.value.replace("_", " ").upper()

    @property
    def severity(self) -> int:
        """Ordering for the worst verdict of a run: error > refuted > inconclusive > others."""
        return {"proved": 0, "not_refuted": 0, "inconclusive": 1, "refuted": 2, "error": 3,
                "interrupted": 4}[self.value]

    def __str__(self) -> str:  # pragma: no cover - trivial
        return self.value

    @classmethod
    def named(cls, what: Any, name: str = "expect") -> "Verdict":
        """The verdict ``what`` names: a Verdict, its value (``"not_refuted"``) or its label as
        printed (``"NOT REFUTED"``), in any case, with ``_``, ``-`` or a space between words;
        :class:`~dpaudit.errors.InvalidArgument` (``name``, the choices) for anything else."""
        if isinstance(what, cls):
            return what
        if isinstance(what, str):
            key = "_".join(what.strip().lower().replace("-", " ").replace("_", " ").split())
            if key in cls._value2member_map_:
                return cls(key)
        from dpaudit.errors import InvalidArgument

        raise InvalidArgument.bad(name, what, "one of " + ", ".join(v.value for v in cls))


#: the largest int a record holds as a number (its decimal digits stay under Python's 4,300)
INT_TEXT_BITS = 14_000


def int_text(x: Any) -> Any:
    """``x``, or for an int past :data:`INT_TEXT_BITS` bits its size and bits in hex as text:
    Python writes no int of more than 4,300 digits as text, so an output of 10**5000 + k lost every
    report of a refuted claim (exit 3), and ``repr``/``json.dumps`` of an API result raised."""
    if type(x) is int and x.bit_length() > INT_TEXT_BITS:
        return f"<an int of {x.bit_length()} bits: 0x{x:x}>"
    return x


def jsonable(x: Any) -> Any:
    """Recursively convert to JSON-safe Python: numpy scalars/arrays to lists and numbers,
    non-finite floats to ``"inf"``/``"-inf"``/``"nan"``, enums to their values, tuples to lists,
    objects with ``to_record()`` to their record."""
    if x is None or isinstance(x, (bool, str)):
        return x
    if isinstance(x, Enum):
        return x.value
    if isinstance(x, (np.bool_,)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int_text(int(x))
    if isinstance(x, (float, np.floating)):
        v = float(x)
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return v
    if isinstance(x, np.ndarray):
        return [jsonable(v) for v in x.tolist()]
    if hasattr(x, "to_record"):
        return x.to_record()
    if isinstance(x, Mapping):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in x]
    return repr(x)


@dataclass(frozen=True, slots=True)
class Interval:
    """A two-sided confidence interval [lo, hi] for a probability or a loss."""

    lo: float
    hi: float

    def contains(self, x: float) -> bool:
        return self.lo <= x <= self.hi

    def to_record(self) -> list:
        return [jsonable(self.lo), jsonable(self.hi)]


@dataclass(frozen=True, slots=True)
class Counterexample:
    """A reproducible witness: neighbouring datasets D, D', an event S, and P[M(D)∈S], P[M(D')∈S].

    ``p``/``q`` are the validation-split frequencies; ``p_interval``/``q_interval`` the
    Clopper-Pearson intervals at the run's (corrected) confidence. ``event`` is a JSON-ready dict
    with at least ``kind`` and ``text`` (a human description such as ``"output > 0.73"``).
    For an exact audit, ``p``/``q`` are the exact probabilities and the intervals are degenerate.
    """

    dataset: tuple
    neighbour: tuple
    event: Mapping[str, Any]
    p: float
    q: float
    p_interval: Interval
    q_interval: Interval

    def to_record(self) -> dict:
        return {
            "dataset": jsonable(self.dataset),
            "neighbour": jsonable(self.neighbour),
            "event": jsonable(dict(self.event)),
            "p": jsonable(self.p),
            "p_interval": self.p_interval.to_record(),
            "q": jsonable(self.q),
            "q_interval": self.q_interval.to_record(),
        }


# -- how strong a sampled verdict is --------------------------------------------------------------

#: A refutation whose p-value exceeds this is labelled marginal: a tight, correct mechanism
#: audited at 95% is refuted about 5% of the time, and such refutations have p near 1 − confidence.
MARGINAL_P = 1e-3


@dataclass(frozen=True, slots=True)
class Power:
    """What the audit could have seen: with probability ≥ ``probability``, a mechanism whose true ε
    on the validated event is ≥ ``epsilon`` (or whose δ at the claimed ε is ≥ ``delta``) would
    have been refuted. None where no such value exists at this budget (the event was never seen
    under D', or even p' = 1 would not refute). Computed by
    :func:`dpaudit.estimators.strength.detectable`."""

    probability: float
    epsilon: Optional[float]
    delta: Optional[float]

    def to_record(self) -> dict:
        return {"probability": self.probability, "epsilon": self.epsilon, "delta": self.delta,
                "basis": "marginal Clopper-Pearson bound on the validated event at the "
                         "validation sample sizes"}


@dataclass(frozen=True, slots=True)
class Strength:
    """The strength of one sampled verdict: the claim's family-wise ``p_value``, the ``margin``
    ε_LB/ε, whether a refutation is ``marginal`` (p > :data:`MARGINAL_P`), and the ``power``
    statement (None for a refutation, where it is moot). Graded by
    :func:`dpaudit.estimators.strength.grade` from the validation counts of the bound."""

    p_value: float
    margin: Optional[float]
    marginal: bool
    power: Optional[Power] = None

    @classmethod
    def of(cls, value: Any) -> "Strength":
        """``value`` as a :class:`Strength` (a graded value with the same four fields)."""
        if isinstance(value, cls):
            return value
        power = value.power
        if power is not None and not isinstance(power, Power):
            power = Power(power.probability, power.epsilon, power.delta)
        return cls(p_value=value.p_value, margin=value.margin, marginal=value.marginal, power=power)

    def family(self, k: int, refuted: Optional[bool] = None) -> "Strength":
        """The strength when ``k`` audits share one family-wise confidence (Bonferroni): the
        p-value multiplied by ``k`` (at most 1), the smallest run-level 1 − confidence at which
        this verdict is a refutation; a refutation is marginal when that p-value exceeds
        :data:`MARGINAL_P`. ``refuted`` defaults to what the grading says (no power statement)."""
        if k <= 1:
            return self
        refuted = self.power is None if refuted is None else refuted
        p = min(1.0, self.p_value * k)
        return Strength(p_value=p, margin=self.margin, marginal=bool(refuted and p > MARGINAL_P),
                        power=self.power)

    def to_record(self) -> dict:
        return {"p_value": self.p_value, "margin": self.margin, "marginal": self.marginal,
                "power": None if self.power is None else self.power.to_record()}


# -- typed details ----------------------------------------------------------------------------------

def _omitted_when_none() -> Any:
    """A field left out of the record while it is None."""
    return field(default=None, metadata={"omit_none": True})


def _spread(default: Any = None) -> Any:
    """A field whose own fields are the record's keys (a group present or absent as a whole)."""
    return field(default=default, metadata={"spread": True})


class Details(_MappingABC):
    """The base of an engine's typed details: a frozen dataclass, read as the mapping of its
    record's keys in record order (``r.details["alpha"]``, ``"early_stop" in r.details``).

    A field is a key; a field made with ``_omitted_when_none`` is left out while None; a field
    made with ``_spread`` is a group (itself :class:`Details`) whose keys are the record's own,
    present or absent as a whole. :meth:`to_record` is the JSON-ready dict."""

    __slots__ = ()

    def _pairs(self) -> Iterator[tuple[str, Any]]:
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if f.metadata.get("spread"):
                if value is not None:
                    yield from value._pairs()
            elif value is not None or not f.metadata.get("omit_none"):
                yield f.name, value

    def __getitem__(self, key: str) -> Any:
        for name, value in self._pairs():
            if name == key:
                return value
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return (name for name, _ in self._pairs())

    def __len__(self) -> int:
        return sum(1 for _ in self._pairs())

    def to_record(self) -> dict:
        return {name: jsonable(value) for name, value in self._pairs()}


@dataclass(frozen=True, slots=True, eq=False)
class MechanismFailure(Details):
    """Where the mechanism failed (an ERROR verdict)."""

    #: the dataset on which it failed (None when the failure names none)
    error_dataset: Optional[list]
    #: the output it should not have given, as ``repr`` (at most 200 characters)
    error_output: Optional[str] = _omitted_when_none()


@dataclass(frozen=True, slots=True, eq=False)
class ValidationCounts(Details):
    """The validation split's counts behind a bound (:mod:`dpaudit.estimators.bounds`)."""

    n_D: int
    n_D_prime: int
    in_event_D: int
    in_event_D_prime: int
    #: outputs in the event on both datasets (paired design only, else None)
    both: Optional[int]
    #: ``"paired"`` | ``"independent"``
    design: str


@dataclass(frozen=True, slots=True, eq=False)
class ValidationSamples(Details):
    """At most 2,000 finite validation outputs of D and of D' each (scalar outputs only; D is the
    counterexample's ``dataset``): the report's histograms."""

    d: list
    d_prime: list


@dataclass(frozen=True, slots=True, eq=False)
class ValidatedEvent(Details):
    """The event a sampled audit validated, and how."""

    #: ``marginal`` | ``ratio`` | ``paired`` (:mod:`dpaudit.estimators.bounds`)
    bound_method: str
    #: error level of the validated candidate (after Bonferroni)
    alpha: float
    #: how the pair was found (``"one above"``, ``"hypothesis search"``, …)
    pair_label: str
    #: the bound the selection split predicted for the chosen event
    projected_bound: Optional[float]
    validation: ValidationCounts
    #: the event's threshold(s) (also in the counterexample's event)
    event_thresholds: list
    samples: Optional[ValidationSamples] = _omitted_when_none()
    #: ``{"threshold", "epsilon_lower_bound", "chosen", "projected"}``: the projected bound per
    #: threshold on the selection split (threshold events on scalar outputs only)
    bound_curve: Optional[Mapping[str, Any]] = _omitted_when_none()


@dataclass(frozen=True, slots=True, eq=False)
class SampledDetails(Details):
    """What a sampled audit (:func:`dpaudit.audit`) did and saw."""

    #: what each phase did (pairs scored, hypothesis examples, …)
    phases: Mapping[str, Any]
    #: True when the time limit cut the audit short
    timed_out: bool
    #: how many candidates shared the family-wise confidence
    candidates_validated: int
    #: the group-sequential looks (:mod:`dpaudit.auditing.looks`), when an early stop could occur
    early_stop: Optional[Mapping[str, Any]] = _omitted_when_none()
    #: the detected output kind, e.g. ``"real scalar"``
    output_kind: Optional[str] = _omitted_when_none()
    #: what stopped the audit short of a verdict, and what would help (a ``--timeout`` reached)
    note: Optional[str] = _omitted_when_none()
    #: the default budget sized to the time limit from the time per call, before any sample
    #: (``default``, ``budget``, ``seconds_per_call``, ``seconds_left``, ``estimated_seconds``)
    budget_fitted: Optional[Mapping[str, Any]] = _omitted_when_none()
    #: where the mechanism failed (an ERROR)
    failure: Optional[MechanismFailure] = _spread()
    #: the validated event (a verdict with a bound)
    validated: Optional[ValidatedEvent] = _spread()


@dataclass(frozen=True, slots=True, eq=False)
class ExactDetails(Details):
    """What an exact audit (:func:`dpaudit.exact_audit`) computed."""

    #: sup_y |ln p_D(y) − ln p_D'(y)| of the worst pair found
    exact_loss: float
    #: the output where that loss is attained
    witness: Any
    pairs_evaluated: int
    phases: Mapping[str, Any]
    pair_label: str
    #: ``"delta"`` (δ(ε) of an approximate claim on a full law) | ``"loss"``
    objective: str
    #: δ(ε) at the claimed ε (a full law only)
    delta_at_claim: Optional[float] = _omitted_when_none()
    #: what the number means when only ``log_prob`` was given
    note: Optional[str] = _omitted_when_none()


@dataclass(frozen=True, slots=True, eq=False)
class FailureDetails(Details):
    """The details of an audit that ended before any evidence: where the mechanism failed."""

    failure: MechanismFailure = field(metadata={"spread": True})


@dataclass(frozen=True, slots=True, eq=False)
class FixedNoiseFacts(Details):
    """The fresh-process check (:mod:`dpaudit.execution.honesty`): the first releases on D and D′
    in fresh processes, and how often two processes with different generators agreed."""

    first_on_D: Any
    first_on_D_prime: Any
    agreements: int
    calls: int
    #: the agreement test's p-value, and the level it was held to
    p: float
    alpha: float


@dataclass(frozen=True, slots=True, eq=False)
class FixedNoiseDetails(Details):
    """The details of a refutation by the fresh-process check: noise fixed at import."""

    fixed_noise: FixedNoiseFacts
    pair_label: str = "fresh processes"


# -- what the command that asked for an audit knows ---------------------------------------------------

@dataclass(frozen=True, slots=True)
class Family:
    """Several targets share one family-wise ``confidence`` (Bonferroni): each was audited at
    1 − (1 − confidence)/targets, and a p-value for the run is its :meth:`Strength.family`."""

    targets: int
    confidence: float
    correction: str = "bonferroni"

    def to_record(self) -> dict:
        return {"targets": self.targets, "confidence": self.confidence,
                "correction": self.correction}


@dataclass(frozen=True, slots=True)
class Origin:
    """Where the audited function lives (``{"path", "line"}`` or None) and the isolation it ran
    under, as the sandbox reported it."""

    location: Optional[Mapping[str, Any]]
    isolation: str


@dataclass(frozen=True, slots=True)
class AuditContext:
    """What the command that asks for an audit knows and the auditor does not, handed to
    :func:`dpaudit.audit` so that the result is built once, whole: ``reproduce(own_randomness)``
    writes the command's reproduce line (the auditor tells whether the mechanism draws its own
    randomness; ``reproduce(own_randomness, samples)`` when it fitted the default budget to the
    time limit; ``reproduce(own_randomness, samples or None, True)`` when the time limit cut the
    audit short), ``family`` the targets sharing the confidence, ``origin`` where the function
    lives and how it was confined, ``declared_by`` which claim fields only the sandboxed code
    reported."""

    reproduce: Optional[Callable[..., str]] = None
    family: Optional[Family] = None
    origin: Optional[Origin] = None
    declared_by: Optional[str] = None
    #: the mechanism's time per call, when the command measured it (no second timing probe)
    seconds_per_call: Optional[float] = None
    #: the run's whole time limit as the user gave it (``--timeout``), which a cut-short audit's
    #: note names; the audit's own ``timeout`` is what was left of it when the audit began
    time_limit: Optional[float] = None
    #: the mechanism's failure, when a step of the command before the audit met it (the
    #: fresh-process check's first calls): the audit is its ERROR, with no call to fail again
    failure: Optional[Exception] = None
    #: when (``time.monotonic()``) the command began checking the target: the record's
    #: ``elapsed_s`` counts its steps before the audit too
    started: Optional[float] = None
    #: with neither a budget nor a time limit given: the seconds the default budget is sized to
    #: when it would take longer (no deadline is set: nothing is cut; ``dpaudit check``'s
    #: :data:`dpaudit.auditor.DEFAULT_FIT_SECONDS`)
    fit_within: Optional[float] = None


# -- one finding, and the audit's result ---------------------------------------------------------------

#: The two questions an audit answers, each a finding of its own: is the claim right for the
#: mechanism as a model over the reals (``logic``), and is its float64 implementation safe
#: (``float``: float-structure events, porosity; Mironov 2012).
LOGIC = "logic"
FLOAT = "float"
#: the record's word for a finding whose question was not asked or does not arise
NOT_APPLICABLE = "not_applicable"


@dataclass(frozen=True, slots=True)
class Finding:
    """One finding of an audit: the answer to one question (:data:`LOGIC`, :data:`FLOAT`) with
    its verdict, bounds, counterexample, strength and the evidence engine's details, at its own
    error level ``alpha`` (its share of the run's 1 − confidence). ``verdict`` None: the question
    was not asked or does not arise, and ``reason`` says why (integer outputs have no float64
    question; ``--float off`` does not ask it). ``looks`` records, per look of an early-stopped
    audit, what this finding's bound was there."""

    verdict: Optional["Verdict"]
    epsilon_lower_bound: Optional[float]
    delta_lower_bound: Optional[float]
    counterexample: Optional[Counterexample]
    strength: Optional[Strength]
    details: Mapping[str, Any]
    error: Optional[str] = None
    question: str = LOGIC
    alpha: Optional[float] = None
    reason: Optional[str] = None
    samples: Optional[int] = None
    #: what this finding's budget could have shown at all (:class:`dpaudit.estimators.limits.Limits`:
    #: the ε ceiling and δ floor of its validation), None where nothing was sampled
    limits: Any = None

    @classmethod
    def absent(cls, question: str, reason: str) -> "Finding":
        """A question that was not asked or does not arise, and why."""
        return cls(verdict=None, epsilon_lower_bound=None, delta_lower_bound=None,
                   counterexample=None, strength=None, details={}, question=question,
                   reason=reason)

    @property
    def refuted(self) -> bool:
        return self.verdict is Verdict.REFUTED

    def to_record(self) -> dict:
        rec = {"question": self.question,
               "verdict": NOT_APPLICABLE if self.verdict is None else self.verdict.value,
               "reason": self.reason,
               "epsilon_lower_bound": jsonable(self.epsilon_lower_bound),
               "delta_lower_bound": jsonable(self.delta_lower_bound),
               "counterexample": None if self.counterexample is None else self.counterexample.to_record(),
               "p_value": None, "margin": None, "marginal": None, "power": None}
        if self.strength is not None:
            rec.update(jsonable(self.strength))
        rec.update({"alpha": jsonable(self.alpha),
                    "confidence": None if self.alpha is None else jsonable(1.0 - self.alpha),
                    "samples": self.samples,
                    "limits": None if self.limits is None else jsonable(self.limits.to_record()),
                    "error": self.error, "details": jsonable(self.details)})
        return rec


#: The evidence engines (``AuditResult.method``) -> (the record kind they write, worded by
#: :mod:`dpaudit.report.kinds`; whether a :class:`Strength` grades their verdicts). Sampling is
#: statistical and graded; an exact computation is not. An engine not listed writes records of
#: its own kind, named after it, ungraded; a new one adds its row (and its kind to the report).
ENGINES: dict[str, tuple[str, bool]] = {"sampled": ("audit", True), "exact": ("exact", False),
                                        "curve": ("curve", False), "replay": ("replay", False),
                                        "one-run": ("one-run", False)}


def _engine(method: str) -> tuple[str, bool]:
    return ENGINES.get(method, (method, False))


@dataclass(frozen=True, slots=True)
class AuditResult:
    """The outcome of a sampled (black-box) or exact (white-box) privacy audit of one mechanism.

    ``epsilon_lower_bound`` ε_LB (``marginal``: ln((p_lo − δ)/q_hi); the method is
    ``details["bound_method"]``) holds with probability ≥ ``confidence`` (family-wise over every
    candidate validated); ``delta_lower_bound`` is δ_LB(ε) (``marginal``: p_lo − e^ε q_hi) at the
    claimed ε, at least 0 (a sampled bound below 0 says no more than δ ≥ 0). For ``method == "exact"`` these are exact values
    (confidence 1). ``verdict`` is REFUTED when ε_LB > ε (pure) or δ_LB > δ (approximate).
    ``method`` names the evidence engine (:data:`ENGINES`); ``details`` are its typed extras
    (:class:`SampledDetails`, :class:`ExactDetails`, :class:`FailureDetails`,
    :class:`FixedNoiseDetails`; a plain mapping for a hand-built result), read as a mapping.
    A sampled result also carries its ``strength`` (:class:`Strength`) and ``reproducible``
    (False when the mechanism draws its own randomness). ``family``, ``origin`` and
    ``declared_by`` are what ``dpaudit check`` knows (:class:`AuditContext`), None elsewhere.
    """

    target: str
    claim: PrivacyClaim
    neighbours: Neighbours
    verdict: "Verdict"
    epsilon_lower_bound: Optional[float]
    delta_lower_bound: Optional[float]
    confidence: float
    samples: int
    counterexample: Optional[Counterexample]
    reproduce: str
    elapsed_s: float
    error: Optional[str] = None
    method: str = "sampled"
    seed: Optional[int] = None
    details: Union[Details, Mapping[str, Any]] = field(default_factory=dict)
    strength: Optional[Strength] = None
    reproducible: Optional[bool] = None
    #: the rest of the claim audited: the records' domain and the size (None: not recorded)
    domain: Optional[Domain] = None
    size: Optional[int] = None
    #: the targets sharing the run's confidence (two or more), when a command audits several
    family: Optional[Family] = None
    #: where the audited function lives and the isolation it ran under (``dpaudit check``)
    origin: Optional[Origin] = None
    #: the claim fields only the sandboxed code reported (``dpaudit check``)
    declared_by: Optional[str] = None
    #: the findings by question (:data:`LOGIC`, :data:`FLOAT`) as the engine made them; None
    #: for a result built by hand (then :attr:`findings` is the one logic finding of its fields)
    answers: Optional[Mapping[str, Finding]] = None
    #: the float policy the verdict was reached under (``"error"``, ``"warn"``, ``"off"``)
    float_policy: Optional[str] = None
    #: the question whose finding the top-level verdict, bounds and counterexample are
    decided_by: str = LOGIC
    #: the ε ceiling and δ floor of the deciding finding's budget
    #: (:class:`dpaudit.estimators.limits.Limits`), None where nothing was sampled
    limits: Any = None

    @property
    def refuted(self) -> bool:
        return self.verdict is Verdict.REFUTED

    @property
    def kind(self) -> str:
        """The record kind: ``"audit"`` for a sampled audit, ``"exact"`` for an exact one."""
        return _engine(self.method)[0]

    @property
    def graded(self) -> Optional[Strength]:
        """The strength as the run reads it: family-wise (:meth:`Strength.family`) when several
        targets share the confidence."""
        if self.strength is None or self.family is None:
            return self.strength
        return self.strength.family(self.family.targets, refuted=self.refuted)

    @property
    def findings(self) -> Mapping[str, Finding]:
        """The audit's findings by question: :data:`LOGIC` always, :data:`FLOAT` when the engine
        made one (each finding's strength family-wise, as :attr:`graded`)."""
        if self.answers is None:
            return MappingProxyType({LOGIC: Finding(
                verdict=self.verdict, epsilon_lower_bound=self.epsilon_lower_bound,
                delta_lower_bound=self.delta_lower_bound, counterexample=self.counterexample,
                strength=self.graded, details=self.details, error=self.error,
                alpha=1.0 - self.confidence)})
        out = {}
        for q, f in self.answers.items():
            if f.strength is not None and self.family is not None:
                f = replace(f, strength=f.strength.family(self.family.targets, refuted=f.refuted))
            out[q] = f
        return MappingProxyType(out)

    def _two_findings(self) -> dict:
        """``float_policy``, ``decided_by`` (the question the top-level verdict, bounds and
        counterexample come from) and ``findings``: every question's finding (the float64 one,
        when the engine made none, says why)."""
        found = {q: f.to_record() for q, f in self.findings.items()}
        if FLOAT not in found:
            why = ("an exact audit of the declared output law: no float64 output was sampled"
                   if self.method == "exact" else "not examined by this audit")
            found[FLOAT] = Finding.absent(FLOAT, why).to_record()
        return {"float_policy": self.float_policy, "decided_by": self.decided_by, "findings": found}

    def to_record(self) -> dict:
        kind, graded = _engine(self.method)
        rec = {
            "kind": kind,
            "target": self.target,
            "claim": self._claim_record(),
            "verdict": self.verdict.value,
            "method": self.method,
            "epsilon_lower_bound": jsonable(self.epsilon_lower_bound),
            "delta_lower_bound": jsonable(self.delta_lower_bound),
            "confidence": jsonable(self.confidence),
            "samples": int(self.samples),
            "limits": None if self.limits is None else jsonable(self.limits.to_record()),
            "counterexample": None if self.counterexample is None else self.counterexample.to_record(),
            "reproduce": self.reproduce,
            "elapsed_s": jsonable(self.elapsed_s),
            "error": self.error,
            "seed": self.seed,
            **(self._strength_record() if graded else {}),
            **(self._two_findings() if kind in ("audit", "exact") else {}),
            "details": jsonable(self.details),
        }
        if self.family is not None and graded:
            rec["family"] = self.family.to_record()
        if self.origin is not None:
            rec["location"] = None if self.origin.location is None else dict(self.origin.location)
            rec["isolation"] = self.origin.isolation
        return rec

    def _claim_record(self) -> dict:
        """``epsilon``, ``delta``, ``neighbours`` and, when recorded, ``domain`` ``[lo, hi]``,
        ``size`` and ``declared_by``: the whole claim, so that a report shows what was audited."""
        claim = {"epsilon": jsonable(self.claim.epsilon), "delta": jsonable(self.claim.delta),
                 "neighbours": self.neighbours.value}
        if self.domain is not None:
            claim["domain"] = [jsonable(self.domain.lo), jsonable(self.domain.hi)]
        if self.size is not None:
            claim["size"] = int(self.size)
        if self.declared_by is not None:
            claim["declared_by"] = self.declared_by
        return claim

    def _strength_record(self) -> dict:
        """``p_value``, ``margin``, ``marginal``, ``power`` (:class:`Strength`, family-wise when
        several targets share the confidence) and ``reproducible`` (whether one seed gives the
        same outputs twice), None when unknown."""
        rec = {"p_value": None, "margin": None, "marginal": None, "power": None}
        if self.strength is not None:
            rec.update(jsonable(self.graded))
        rec["reproducible"] = self.reproducible
        return rec


@runtime_checkable
class Result(Protocol):
    """The one protocol of every result dpaudit returns (:class:`AuditResult`,
    :class:`dpaudit.curves.CurveResult`, :class:`dpaudit.replay.ReplayResult`, the sensitivity
    search's, the formal claims', the one-run audit's, a sweep's, and the check pipeline's
    :class:`dpaudit.pipeline.result.CheckResult`): its record ``kind``, its ``verdict``, the
    ``target`` it is about, the ``reproduce`` line that reruns it, and ``to_record()``, the
    record every report renders."""

    @property
    def kind(self) -> str: ...

    @property
    def verdict(self) -> Any: ...

    @property
    def target(self) -> str: ...

    @property
    def reproduce(self) -> Any: ...

    def to_record(self) -> dict: ...


def error_record(kind: str, target: str, error: str, *, reproduce: str = "",
                 elapsed_s: Optional[float] = 0.0, **extra: Any) -> dict:
    """The record of a check that could not run: verdict ERROR with its one-line cause.

    ``kind`` is the kind the check would have produced (so reports file it in the right place),
    ``error`` the cause (``"ZeroDivisionError: division by zero"``); ``extra`` keys (``id``,
    ``expected``, ...) are added. A sampled audit's error record also has the keys of its kind,
    empty (``claim``, bounds, ``samples = 0``, ``counterexample``), so every ``audit`` record has
    the same keys.
    """
    rec: dict[str, Any] = {"kind": kind, "target": target, "verdict": Verdict.ERROR.value}
    if kind == "audit":
        rec.update({"claim": None, "epsilon_lower_bound": None, "delta_lower_bound": None,
                    "confidence": None, "samples": 0, "counterexample": None})
    rec.update({"reproduce": reproduce, "elapsed_s": elapsed_s, "error": error})
    rec.update(extra)
    return rec

