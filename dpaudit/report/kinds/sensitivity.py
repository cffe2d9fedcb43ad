"""Sensitivity-search records: a declared bound Δ on ‖f(D) − f(D′)‖ over neighbours D, D′, searched
for violations with hypothesis (Dwork and Roth 2014, Def. 3.1; individual bounds Δ_i of Cummings and Durfee 2020, Def 2.3; docs/math.md#individual-model).

The record's keys are those of :meth:`dpaudit.sensitivity.SensitivityResult.to_record`:
``claim`` ``{bound, individual, neighbours, norm}``, ``max_gap``, ``ratio`` (max_gap / bound),
``examples``, ``evaluations``, ``profile``, ``counterexample``, ``tightest``.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from dpaudit.report.formatting import fmt, num
from dpaudit.report.kinds.base import CounterexampleView, RecordKind, SarifRule, as_json, number_text
from dpaudit.report.kinds.audit import refuting_pair

__all__ = ["SensitivitySearch"]

#: counterexample key -> row label, in the order shown (after D and D′)
_ROWS = (("individual", "individual i"), ("ids", "identities in D"), ("neighbour_ids", "identities in D′"),
         ("f_dataset", "f(D)"), ("f_neighbour", "f(D′)"), ("gap", "gap ‖f(D) − f(D′)‖"),
         ("allowed", "allowed"), ("output", "output r"))


class SensitivitySearch(RecordKind):
    """A declared (global or individual) sensitivity bound, refuted by a concrete pair or not."""

    __slots__ = ()
    kind = "sensitivity"
    description = "sensitivity search (hypothesis)"
    rule = SarifRule("DPA003", "SensitivityBoundRefuted",
                     "A declared sensitivity bound is refuted by a counterexample.",
                     "A hypothesis search found neighbouring datasets on which the function's outputs "
                     "differ by more than the declared (global or individual) sensitivity bound.")
    shown = frozenset({"counterexample", "max_gap", "ratio", "examples", "evaluations", "profile"})

    def claim(self) -> Mapping[str, Any]:
        claim = self.rec.get("claim")
        return claim if isinstance(claim, Mapping) else {}

    def claim_text(self) -> str:
        claim = self.claim()
        bound = claim.get("bound")
        text = f"sensitivity ≤ {fmt(bound)}" if bound is not None else "declared sensitivity bound"
        if claim.get("individual"):
            text = "individual sensitivities Δ_i (" + text + ")"
        if claim.get("neighbours"):
            text += f", {claim['neighbours']} neighbours"
        return text

    def finding(self) -> str:
        rec = self.rec
        text = f"largest gap {fmt(rec.get('max_gap'))} against bound {fmt(self.claim().get('bound'))}"
        if num(rec.get("ratio")) is not None:
            text += f" (ratio {fmt(rec['ratio'])})"
        if rec.get("examples"):
            text += f" over {int(num(rec['examples']) or 0):,} examples"
        return text + refuting_pair(rec)

    def figure(self) -> str:
        return f"gap/bound {fmt(self.rec['ratio'])}" if num(self.rec.get("ratio")) is not None else ""

    def own_facts(self) -> list[tuple[str, str]]:
        claim = self.claim()
        facts = [(key, number_text(claim[key], 4)) for key in ("bound", "neighbours", "norm")
                 if claim.get(key) is not None]
        if claim.get("individual"):
            facts.append(("individual bounds Δ_i", as_json(claim["individual"])))
        return facts + self.scalar_facts(("max_gap", "ratio", "examples", "evaluations", "profile"))

    def counterexample(self) -> Optional[CounterexampleView]:
        cx = self.rec.get("counterexample")
        if not isinstance(cx, Mapping):
            return None
        rows = [(label, as_json(cx[key])) for key, label in (("dataset", "D"), ("neighbour", "D′")) if key in cx]
        rows += [(label, as_json(cx[key])) for key, label in _ROWS if cx.get(key) is not None]
        return CounterexampleView(tuple(rows))
