"""Sensitivity-search records: a declared bound Δ on ‖f(D) − f(D′)‖ over neighbours D, D′, searched
for violations with hypothesis (Dwork and Roth 2014, Def. 3.1; individual bounds Δ_i of Cummings and Durfee 2020, Def 2.3; docs/math.md#individual-model).

The record's keys are those of :meth:`dpaudit.sensitivity.SensitivityResult.to_record`:
``claim`` ``{bound, individual, neighbours, norm}``, ``max_gap``, ``ratio`` (max_gap / bound),
``examples``, ``evaluations``, ``profile``, ``counterexample``, ``tightest``.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from dpaudit.report.formatting import fmt, num
from dpaudit.report.kinds.base import (CounterexampleView, RecordKind, SarifRule, as_json, dataset_views,
                                       number_text, short)
from dpaudit.report.kinds.audit import refuting_pair, times_text
from dpaudit.results import Verdict

__all__ = ["SensitivitySearch"]

#: counterexample key -> row label, in the order shown (after D and D′)
_ROWS = (("individual", "individual i"), ("ids", "identities in D"), ("neighbour_ids", "identities in D′"),
         ("f_dataset", "f(D)"), ("f_neighbour", "f(D′)"), ("gap", "gap ‖f(D) − f(D′)‖"),
         ("allowed", "allowed"), ("output", "output r"))


def _value(x: Any) -> str:
    """A function's output as shown in a sentence: a number to 4 digits, else compact JSON."""
    return fmt(x) if num(x) is not None else short(x, 40)


def _cut(rec: Mapping[str, Any]) -> str:
    """`` (cut short by the time limit)`` when it was (``details["timed_out"]``), else ``""``."""
    details = rec.get("details")
    return " (cut short by the time limit)" if isinstance(details, Mapping) and details.get("timed_out") else ""


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
        return text + refuting_pair(rec) + _cut(rec)

    def figure(self) -> str:
        return f"gap/bound {fmt(self.rec['ratio'])}" if num(self.rec.get("ratio")) is not None else ""

    def own_facts(self) -> list[tuple[str, str]]:
        claim = self.claim()
        facts = [(key, number_text(claim[key], 4)) for key in ("bound", "neighbours", "norm")
                 if claim.get(key) is not None]
        if claim.get("individual"):
            facts.append(("individual bounds Δ_i", as_json(claim["individual"])))
        return facts + self.scalar_facts(("max_gap", "ratio", "examples", "evaluations", "profile"))

    def lead(self) -> str:
        """``On these neighbours f moves by 1, 10 times the declared sensitivity 0.1 …``."""
        rec = self.rec
        verdict = rec.get("verdict")
        bound = self.claim().get("bound")
        cx = rec.get("counterexample") if isinstance(rec.get("counterexample"), Mapping) else None
        if verdict == Verdict.REFUTED.value and cx is not None and num(cx.get("gap")) is not None:
            allowed = cx.get("allowed", bound)
            ratio = (num(cx["gap"]) / num(allowed)) if num(allowed) else None
            times = f", {times_text(ratio)} times the {fmt(allowed)} the declared sensitivity allows" \
                if ratio is not None else ""
            return (f"On D = {short(cx.get('dataset'), 40)} the function returns {_value(cx.get('f_dataset'))}, "
                    f"on its neighbour D′ = {short(cx.get('neighbour'), 40)} it returns "
                    f"{_value(cx.get('f_neighbour'))}: a gap of {fmt(cx['gap'])}{times}. Noise calibrated to the "
                    f"declared bound is too small for this function.")
        if verdict == Verdict.NOT_REFUTED.value:
            tried = f" over {int(num(rec.get('examples')) or 0):,} pairs tried" if rec.get("examples") else ""
            return (f"No pair of neighbours moved the output by more than the declared {fmt(bound)}{tried}{_cut(rec)}: "
                    f"the largest gap was {fmt(rec.get('max_gap'))}. This is not a proof.")
        return super().lead()

    def stat_facts(self) -> list[tuple[str, str]]:
        return [f for f in self.facts() if f[0] in ("norm", "ratio", "evaluations", "profile", "seed", "method")]

    def counterexample(self) -> Optional[CounterexampleView]:
        cx = self.rec.get("counterexample")
        if not isinstance(cx, Mapping):
            return None
        datasets, marked = dataset_views(cx.get("dataset"), cx.get("neighbour"))
        rows = [] if datasets else [(label, as_json(cx[key])) for key, label in
                                    (("dataset", "D"), ("neighbour", "D′")) if key in cx]
        rows += [(label, as_json(cx[key])) for key, label in _ROWS if cx.get(key) is not None]
        return CounterexampleView(tuple(rows), datasets=datasets, marked=marked)

    def plots(self, salt: str) -> list[tuple[str, str]]:
        from dpaudit.report.plots import sensitivity_svgs

        try:
            return sensitivity_svgs(self.rec, salt=salt)
        except Exception:  # noqa: BLE001 - malformed or hostile plot data: the report, without its plot
            return []
