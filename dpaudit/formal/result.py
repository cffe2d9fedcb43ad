"""Frozen results of the formal claims: one :class:`QueryRecord` per solver query, one
:class:`FormalResult` per claim.

A claim is decided by one or more z3 queries. Each query asks either for a counterexample to a
universal statement (the claim needs ``unsat``) or for a witness of an existential one (the claim
needs ``sat``). The claim is PROVED when every query gives the answer it needs, REFUTED when some
query gives the opposite definite answer (a ``sat`` answer carries the counterexample as a
model), and INCONCLUSIVE otherwise: z3's ``unknown`` (timeout, resource limit, incompleteness)
is never a pass (docs/ARCHITECTURE.md#kinds-of-evidence).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, Mapping, Optional

from dpaudit.results import Verdict, jsonable

__all__ = ["Status", "QueryRecord", "FormalResult"]


class Status(str, Enum):
    """The outcome of a formal claim; its value is the matching :class:`dpaudit.results.Verdict`."""

    PROVED = "proved"
    REFUTED = "refuted"
    INCONCLUSIVE = "inconclusive"
    ERROR = "error"

    @property
    def verdict(self) -> Verdict:
        return Verdict(self.value)

    @property
    def label(self) -> str:
        return self.value.upper()

    @property
    def description(self) -> str:
        return {
            "proved": "every query gave the answer the claim needs (a proof, in exact arithmetic)",
            "refuted": "a query gave the opposite answer: a counterexample model, or no witness exists",
            "inconclusive": "z3 answered unknown (timeout, resource limit or incompleteness); not a pass",
            "error": "the encoding or the solver failed to run",
        }[self.value]

    def __str__(self) -> str:  # pragma: no cover - trivial
        return self.value


@dataclass(frozen=True, slots=True)
class QueryRecord:
    """One z3 query of a claim and its answer.

    ``needs`` is the answer that supports the claim (``"unsat"``: no counterexample exists;
    ``"sat"``: a witness exists); ``answer`` is z3's (``"sat"``, ``"unsat"``, ``"unknown"``).
    ``model`` maps each constant (and each derived quantity the encoding names) to a readable
    number (int, float or bool); ``model_exact`` gives the same values exactly (``"1/3"``, or a
    ``root-obj`` for an algebraic number). ``smt2`` is the standalone SMT-LIB2 text of the query,
    which ``z3 FILE`` solves again in a fresh process.
    """

    name: str
    description: str
    needs: str
    answer: str
    seconds: float
    smt2: str
    reason_unknown: Optional[str] = None
    model: Optional[Mapping[str, Any]] = None
    model_exact: Optional[Mapping[str, str]] = None

    @property
    def holds(self) -> bool:
        """z3 gave the answer the claim needs."""
        return self.answer == self.needs

    @property
    def fails(self) -> bool:
        """z3 gave the opposite definite answer."""
        return self.answer in ("sat", "unsat") and self.answer != self.needs

    def to_record(self) -> dict:
        return {
            "name": self.name,
            "description": self.description,
            "needs": self.needs,
            "answer": self.answer,
            "reason_unknown": self.reason_unknown,
            "seconds": jsonable(self.seconds),
            "model": jsonable(self.model),
            "model_exact": jsonable(self.model_exact),
        }


@dataclass(frozen=True, slots=True)
class FormalResult:
    """The outcome of one formal claim (see the module docstring for how queries decide it).

    ``expected`` is the status the claim is registered with (PROVED for a true statement,
    REFUTED for a seed statement that is false, docs/math.md#errata); ``matches_expected`` is what
    ``dpaudit verify`` gates on. ``model`` is the counterexample (or the failing query's model)
    when the claim is REFUTED by a ``sat`` answer, else None. ``assumes_exact_reals`` says whether
    the statement is about exact real arithmetic (so it need not hold in floating point).
    """

    name: str
    source: str
    statement: str
    expected: Status
    status: Status
    assumes_exact_reals: bool
    queries: tuple[QueryRecord, ...]
    elapsed_s: float
    seed: int
    timeout_s: float
    rlimit: int
    error: Optional[str] = None
    decided_by: Optional[str] = None
    seeds: tuple[str, ...] = ()
    spec: tuple[str, ...] = ()
    mechanisms: tuple[str, ...] = ()
    control_of: Optional[str] = None

    #: the record kind (the result protocol of :class:`dpaudit.results.Result`)
    kind = "formal"

    @property
    def target(self) -> str:
        return self.name

    @property
    def matches_expected(self) -> bool:
        return self.status is self.expected

    @property
    def verdict(self) -> Verdict:
        return self.status.verdict

    @property
    def smt2(self) -> tuple[str, ...]:
        """The SMT-LIB2 text of every query, in order."""
        return tuple(q.smt2 for q in self.queries)

    @property
    def solver_time_s(self) -> float:
        """Total seconds spent inside z3's ``check``."""
        return float(sum(q.seconds for q in self.queries))

    @property
    def model(self) -> Optional[Mapping[str, Any]]:
        """The model of the query that refuted the claim (None when there is none)."""
        for q in self.queries:
            if q.name == self.decided_by:
                return q.model
        return None

    @property
    def model_exact(self) -> Optional[Mapping[str, str]]:
        for q in self.queries:
            if q.name == self.decided_by:
                return q.model_exact
        return None

    @property
    def reproduce(self) -> str:
        from dpaudit.reproduce import verify_command

        return verify_command(self.name)

    def to_record(self) -> dict:
        return {
            "kind": "formal",
            "target": self.name,
            "verdict": self.verdict.value,
            "elapsed_s": jsonable(self.elapsed_s),
            "reproduce": self.reproduce,
            "error": self.error,
            "source": self.source,
            "statement": self.statement,
            "expected": self.expected.value,
            "matches_expected": self.matches_expected,
            "model": jsonable(self.model),
            "model_exact": jsonable(self.model_exact),
            "decided_by": self.decided_by,
            "smt2": list(self.smt2),
            "assumes_exact_reals": self.assumes_exact_reals,
            "queries": [q.to_record() for q in self.queries],
            "solver_time_s": jsonable(self.solver_time_s),
            "seed": self.seed,
            "timeout_s": jsonable(self.timeout_s),
            "rlimit": self.rlimit,
            "seeds": list(self.seeds),
            "spec": list(self.spec),
            "mechanisms": list(self.mechanisms),
            "control_of": self.control_of,
        }
