"""The ``seed-claim`` record kind: a source paper's statement re-checked numerically.

A seed claim (:mod:`dpaudit.reference.claims.types`) is a formula, lemma or theorem of a seed
paper, its recorded verdict, and a check that re-derives the evidence (exact sums, quadrature,
exact privacy losses, enumeration). Its record's claim is the statement and where the paper makes
it (``eq 2.1`` of the EM-for-medians notes, 2020); its finding is the check's detail with the observed value against the bound.
The generic report knows nothing of papers: this class registers the kind from here (import time,
and the ``dpaudit.record_kinds`` entry point so saved results re-render without importing us).

Record keys (:meth:`ClaimCheck.to_record`): ``statement``, ``source``, ``seed_paper``, ``spec``,
``errata`` (docs/math.md#errata entries), ``observed``, ``bound``, ``detail``, ``recorded_verdict``,
``agrees``, ``counterexample`` (the values that show the statement false), ``recheck``.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from markupsafe import Markup

from dpaudit.report.describe import fmt, num, verdict_label, verdict_meaning
from dpaudit.report.kinds import RecordKind, SarifRule, register_kind
from dpaudit.report.kinds.base import number_text

__all__ = ["SeedClaimRecord", "paper_source", "PAPERS", "paper_name"]

#: The source papers by their number ``seed_paper`` ("000" … "004"); docs/math.md#sources gives the
#: full references.
PAPERS = {
    "000": "Muñoz Medina and Gillenwater (2020)",
    "001": "Chen, Pal and Golubchik (2016)",
    "002": "Cummings and Durfee (2020)",
    "003": "Dong (2020)",
    "004": "the EM-for-medians notes (2020)",
}


def paper_name(seed_paper: Any) -> str:
    """The citation of source paper ``seed_paper`` ("001" → "Chen, Pal and Golubchik (2016)"), or
    "" when it is not one of :data:`PAPERS`."""
    return PAPERS.get(str(seed_paper), "") if seed_paper is not None else ""


def paper_source(rec: Mapping[str, Any]) -> str:
    """Where the paper states a seed claim, with the paper's citation: ``Chen, Pal and Golubchik
    (2016) eq (7)`` (the citation is added when the source does not start with it)."""
    source = str(rec.get("source") or "")
    paper = paper_name(rec.get("seed_paper"))
    if paper and not source.startswith(paper):
        source = f"{paper} {source}".strip()
    return source


@register_kind
class SeedClaimRecord(RecordKind):
    """A seed paper's statement: REFUTED by an explicit counterexample or NOT REFUTED (never proved)."""

    __slots__ = ()
    kind = "seed-claim"
    description = "seed claim (a source paper's statement, checked numerically)"
    rule = SarifRule("DPA005", "SeedStatementRefuted",
                     "A statement of a source paper is refuted by a numeric check.",
                     "A formula, lemma or theorem of one of the seed papers was re-checked numerically "
                     "(exact sums or quadrature of the stated formula, exact privacy losses, exhaustive "
                     "enumeration) and an explicit counterexample shows it false. This is a finding about "
                     "the paper, not a defect in this code; docs/math.md#errata lists the erratum and the "
                     "correction the reference mechanisms implement.", paper=True)
    claim_label = "Statement"
    recheck_label = "Re-check the statement alone"
    sarif_properties = RecordKind.sarif_properties + ("recorded_verdict", "seed_paper", "source", "statement",
                                                      "spec", "errata", "observed", "bound", "recheck")
    shown = frozenset({"statement", "source", "bound", "counterexample", "recorded_verdict", "agrees",
                       "seed_paper", "spec", "errata", "observed", "detail", "recheck"})
    legend = Markup(
        "Seed claims (evidence <code>seed-claim</code>) are statements of the source papers, not of this "
        "code, each re-checked numerically (exact sums, quadrature, exact privacy losses, enumeration). "
        "REFUTED: an explicit counterexample shows the statement false (docs/math.md#errata lists the erratum). "
        "NOT REFUTED: it held at every point checked; a numeric check is not a proof. Each expects the "
        "verdict recorded with the claim.")

    def claim_text(self) -> str:
        statement = str(self.rec.get("statement") or self.rec.get("target") or "")
        source = paper_source(self.rec)
        return f"{source}: {statement}" if source else statement

    def finding(self) -> str:
        """``DETAIL (observed x against bound b)``, and the recorded verdict when the re-check disagrees."""
        rec = self.rec
        text = str(rec.get("detail") or verdict_meaning(rec.get("verdict")))
        if rec.get("observed") is not None:
            bound = f" against bound {fmt(rec['bound'])}" if rec.get("bound") is not None else ""
            text += f" (observed {fmt(rec['observed'])}{bound})"
        if rec.get("agrees") is False:
            text += f"; the verdict recorded with the claim is {verdict_label(rec.get('recorded_verdict'))}"
        return text

    def figure(self) -> str:
        rec = self.rec
        if num(rec.get("observed")) is None:
            return ""
        return f"observed {fmt(rec['observed'])}" + (f" vs {fmt(rec['bound'])}" if num(rec.get("bound")) is not None else "")

    def facts(self) -> list[tuple[str, str]]:
        rec = self.rec
        errata = rec.get("errata") if isinstance(rec.get("errata"), list) else []
        facts = self.head_facts() + [
            ("paper", paper_name(rec.get("seed_paper")) or str(rec.get("seed_paper") or "—")),
            ("stated in", str(rec.get("source") or "—")),
            ("explained in", str(rec.get("spec") or "—")),
            ("errata (docs/math.md#errata)", ", ".join(map(str, errata)) if errata else "none"),
            ("observed", number_text(rec.get("observed"))),
            ("bound", number_text(rec.get("bound")))]
        recorded = rec.get("recorded_verdict")
        if recorded:
            agrees = "" if rec.get("agrees") is None else (" (the re-check agrees)" if rec.get("agrees")
                                                           else " (the re-check DISAGREES)")
            facts.append(("recorded verdict", verdict_label(recorded) + agrees))
        facts.append(("time", f"{fmt(rec.get('elapsed_s'), 3)} s"))
        return facts

    def long_texts(self) -> list[tuple[str, str]]:
        return []  # its text fields all have a place of their own

    def recheck(self) -> str:
        recheck = self.rec.get("recheck") or ""
        return recheck if recheck != self.rec.get("reproduce") else ""

    def sarif_expected(self) -> Optional[str]:
        return self.rec.get("expected", self.rec.get("recorded_verdict"))

    def sarif_message(self, title: str) -> str:
        return (f"{title}: the paper's statement \"{self.claim_text()}\" is REFUTED by a numeric "
                f"check: {self.finding_text()}.")

    def sarif_justification(self) -> str:
        rec = self.rec
        errata = rec.get("errata") if isinstance(rec.get("errata"), list) else []
        where = (", ".join(f"{e}, docs/math.md#{str(e).lower()}" for e in errata) if errata
                 else str(rec.get("spec") or "docs/math.md#errata"))
        stated = paper_source(rec) or "a source paper (source unknown)"
        return (f"a statement of {stated} recorded as false ({where}); "
                "a finding about the paper, not a defect in this code")

    def description_shown(self, description: str) -> bool:
        statement = self.rec.get("statement")
        return not (statement and str(statement) in description)
