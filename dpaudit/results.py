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
``delta_lower_bound``, ``confidence``, ``samples``, ``counterexample``). Reports (JSON, HTML,
JUnit, SARIF, Markdown) are rendered from these records only, each asking the record's kind
(:func:`dpaudit.report.kinds.kind_of`) for its wording. :func:`error_record` builds the record of a
check that could not run. Non-finite floats are written as the strings
``"inf"``, ``"-inf"`` and ``"nan"`` so the JSON stays standard.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Mapping, Optional

import numpy as np

from dpaudit.claims import Domain, Neighbours, PrivacyClaim

__all__ = [
    "FORMAT_VERSION",
    "Verdict",
    "Interval",
    "Counterexample",
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

    @property
    def description(self) -> str:
        return {
            "refuted": "the claim is false: a counterexample was found",
            "not_refuted": "no violation found; this is not a proof",
            "proved": "the claim holds: proved by a solver or exact arithmetic",
            "inconclusive": "the check could not decide; this is not a pass",
            "error": "the check could not run: the mechanism or its input failed",
        }[self.value]

    @property
    def label(self) -> str:
        """What a human reads: ``REFUTED``, ``NOT REFUTED``, ``PROVED``, ``INCONCLUSIVE``, ``ERROR``."""
        return self.value.replace("_", " ").upper()

    @property
    def severity(self) -> int:
        """Ordering for the worst verdict of a run: error > refuted > inconclusive > others."""
        return {"proved": 0, "not_refuted": 0, "inconclusive": 1, "refuted": 2, "error": 3}[self.value]

    def __str__(self) -> str:  # pragma: no cover - trivial
        return self.value


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
        return int(x)
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
    """A replayable witness: neighbouring datasets D, D', an event S, and P[M(D)∈S], P[M(D')∈S].

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


@dataclass(frozen=True, slots=True)
class AuditResult:
    """The outcome of a sampled (black-box) or exact (white-box) privacy audit of one mechanism.

    ``epsilon_lower_bound`` ε_LB = ln((p_lo − δ)/q_hi) holds with probability ≥ ``confidence``
    (family-wise over every candidate validated); ``delta_lower_bound`` is
    δ_LB(ε) = p_lo − e^ε q_hi at the claimed ε. For ``method == "exact"`` these are exact values
    (confidence 1). ``verdict`` is REFUTED when ε_LB > ε (pure) or δ_LB > δ (approximate).
    ``details`` holds method-specific extras (candidates tried, phases, output kind, plots' data).
    A sampled result also carries its ``strength`` (p-value of the claim, margin ε_LB/ε, whether a
    refutation is marginal, the power statement: :class:`dpaudit.estimators.strength.Strength`)
    and ``reproducible`` (False when the mechanism draws its own randomness).
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
    details: Mapping[str, Any] = field(default_factory=dict)
    strength: Optional[Any] = None
    reproducible: Optional[bool] = None
    #: the rest of the claim audited: the records' domain and the size (None: not recorded)
    domain: Optional[Domain] = None
    size: Optional[int] = None

    @property
    def refuted(self) -> bool:
        return self.verdict is Verdict.REFUTED

    def to_record(self) -> dict:
        return {
            "kind": "audit" if self.method == "sampled" else "exact",
            "target": self.target,
            "claim": self._claim_record(),
            "verdict": self.verdict.value,
            "method": self.method,
            "epsilon_lower_bound": jsonable(self.epsilon_lower_bound),
            "delta_lower_bound": jsonable(self.delta_lower_bound),
            "confidence": jsonable(self.confidence),
            "samples": int(self.samples),
            "counterexample": None if self.counterexample is None else self.counterexample.to_record(),
            "reproduce": self.reproduce,
            "elapsed_s": jsonable(self.elapsed_s),
            "error": self.error,
            "seed": self.seed,
            **(self._strength_record() if self.method == "sampled" else {}),
            "details": jsonable(dict(self.details)),
        }

    def _claim_record(self) -> dict:
        """``epsilon``, ``delta``, ``neighbours`` and, when recorded, ``domain`` ``[lo, hi]`` and
        ``size``: the whole claim, so that a report shows what was audited."""
        claim = {"epsilon": jsonable(self.claim.epsilon), "delta": jsonable(self.claim.delta),
                 "neighbours": self.neighbours.value}
        if self.domain is not None:
            claim["domain"] = [jsonable(self.domain.lo), jsonable(self.domain.hi)]
        if self.size is not None:
            claim["size"] = int(self.size)
        return claim

    def _strength_record(self) -> dict:
        """``p_value``, ``margin``, ``marginal``, ``power`` (:mod:`dpaudit.estimators.strength`)
        and ``reproducible`` (whether one seed gives the same outputs twice), None when unknown."""
        rec = {"p_value": None, "margin": None, "marginal": None, "power": None}
        if self.strength is not None:
            rec.update(jsonable(self.strength))
        rec["reproducible"] = self.reproducible
        return rec


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

