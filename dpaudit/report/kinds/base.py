"""The record-kind protocol: what one kind of result record says, whatever format shows it.

A record is the canonical JSON-ready dict of one result (:mod:`dpaudit.results`). Its ``kind``
names a :class:`RecordKind` subclass that wraps it and answers, in one place, everything a
renderer needs: the claim in words, the finding in words, the facts, the counterexample rows, the
JUnit outcome and the SARIF rule and level. Renderers (HTML, JUnit, SARIF, Markdown, the terminal
lines) iterate over records and ask their kind; none of them tests a kind string.

Honesty is kept here once for every kind (docs/ARCHITECTURE.md#kinds-of-evidence): NOT REFUTED says "not a proof",
INCONCLUSIVE says "not a pass", and an ERROR record's finding is its cause.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping, Optional

from dpaudit.report.formatting import fmt, num, verdict_label, verdict_meaning
from dpaudit.results import Verdict

__all__ = ["RecordKind", "SarifRule", "SarifFinding", "CounterexampleView", "DatasetView", "FindingBlock",
           "SiteView", "SequenceView", "TableView", "JUnitOutcome", "GenericRecord", "short", "as_json",
           "interval_text", "number_text", "record_text",
           "dataset_views", "privacy_claim_text", "first_sentence", "COMMON_SHOWN"]


@dataclass(frozen=True, slots=True)
class SarifRule:
    """A SARIF ``reportingDescriptor``: ``id`` (``DPA00n``), ``name``, a short and a full
    description; ``paper`` marks findings about a paper's statement rather than code (level
    ``note``, severity ``recommendation``); ``level`` is the default level of a rule whose results
    are not errors (``warning``, ``note``; ``""``: ``error``, or ``note`` for a paper's)."""

    id: str
    name: str
    short: str
    full: str
    paper: bool = False
    level: str = ""


@dataclass(frozen=True, slots=True)
class SarifFinding:
    """One SARIF result a kind reports of its own (:meth:`RecordKind.sarif_findings`): under
    ``rule`` (one of the kind's :attr:`~RecordKind.rule` and :attr:`~RecordKind.extra_rules`) at
    ``level`` (``error``, ``warning`` or ``note``), with the message ``text``, at ``location``
    ``{path, line}`` (None: the record's own), in ``function``; ``key`` tells it from the record's
    other results in its fingerprint; ``properties`` are the result's."""

    rule: SarifRule
    level: str
    text: str
    location: Optional[Mapping[str, Any]] = None
    function: str = ""
    key: str = ""
    properties: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SiteView:
    """A line of the audited code a finding is about: ``where`` (``path:line``), the enclosing
    ``function``, the source ``code`` of that line, and ``rows`` ``(label, value)`` of what was
    seen there (the values on D and D′, the scale, the declared sensitivity, the excess)."""

    where: str
    function: str = ""
    code: str = ""
    rows: tuple = ()


@dataclass(frozen=True, slots=True)
class SequenceView:
    """Two runs' sequences side by side, around the entry where they part: ``title`` says what
    they are; ``rows`` are ``(on D, on D′, mark)``, each side ``(index, name, site, parameters)`` or
    None (that run has no such entry), ``mark`` ``"part"`` on the row where they part, ``""``
    else; ``before`` entries left out above the first row, ``after`` ``(on D, on D′)`` left out
    below the last; ``note`` one line under the table."""

    title: str
    rows: tuple
    before: int = 0
    after: tuple = (0, 0)
    note: str = ""


@dataclass(frozen=True, slots=True)
class TableView:
    """A table of a record folded under its ``summary`` line (:meth:`RecordKind.tables`):
    ``headers``, ``rows`` (tuples of text), the ``numeric`` column indices (right-aligned), those
    kept on one line (``nowrap``) and a ``note`` under it."""

    summary: str
    headers: tuple
    rows: tuple
    numeric: tuple = ()
    note: str = ""
    nowrap: tuple = ()


@dataclass(frozen=True, slots=True)
class DatasetView:
    """One dataset of a counterexample, record by record: ``items`` are ``(text, mark)`` with
    ``mark`` ``""`` or ``"added"`` / ``"removed"`` / ``"changed"`` (the record that makes D and D′
    neighbours), ``None`` items stand for a run of records left out (``gap`` of them);
    ``note`` says how many records there are and which one is marked."""

    label: str
    items: tuple
    size: int
    note: str = ""


@dataclass(frozen=True, slots=True)
class CounterexampleView:
    """A counterexample as rows ``(label, text)``, the event S in words, and P[M(D)∈S],
    P[M(D′)∈S] with their intervals (``probs``: keys ``p``, ``p_interval``, ``q``, ``q_interval``);
    ``datasets``: D and D′ whole, the differing record marked (:func:`dataset_views`), shown
    before the rows."""

    rows: tuple
    event: Optional[str] = None
    probs: Optional[Mapping[str, str]] = None
    datasets: tuple = ()
    marked: str = ""


@dataclass(frozen=True, slots=True)
class FindingBlock:
    """What one finding shows in the HTML report, in reading order: its ``heading`` (None for a
    record with one finding) with its badge (``label``, or the verdict's), verdict, a ``note``
    (whether it decides the verdict), the plain ``lead`` sentence (after ``lead_label`` when set),
    the ``fix``, the call ``site`` it is about, the two runs' ``sequence`` side by side, the
    counterexample, the plots ``[(caption, svg)]``, the ``evidence`` rows, and the ``stats`` rows a
    specialist checks (folded under ``stats_label``)."""

    question: Optional[str]
    heading: Optional[str]
    verdict: str
    lead: str
    lead_label: str = ""
    note: str = ""
    fix: str = ""
    counterexample: Optional[CounterexampleView] = None
    plots: tuple = ()
    evidence: tuple = ()
    stats: tuple = ()
    label: str = ""
    site: Optional[SiteView] = None
    sequence: Optional[SequenceView] = None
    stats_label: str = "statistical details"


@dataclass(frozen=True, slots=True)
class JUnitOutcome:
    """One JUnit test case's outcome: ``status`` is ``passed``, ``failure``, ``error`` or
    ``skipped``; ``message`` and ``type`` fill the element's attributes (unused for passed)."""

    status: str
    message: str = ""
    type: str = ""


#: record keys every kind shows in a place of its own (the HTML lists the rest as "other fields")
COMMON_SHOWN = frozenset({"kind", "target", "verdict", "expected", "id", "claim", "reproduce", "error",
                          "elapsed_s", "method", "seed", "location", "details", "title", "description",
                          "matches_expected", "group"})


def short(x: Any, limit: int = 80) -> str:
    """``x`` as compact JSON (strings as they are), cut at ``limit`` characters."""
    text = json.dumps(x, ensure_ascii=False) if not isinstance(x, str) else x
    return text if len(text) <= limit else text[: limit - 1] + "…"


def as_json(x: Any) -> str:
    """``x`` as indented JSON for a table cell (strings as they are)."""
    return json.dumps(x, ensure_ascii=False, indent=1) if not isinstance(x, str) else x


def record_text(x: Any, limit: int = 60) -> str:
    """One record of a dataset as compact text (numbers as Python writes them), cut at ``limit``."""
    text = x if isinstance(x, str) else json.dumps(x, ensure_ascii=False, separators=(", ", ": "))
    return text if len(text) <= limit else text[: limit - 1] + "…"


#: records of a dataset shown whole; a longer one shows its marked records with some around them
DATASET_SHOWN = 200
_AROUND = 8


def _marks(a: list, b: list) -> tuple[list[str], list[str]]:
    """The records of ``a`` and ``b`` that differ, as marks per record: what an edit script
    (difflib) needs to turn ``a`` into ``b``: removed or changed records of ``a``, added or changed
    records of ``b``."""
    import difflib

    ka = [json.dumps(x, sort_keys=True, default=str) for x in a]
    kb = [json.dumps(x, sort_keys=True, default=str) for x in b]
    ma, mb = [""] * len(a), [""] * len(b)
    apart = [i for i in range(len(a)) if ka[i] != kb[i]] if len(a) == len(b) else []
    if len(apart) == 1:
        # one record replaced in place (replace neighbours): that position, whatever repeats
        # around it (an edit script may delete an equal record elsewhere and insert this one)
        ma[apart[0]] = mb[apart[0]] = "changed"
        return ma, mb
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, ka, kb, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        for i in range(i1, i2):
            ma[i] = "changed" if tag == "replace" else "removed"
        for j in range(j1, j2):
            mb[j] = "changed" if tag == "replace" else "added"
    if len(a) == len(b) and ma.count("removed") == 1 and mb.count("added") == 1 and not any(
            m == "changed" for m in ma + mb):
        # one record replaced, found elsewhere in the order (replace neighbours): one change
        ma[ma.index("removed")] = "changed"
        mb[mb.index("added")] = "changed"
    return ma, mb


def _window(values: list, marks: list[str], limit: int) -> tuple:
    """``(text, mark)`` per record, or None for a run of records left out of a long dataset."""
    n = len(values)
    if n <= limit:
        return tuple((record_text(v), m) for v, m in zip(values, marks))
    keep = set(range(min(5, n))) | set(range(max(0, n - 5), n))
    for i, m in enumerate(marks):
        if m:
            keep |= set(range(max(0, i - _AROUND), min(n, i + _AROUND + 1)))
    out: list = []
    gap = 0
    for i in range(n):
        if i in keep:
            if gap:
                out.append((None, gap))
                gap = 0
            out.append((record_text(values[i]), marks[i]))
        else:
            gap += 1
    if gap:
        out.append((None, gap))
    return tuple(out)


_MARK_WORDS = {"added": "the record in D′ and not in D", "removed": "the record in D and not in D′",
               "changed": "the record that differs between D and D′"}


def dataset_views(dataset: Any, neighbour: Any, limit: int = DATASET_SHOWN) -> tuple[tuple, str]:
    """D and D′ as :class:`DatasetView` (records in order, the differing ones marked), and one
    line saying what is marked; ``((), "")`` when they are not both lists."""
    if not isinstance(dataset, list) or not isinstance(neighbour, list):
        return (), ""
    ma, mb = _marks(dataset, neighbour)
    views = []
    for label, values, marks in (("D", dataset, ma), ("D′", neighbour, mb)):
        n = len(values)
        note = "empty" if n == 0 else f"{n:,} record{'' if n == 1 else 's'}"
        views.append(DatasetView(label, _window(values, marks, limit), n, note))
    kinds = [m for m in ("added", "removed", "changed") if m in ma or m in mb]
    marked = "; ".join(f"highlighted: {_MARK_WORDS[m]}" for m in kinds)
    if kinds == ["changed"] and ma.count("changed") == 1 and mb.count("changed") == 1:
        marked = (f"highlighted: the record replaced, {record_text(dataset[ma.index('changed')], 30)} in D and "
                  f"{record_text(neighbour[mb.index('changed')], 30)} in D′")
    if not kinds:
        marked = "D and D′ hold the same records" + ("" if dataset == neighbour else " in another order")
    return tuple(views), marked


def interval_text(x: Any) -> str:
    """``[lo, hi]`` with 4 significant digits, or the number, or ``—``."""
    if isinstance(x, (list, tuple)) and len(x) == 2:
        return f"[{fmt(x[0])}, {fmt(x[1])}]"
    return fmt(x) if x is not None else "—"


def number_text(x: Any, digits: int = 10) -> str:
    """A number with ``digits`` significant digits; anything else as text, ``—`` when absent."""
    return fmt(x, digits) if num(x) is not None else ("—" if x is None else str(x))


def privacy_claim_text(claim: Mapping[str, Any]) -> str:
    """``ε = 1 (pure DP), add-remove neighbours, domain [0, 1], size 10`` or ``ε = 1, δ = 1e-06,
    replace neighbours``: the whole claim, its domain and size where the record has them (a
    forged domain is then in plain sight), and who said so when the sandboxed code did."""
    eps, delta = claim.get("epsilon"), num(claim.get("delta")) or 0.0
    text = f"ε = {fmt(eps)}" + (f", δ = {fmt(delta)}" if delta else " (pure DP)")
    if claim.get("neighbours"):
        text += f", {claim['neighbours']} neighbours"
    domain = claim.get("domain")
    if isinstance(domain, (list, tuple)) and len(domain) == 2:
        text += f", domain [{fmt(domain[0], 6)}, {fmt(domain[1], 6)}]"
    if num(claim.get("size")) is not None:
        text += f", size {fmt(claim['size'])}"
    if isinstance(claim.get("declared_by"), str) and claim["declared_by"]:
        text += f" ({claim['declared_by']})"
    return text


def first_sentence(text: str, limit: int) -> str:
    """The first sentence of ``text``, cut at ``limit`` characters (summary table cells)."""
    first = text.split(". ")[0]
    first = first if len(first) <= limit else first[: limit - 1].rstrip() + "…"
    return first if first == text else first.rstrip(".") + (" …" if not first.endswith("…") else "")


class RecordKind:
    """One kind of record. Subclasses set :attr:`kind`, :attr:`description` and :attr:`rule` and
    write :meth:`claim_text` and :meth:`finding`; the defaults cover the rest.

    ``RecordKind(rec)`` wraps a record dict (read-only). Register a subclass with
    :func:`dpaudit.report.kinds.register_kind`, or from another distribution through the entry-point
    group ``dpaudit.record_kinds`` (``name = "package.module:Class"``).
    """

    __slots__ = ("rec",)

    #: the record's ``kind`` value
    kind: ClassVar[str] = ""
    #: what this kind of evidence is, in words (HTML "evidence", SARIF rule tag)
    description: ClassVar[str] = ""
    #: the SARIF rule a refutation of this kind reports under
    rule: ClassVar[SarifRule]
    #: more SARIF rules the kind's own results report under (:meth:`sarif_findings`), listed
    #: after every kind's :attr:`rule`
    extra_rules: ClassVar[tuple] = ()
    #: the label of the claim line ("Claim", or "Statement" for a paper's statement)
    claim_label: ClassVar[str] = "Claim"
    #: keys shown in a place of their own, beyond :data:`COMMON_SHOWN`
    shown: ClassVar[frozenset] = frozenset()
    #: a paragraph for the report's legend when records of this kind are present (our own HTML)
    legend: ClassVar[str] = ""
    #: record keys a SARIF result carries in its ``properties`` (when present)
    sarif_properties: ClassVar[tuple] = ("id", "target", "verdict", "expected", "claim", "epsilon_lower_bound",
                                         "delta_lower_bound", "confidence", "samples", "reproduce")
    #: the heading of :meth:`recheck`'s command
    recheck_label: ClassVar[str] = "Re-check alone"
    #: whether the HTML opens the first long text (a formal claim's SMT-LIB2 query)
    open_long_text: ClassVar[bool] = False

    def __init__(self, rec: Mapping[str, Any]) -> None:
        self.rec = rec

    # -- words ------------------------------------------------------------------------------------

    def claim_text(self) -> str:
        """The claim the record checks, in one line."""
        raise NotImplementedError

    def finding(self) -> str:
        """What was found (the record is not an ERROR), in one sentence."""
        return verdict_meaning(self.rec.get("verdict"))

    def finding_text(self) -> str:
        """The evidence behind the verdict in one sentence; an ERROR record's cause."""
        if self.rec.get("verdict") == Verdict.ERROR.value:
            return f"the check could not run: {self.rec.get('error') or 'unknown error'}"
        if self.rec.get("verdict") == Verdict.INTERRUPTED.value:
            return f"{self.rec.get('error') or 'interrupted'}"
        return self.finding()

    def summary_claim(self) -> str:
        """The claim as a summary table shows it (first sentence, shortened)."""
        return first_sentence(self.claim_text(), 120)

    def verdict_text(self) -> str:
        """The verdict as a terminal line shows it (``REFUTED``; a kind with several findings
        says which decided it: ``REFUTED (float64 only; …)``)."""
        return verdict_label(self.rec.get("verdict"))

    def lead(self) -> str:
        """The plain sentence a reader sees first: by default the verdict's meaning and the
        finding (after the verdict's label, :meth:`finding_blocks`)."""
        text = self.finding_text()
        meaning = verdict_meaning(self.rec.get("verdict"))
        if self.rec.get("verdict") in (Verdict.ERROR.value, Verdict.INTERRUPTED.value) and self.rec.get("error"):
            return meaning + "."
        if meaning and text.startswith(meaning):
            text = text[len(meaning):].lstrip("; ")
        if meaning and text:  # a new sentence: capitalised, but not a symbol (ε, μ, δ stay)
            head = text[:1].upper() if text[:1].isascii() else text[:1]
            return f"{meaning}. {head}{text[1:]}"
        return meaning or text

    def figure(self) -> str:
        """The record's headline number for a terminal line (``ε ≥ 1.02 (claimed 1)``), or ``""``."""
        return ""

    def epsilon_bound(self) -> str:
        """The ε lower bound for a summary table's column, ``""`` when the kind has none."""
        return ""

    # -- structure ----------------------------------------------------------------------------------

    def facts(self) -> list[tuple[str, str]]:
        """``(label, value)`` pairs describing the record (target, code, evidence, numbers, time)."""
        return self.head_facts() + self.own_facts() + self.tail_facts()

    def head_facts(self) -> list[tuple[str, str]]:
        rec = self.rec
        facts = [("target", str(rec.get("target", "")))]
        if rec.get("location"):
            loc = rec["location"]
            facts.append(("code", f"{loc.get('path')}:{loc.get('line')}"))
        facts.append(("evidence", self.description or str(rec.get("kind"))))
        return facts

    def own_facts(self) -> list[tuple[str, str]]:
        return []

    def tail_facts(self) -> list[tuple[str, str]]:
        rec = self.rec
        facts = []
        if rec.get("method"):
            facts.append(("method", str(rec["method"])))
        if rec.get("seed") is not None:
            facts.append(("seed", str(rec["seed"])))
        facts.append(("time", f"{fmt(rec.get('elapsed_s'), 3)} s"))
        return facts

    def scalar_facts(self, keys: tuple) -> list[tuple[str, str]]:
        """Facts for top-level scalar ``keys`` present in the record (label: the key in words)."""
        return [(k.replace("_", " "), number_text(self.rec[k], 4)) for k in keys
                if self.rec.get(k) is not None and not isinstance(self.rec[k], (dict, list))]

    def counterexample(self) -> Optional[CounterexampleView]:
        """The counterexample as rows (None when the record has none)."""
        cx = self.rec.get("counterexample")
        if not isinstance(cx, Mapping):
            return None
        return CounterexampleView(tuple((str(k), as_json(v)) for k, v in cx.items()))

    def long_texts(self) -> list[tuple[str, str]]:
        """Long or multi-line text fields (queries, proofs) for a block of their own."""
        det = self.rec.get("details")
        return long_text_fields(self.rec, det if isinstance(det, Mapping) else {})

    def extra(self) -> dict:
        """The record's keys not shown elsewhere."""
        shown = COMMON_SHOWN | self.shown
        return {k: v for k, v in self.rec.items() if k not in shown}

    def description_shown(self, description: str) -> bool:
        """Whether the record's ``description`` adds to its claim line (else it is left out)."""
        return True

    def recheck(self) -> str:
        """A second command that re-runs the check alone, when it differs from ``reproduce``."""
        return ""

    def plots(self, salt: str) -> list[tuple[str, str]]:
        """``[(caption, inline SVG)]`` (our own matplotlib output)."""
        return []

    def section_facts(self) -> list[tuple[str, str]]:
        """Facts of the whole record shown above its findings (none by default: one finding
        shows them all)."""
        return []

    def finding_blocks(self, salt: str, plots: bool = True) -> list[FindingBlock]:
        """What the HTML shows of the record's findings, one block each (one by default: the
        verdict's label and meaning, the facts, the counterexample and the plots)."""
        stats = self.stat_facts()
        return [FindingBlock(question=None, heading=None, verdict=str(self.rec.get("verdict")),
                             lead=self.lead(), lead_label=verdict_label(self.rec.get("verdict")),
                             counterexample=self.counterexample(),
                             plots=tuple(self.plots(salt)) if plots else (),
                             evidence=tuple(f for f in self.facts() if f not in stats), stats=tuple(stats))]

    def stat_facts(self) -> list[tuple[str, str]]:
        """Those of :meth:`facts` a statistician checks rather than a reviewer reads (folded
        under "statistical details"); none by default."""
        return []

    # -- formats ------------------------------------------------------------------------------------

    def expected(self) -> Optional[str]:
        """The verdict this record is held to (a suite control's ``expected``), or None."""
        return self.rec.get("expected")

    def junit_outcome(self) -> JUnitOutcome:
        """A record with an expected verdict passes when it meets it; otherwise REFUTED fails,
        ERROR errs, INCONCLUSIVE is skipped ("not a pass"), NOT REFUTED and PROVED pass."""
        verdict, expected = self.rec.get("verdict"), self.expected()
        finding = self.finding_text()
        if expected is not None:
            if verdict == expected:
                return JUnitOutcome("passed")
            return JUnitOutcome("failure", f"expected {verdict_label(expected)}, got {verdict_label(verdict)}: "
                                f"{finding}", "dpaudit.ExpectationMismatch")
        if verdict == Verdict.REFUTED.value:
            return JUnitOutcome("failure", f"claim refuted: {finding}", "dpaudit.Refuted")
        if verdict == Verdict.ERROR.value:
            return JUnitOutcome("error", self.rec.get("error") or "error", "dpaudit.Error")
        if verdict == Verdict.INTERRUPTED.value:
            return JUnitOutcome("error", f"INTERRUPTED (not a pass): {finding}", "dpaudit.Interrupted")
        if verdict == Verdict.INCONCLUSIVE.value:
            return JUnitOutcome("skipped", f"INCONCLUSIVE (not a pass): {finding}")
        return JUnitOutcome("passed")

    def report_lines(self, notes: bool = True) -> list[str]:
        """Plain-text lines a text report (JUnit's) adds after the finding: one per finding of a
        kind with several, each at its call site, its notes too unless ``notes`` is False (none by
        default)."""
        return []

    def tables(self) -> list[TableView]:
        """Tables of the whole record, folded under the findings (none by default)."""
        return []

    def sarif_findings(self) -> Optional[list[SarifFinding]]:
        """The record's SARIF results when the kind words them itself (one per finding, each at
        its own location), or None for the default: one result when the record is REFUTED."""
        return None

    def sarif_expected(self) -> Optional[str]:
        """The verdict a SARIF consumer should treat as intended (suppressed when REFUTED)."""
        return self.expected()

    def sarif_message(self, title: str) -> str:
        return f"{title}: the claim {self.claim_text()} is REFUTED: {self.finding_text()}."

    def sarif_justification(self) -> str:
        return "negative control: this broken variant is expected to be refuted"


class GenericRecord(RecordKind):
    """A record whose kind no registered class knows (a plugin not installed here): shown with
    its statement or claim as given, and the verdict's own meaning."""

    __slots__ = ()
    rule = SarifRule("DPA000", "ClaimRefuted", "A claim is refuted.",
                     "A check of a kind this dpaudit does not know refuted a claim; see the record.")
    shown = frozenset({"epsilon_lower_bound", "delta_lower_bound", "confidence", "samples", "counterexample",
                       "statement", "source", "bound"})
    sarif_properties = RecordKind.sarif_properties + ("recorded_verdict", "source", "statement", "spec", "observed",
                                                      "bound", "recheck")

    def claim_text(self) -> str:
        rec, claim = self.rec, self.rec.get("claim")
        if isinstance(claim, Mapping) and "epsilon" in claim:
            return privacy_claim_text(claim)
        for key in ("statement", "description", "claim"):
            v = rec.get(key)
            if isinstance(v, str) and v:
                return v
        if isinstance(claim, Mapping):
            return ", ".join(f"{k} = {fmt(v) if num(v) is not None else v}" for k, v in claim.items())
        return str(rec.get("target", ""))

    def own_facts(self) -> list[tuple[str, str]]:
        return self.scalar_facts(("bound", "source"))


#: long text fields (SMT-LIB2 queries, proofs) get a block of their own
LONG_TEXT_MIN = 160
_NOT_LONG = ("reproduce", "error", "target", "title", "description")


def long_text_fields(rec: Mapping[str, Any], details: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Multi-line or long string fields of the record and of its details (and lists of
    SMT-LIB2 assertions), as ``(key, text)``."""
    out: list[tuple[str, str]] = []
    for where in (rec, details):
        for k, v in where.items():
            if k in _NOT_LONG:
                continue
            if isinstance(v, str) and ("\n" in v or len(v) >= LONG_TEXT_MIN):
                out.append((k, v))
            elif isinstance(v, list) and v and all(isinstance(s, str) and ("\n" in s or "(assert" in s) for s in v):
                out.extend((f"{k} [{i}]", s) for i, s in enumerate(v))
    return out
