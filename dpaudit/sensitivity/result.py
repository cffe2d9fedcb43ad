"""The frozen outcome of a sensitivity search and its canonical JSON record.

A search can only REFUTE a sensitivity claim ``‖f(D) − f(D')‖ ≤ Δ`` (or, per individual,
``‖f(D ∪ {i}) − f(D)‖ ≤ Δ_i``; Cummings and Durfee (2020), docs/math.md#individual-model) with a concrete pair, or fail to refute it
after N examples; it never proves one (docs/ARCHITECTURE.md#kinds-of-evidence).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from dpaudit.claims import Neighbours
from dpaudit.results import Verdict, jsonable

__all__ = ["SensitivityExample", "SensitivityResult", "time_limit_note"]


def time_limit_note(limit: str, examples: int, asked: int, found: bool) -> str:
    """What a search cut short by its time limit says (``details["note"]``): the limit as it was
    given (``limit``: ``--timeout 3`` or ``timeout=3``) and what the search had done by then."""
    head = f"the time limit ({limit} s) was reached after {examples:,} of the {asked:,} examples asked"
    if found:
        return head + ": the counterexample is the one found by then, shrunk no further"
    if examples == 0:
        return head + ": no pair was tried, nothing is known of the bound"
    return head + ": no violation among them (a longer time limit tries more)"


@dataclass(frozen=True, slots=True)
class SensitivityExample:
    """One neighbouring pair and what ``f`` did on it.

    ``dataset`` / ``neighbour`` are nested tuples of floats (records, or rows of records);
    ``ids`` / ``neighbour_ids`` the identities in the individual model; ``individual`` the i of an
    i-neighbour pair; ``output`` the utility argument r when ``f`` is a utility u(D, r).
    ``f_dataset`` / ``f_neighbour`` are the values (floats or tuples), ``gap`` their distance in
    the claim's norm and ``allowed`` the bound that applies (Δ, or Δ_i). On an ERROR example the
    values that could not be computed are ``None``.
    """

    dataset: tuple
    neighbour: tuple
    f_dataset: Any
    f_neighbour: Any
    gap: Optional[float]
    allowed: float
    individual: Optional[int] = None
    ids: Optional[tuple] = None
    neighbour_ids: Optional[tuple] = None
    output: Optional[float] = None

    @property
    def records(self) -> int:
        """The number of records of the larger dataset (the size of the counterexample)."""
        return max(len(self.dataset), len(self.neighbour))

    @property
    def ratio(self) -> Optional[float]:
        """gap / allowed (``inf`` when a positive gap meets a zero bound)."""
        if self.gap is None:
            return None
        if self.allowed == 0.0:
            return 0.0 if self.gap == 0.0 else float("inf")
        return self.gap / self.allowed

    def to_record(self) -> dict:
        rec = {
            "dataset": jsonable(self.dataset),
            "neighbour": jsonable(self.neighbour),
            "individual": self.individual,
            "f_dataset": jsonable(self.f_dataset),
            "f_neighbour": jsonable(self.f_neighbour),
            "gap": jsonable(self.gap),
            "allowed": jsonable(self.allowed),
        }
        if self.ids is not None:
            rec["ids"] = jsonable(self.ids)
            rec["neighbour_ids"] = jsonable(self.neighbour_ids)
        if self.output is not None:
            rec["output"] = jsonable(self.output)
        return rec


@dataclass(frozen=True, slots=True)
class SensitivityResult:
    """The outcome of :func:`dpaudit.check_sensitivity`.

    ``verdict``: REFUTED (``counterexample`` breaks the bound), NOT_REFUTED (no violation in
    ``examples`` pairs; not a proof) or ERROR (``f`` raised or returned NaN / ±inf / a value of the
    wrong shape on ``counterexample``'s input; ``error`` says what). ``max_gap`` is the largest
    ‖f(D) − f(D')‖ seen, ``ratio`` the largest gap / allowed bound seen (the claim is violated
    iff some ratio exceeds 1, up to the tolerance). ``tightest`` is the pair with that ratio.
    ``examples`` counts the neighbouring pairs generated and evaluated by the search;
    ``evaluations`` also counts the shrinking and simplification steps.
    """

    target: str
    verdict: Verdict
    bound: float
    neighbours: Neighbours
    norm: str
    max_gap: float
    ratio: float
    counterexample: Optional[SensitivityExample]
    examples: int
    elapsed_s: float
    reproduce: str
    individual: Optional[tuple[float, ...]] = None
    error: Optional[str] = None
    tightest: Optional[SensitivityExample] = None
    evaluations: int = 0
    seed: Optional[int] = None
    profile: str = "ci"
    details: Mapping[str, Any] = field(default_factory=dict)

    #: how the searched function was confined, as the check pipeline knows it (None from a
    #: plain :func:`dpaudit.check_sensitivity`)
    isolation: Optional[str] = None

    #: the record kind (the result protocol of :class:`dpaudit.results.Result`)
    kind = "sensitivity"

    @property
    def refuted(self) -> bool:
        return self.verdict is Verdict.REFUTED

    def __str__(self) -> str:
        head = f"{self.target}: {self.verdict.label} (sensitivity ≤ {self.bound:g}, {self.neighbours.value})"
        if self.verdict is Verdict.ERROR:
            return f"{head}: {self.error}"
        tail = f"max gap {self.max_gap:.6g} = {self.ratio:.4g} × bound after {self.examples} examples"
        if self.counterexample is not None and self.verdict is Verdict.REFUTED:
            c = self.counterexample
            tail += f"; D={list(c.dataset)!r}, D'={list(c.neighbour)!r}"
        return f"{head}: {tail}"

    def to_record(self) -> dict:
        return {
            "kind": "sensitivity",
            "target": self.target,
            "verdict": self.verdict.value,
            "elapsed_s": jsonable(self.elapsed_s),
            "reproduce": self.reproduce,
            "error": self.error,
            "claim": {
                "bound": jsonable(self.bound),
                "individual": jsonable(self.individual),
                "neighbours": self.neighbours.value,
                "norm": self.norm,
            },
            "max_gap": jsonable(self.max_gap),
            "ratio": jsonable(self.ratio),
            "counterexample": None if self.counterexample is None else self.counterexample.to_record(),
            "tightest": None if self.tightest is None else self.tightest.to_record(),
            "examples": int(self.examples),
            "evaluations": int(self.evaluations),
            "seed": self.seed,
            "profile": self.profile,
            "details": jsonable(dict(self.details)),
            **({} if self.isolation is None else {"isolation": self.isolation}),
        }
