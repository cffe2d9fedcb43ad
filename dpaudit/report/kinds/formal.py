"""Formal-claim records: a statement encoded for z3, PROVED, REFUTED with a model, or INCONCLUSIVE.

The record's keys are those of :meth:`dpaudit.formal.FormalResult.to_record`: ``statement``,
``source`` (where the statement comes from), ``model`` (the refuting model), ``decided_by``,
``smt2`` (the SMT-LIB2 queries), ``assumes_exact_reals``, ``solver_time_s``, ``control_of``.
"""

from __future__ import annotations

from dpaudit.report.formatting import verdict_meaning
from dpaudit.report.kinds.base import RecordKind, SarifRule, first_sentence, short
from dpaudit.results import Verdict

__all__ = ["FormalClaim"]


class FormalClaim(RecordKind):
    """A claim decided by a solver: only this kind can say PROVED."""

    __slots__ = ()
    kind = "formal"
    description = "formal claim (z3)"
    rule = SarifRule("DPA004", "FormalClaimRefuted", "A formal claim is refuted by a solver model.",
                     "z3 found a model that violates the claim; the model and the SMT-LIB2 query are in "
                     "the report.")
    shown = frozenset({"statement", "source", "assumes_exact_reals", "decided_by", "control_of", "solver_time_s"})
    open_long_text = True
    sarif_properties = RecordKind.sarif_properties + ("source", "statement", "spec")

    def claim_text(self) -> str:
        statement = self.rec.get("statement")
        return statement if isinstance(statement, str) and statement else str(self.rec.get("target", ""))

    def summary_claim(self) -> str:
        source = self.rec.get("source")
        if isinstance(source, str) and source:
            return first_sentence(source, 90)
        return super().summary_claim()

    def finding(self) -> str:
        text = verdict_meaning(self.rec.get("verdict"))
        model = self.rec.get("model")
        if self.rec.get("verdict") == Verdict.REFUTED.value and model:
            text += f"; model {short(model)}"
        return text

    def own_facts(self) -> list[tuple[str, str]]:
        return self.scalar_facts(("source", "assumes_exact_reals", "decided_by", "control_of", "solver_time_s"))
