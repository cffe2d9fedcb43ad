"""The types of a seed claim: a statement of a source paper, the verdict we record, and its re-check.

:mod:`~dpaudit.reference.claims.noise` (Chen, Pal and Golubchik (2016)) and :mod:`~dpaudit.reference.claims.exponential`
(Muñoz Medina and Gillenwater (2020), Dong (2020), the EM-for-medians notes (2020)) list the papers' formulas, lemmas and theorems as :class:`SeedClaim` values; each names where
the seed states it, the section of docs/math.md and the errata (docs/math.md#errata), and a ``check`` that re-derives the
evidence numerically (exact sums, quadrature, enumeration, exact privacy losses), returning a
:class:`ClaimEvidence`. :meth:`SeedClaim.evaluate` runs the check and returns a
:class:`ClaimCheck`, whose record (``kind = "seed-claim"``) the compliance report renders and
``dpaudit.suite.seed_claim`` audits.

Verdicts are three-valued and honest: an explicit, exactly evaluated counterexample makes a claim
REFUTED; a claim that held at every point checked is NOT_REFUTED. A numeric check never proves, so
neither a recorded nor an observed verdict may be PROVED.
"""

from __future__ import annotations

import ast
import sys
import time
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Mapping, Optional, Sequence

from dpaudit.errors import InvalidArgument
from dpaudit.results import Verdict, jsonable

from ..seed_claim_record import SeedClaimRecord  # registers the record kind

__all__ = ["ClaimEvidence", "SeedClaim", "ClaimCheck", "evaluate_selected", "NUMERIC_VERDICTS"]

#: The verdicts a numeric check can give (never PROVED).
NUMERIC_VERDICTS = (Verdict.REFUTED, Verdict.NOT_REFUTED)


def _check_verdict(verdict: Any, name: str) -> None:
    if verdict not in NUMERIC_VERDICTS:
        raise InvalidArgument.bad(name, verdict, "Verdict.REFUTED or Verdict.NOT_REFUTED (a numeric "
                                  "check never proves)")


@dataclass(frozen=True, slots=True)
class ClaimEvidence:
    """What a check observed: verdict, the measured quantity and the bound it was held to, a
    one-line ``detail``, and a JSON-ready counterexample when the claim is refuted."""

    verdict: Verdict
    observed: Optional[float]
    bound: Optional[float]
    detail: str
    counterexample: Optional[Mapping[str, Any]] = None

    def __post_init__(self) -> None:
        _check_verdict(self.verdict, "evidence verdict")


@dataclass(frozen=True, slots=True)
class SeedClaim:
    """One claim of a seed, the verdict we record, and the check that re-derives it.

    ``seed`` is the seed paper ("000" … "004"), ``source`` where it states the claim ("Chen, Pal and Golubchik (2016) eq (6)"),
    ``spec`` the section of docs/math.md that explains it, ``errata`` the docs/math.md#errata entries ("E8"), and ``evaluator`` the
    ``"module:function"`` that re-runs one claim by id (``function(id)[0].evidence``); the
    record's re-check command is derived from it, and the claim's source line from the module
    that defines ``check`` (only when an evaluator is set).
    """

    id: str
    seed: str
    source: str
    statement: str
    verdict: Verdict
    spec: str
    errata: tuple[str, ...]
    check: Callable[[], ClaimEvidence] = field(compare=False, repr=False)
    evaluator: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        _check_verdict(self.verdict, f"verdict of {self.id}")

    @property
    def name(self) -> str:
        """The claim's id (what reports call its target)."""
        return self.id

    def evaluate(self) -> "ClaimCheck":
        """Run the check now, timed."""
        t0 = time.perf_counter()
        evidence = self.check()
        return ClaimCheck(self, evidence, time.perf_counter() - t0)

    def recheck_command(self) -> str:
        """A shell command that re-runs this claim's check alone and prints its evidence."""
        if ":" not in self.evaluator:
            return ""
        module, func = self.evaluator.split(":", 1)
        return f"python -c \"from {module} import {func}; print({func}('{self.id}')[0].evidence)\""

    def location(self) -> Optional[dict]:
        """``{"path", "line"}`` of the call that defines this claim in its module (the path relative
        to the current directory), or None when the module or the line cannot be found."""
        module = getattr(self.check, "__module__", None) if self.evaluator else None
        path = getattr(sys.modules.get(module or ""), "__file__", None)
        if not module or not path:
            return None
        line = _definition_lines(path).get(self.id)
        if line is None:
            return None
        from dpaudit.report.model import location

        return location((path, line))


@lru_cache(maxsize=8)
def _definition_lines(path: str) -> dict[str, int]:
    """First line of each call in ``path`` whose first argument is a string literal, by that string
    (a claim is defined by such a call: ``SeedClaim("id", ...)``)."""
    try:
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), filename=path)
    except (OSError, SyntaxError, ValueError):
        return {}
    lines: dict[str, int] = {}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)):
            key = node.args[0].value
            lines[key] = min(lines.get(key, node.lineno), node.lineno)
    return lines


@dataclass(frozen=True, slots=True)
class ClaimCheck:
    """A claim, the evidence its check produced now, and whether the two verdicts agree."""

    claim: SeedClaim
    evidence: ClaimEvidence
    elapsed_s: float

    @property
    def agrees(self) -> bool:
        return self.claim.verdict is self.evidence.verdict

    def to_record(self) -> dict:
        """The ``seed-claim`` record: the common keys (``kind``, ``target``, ``verdict``,
        ``elapsed_s``, ``reproduce``, ``error``), the claim (``seed`` and ``seed_paper``: the seed
        paper; ``source``, ``statement``, ``spec``, ``errata``, ``recorded_verdict``), the evidence
        (``observed``, ``bound``, ``detail``, ``counterexample``, ``agrees``), ``recheck`` (the
        command that re-runs the check; ``reproduce`` too, until the suite replaces it with its
        own) and ``location`` (the claim's definition)."""
        c, e = self.claim, self.evidence
        recheck = c.recheck_command()
        rec = {
            "kind": SeedClaimRecord.kind, "target": c.id, "verdict": e.verdict.value,
            "recorded_verdict": c.verdict.value, "agrees": self.agrees, "seed": c.seed,
            "seed_paper": c.seed, "source": c.source, "statement": c.statement, "spec": c.spec,
            "errata": list(c.errata), "observed": jsonable(e.observed), "bound": jsonable(e.bound),
            "detail": e.detail, "counterexample": jsonable(e.counterexample),
            "elapsed_s": self.elapsed_s, "reproduce": recheck, "recheck": recheck, "error": None,
        }
        loc = c.location()
        if loc is not None:
            rec["location"] = loc
        return rec


def evaluate_selected(claims: Sequence[SeedClaim], claim_id: Optional[str] = None) -> tuple[ClaimCheck, ...]:
    """Evaluate every claim of ``claims``, or only the one whose id is ``claim_id`` (an unknown id
    is an :class:`InvalidArgument` listing the known ones)."""
    if claim_id is not None:
        chosen = tuple(c for c in claims if c.id == claim_id)
        if not chosen:
            raise InvalidArgument.bad("claim_id", claim_id, "one of " + ", ".join(c.id for c in claims))
        claims = chosen
    return tuple(c.evaluate() for c in claims)
