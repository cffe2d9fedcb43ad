"""The two findings of an audit record, read for the reports: "logic" and "float" (float64).

Every ``audit`` and ``exact`` record answers two questions with separate evidence
(the record contract: ``float_policy``, ``decided_by``, ``findings: {"logic": F, "float": F}``):

* **logic**: is the claim right for the mechanism as a model over the reals (thresholds,
  intervals, scores, joint events)?
* **float**: is the float64 implementation safe (float-structure events: porosity, signed zero,
  non-finite outputs; Mironov 2012)?

The top-level ``verdict`` is the overall one under the float policy (``error``: a porous
implementation refutes; ``warn``: a float-only refutation is a warning and the verdict is NOT
REFUTED; ``off``: only the logic question is asked), and the top-level bounds, counterexample and
details are those of the finding named by ``decided_by``. A record written before the split has no
``findings``: :func:`findings_of` returns None and every renderer shows it as one finding, as it
always did.

This module only reads records (no kinds, no formats): :func:`findings_of`, :func:`finding_record`
(a finding as a record of its own, so a kind words it like any record), and the short texts every
format shares: :func:`porosity_text` (at most two cells named), :func:`float_status` (the
terminal's ``float64: porous (…)`` tail) and :data:`FLOAT_FIX`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from dpaudit.report.formatting import fmt, num, pair_records, verdict_label

__all__ = ["LOGIC", "FLOAT", "REPLAY", "NOT_APPLICABLE", "QUESTIONS", "FLOAT_FIX", "LOGIC_FIRST",
           "logic_refuted", "float_fix",
           "FindingView", "findings_of",
           "finding_record", "float_policy", "porosity_text", "is_float_event", "float_status",
           "question_label", "float_only", "float_warning", "policies", "POLICY_MEANING", "verdict_tag",
           "event_words", "finding", "short_tag", "out_of_reach", "FLOAT_REASONS", "float_reason"]

LOGIC = "logic"
FLOAT = "float"
NOT_APPLICABLE = "not_applicable"
#: the questions in the order every report shows them
QUESTIONS = (LOGIC, FLOAT)
#: ``decided_by`` of an audit whose replay stage alone refutes (a declared sensitivity exceeded
#: that the sampling did not confirm: :func:`dpaudit.replay.stage.verdict_of_stage`)
REPLAY = "replay"

#: what to do about a porous float64 implementation (Mironov 2012, the snapping mechanism)
FLOAT_FIX = ("snap the output to a grid (Mironov 2012) or use integer noise (a discrete Laplace or "
             "discrete Gaussian, Canonne, Kamath and Steinke 2020)")
#: the float64 finding's advice when the logic is refuted too
LOGIC_FIRST = ("the logic first, then audit again: while the claim fails over the reals, a "
               "float64 finding cannot be told apart from that failure")
#: ... about a NaN or ±inf that one dataset gives and the other does not, and a zero's sign
NON_FINITE_FIX = ("make the output finite on every dataset (guard what gives NaN or ±inf: an empty "
                  "dataset, a division, an overflow)")
SIGNED_ZERO_FIX = "release +0.0 for every zero (add 0.0 to the output)"
#: ... about outputs of more than one type (a Python float among numpy.float64 values)
OTHER_TYPE_FIX = ("return every output as one type (a reader tells a Python float from a "
                  "numpy.float64, and here the type depends on the data)")
#: ... about a mantissa bit whose value depends on the data (a payload in the bits of a value)
HIDDEN_BIT_FIX = ("find what writes the data into the output's bits (a bit-level operation on a "
                  "noisy value, a value built from bytes): no snapping or noise scale fixes it")


#: a float64 event's reason (:mod:`dpaudit.estimators.events`, :mod:`dpaudit.auditor`) as the
#: reports name it, what its cells are, and what to do about it; any other reason is porosity's
FLOAT_REASONS: dict[str, tuple[str, str, str]] = {
    "porosity": ("porosity", "binade and trailing zero mantissa bits", FLOAT_FIX),
    "signed-zero": ("signed zero", "the sign of a zero", SIGNED_ZERO_FIX),
    "hidden-bit": ("hidden bit", "the value of mantissa bit {bit}, a bit the data sets", HIDDEN_BIT_FIX),
    "output-type": ("output type", "an output of another type", OTHER_TYPE_FIX),
}


def float_reason(event: Mapping[str, Any]) -> tuple[str, str, str]:
    """``(name, what its cells are, fix)`` of a float64 event (:data:`FLOAT_REASONS`)."""
    name, cells, fix = FLOAT_REASONS.get(str(event.get("reason")), FLOAT_REASONS["porosity"])
    return name, cells.format(bit=event.get("bit")), fix


def logic_refuted(record: Optional[Mapping[str, Any]]) -> bool:
    """Whether an audit record's logic finding refutes its claim."""
    f = finding(record, LOGIC) if isinstance(record, Mapping) else None
    return f is not None and f.refuted


def float_fix(rec: Mapping[str, Any], record: Optional[Mapping[str, Any]] = None) -> str:
    """What to do about a refuting float64 finding ``rec`` (a finding's record) of the audit
    ``record``: :data:`LOGIC_FIRST` when the record's logic finding refutes too (the float64
    question asks whether the implementation leaks beyond a claim that holds over the reals: a
    noise scale halved showed as "porous" cells, and the advice to snap was wrong); else its event's own
    fix where the event is only non-finite outputs or a zero's sign (snapping fixes neither),
    else :data:`FLOAT_FIX`."""
    if logic_refuted(record):
        return LOGIC_FIRST
    cx = rec.get("counterexample") if isinstance(rec.get("counterexample"), Mapping) else {}
    event = cx.get("event") if isinstance(cx.get("event"), Mapping) else {}
    cells = event.get("cells") if isinstance(event.get("cells"), list) else []
    if event.get("reason") != "output-type" and cells \
            and all("(non-finite output)" in str(c) for c in cells):
        return NON_FINITE_FIX  # NaN or ±inf itself (the other type's cell has its own fix)
    return float_reason(event)[2]

#: how each question is named in reports (the record's word for the second is "float")
_LABELS = {LOGIC: "logic", FLOAT: "float64"}
_HEADINGS = {LOGIC: "Logic: the claim for the mechanism as a model over the reals",
             FLOAT: "Float64: the implementation's output bits (porosity)"}
#: the policies, and what each does with a float-only refutation
POLICY_MEANING = {"error": "a porous float64 implementation refutes the claim",
                  "warn": "a porous float64 implementation is a warning; the verdict is the logic one",
                  "off": "the float64 question is not asked"}

#: the keys of a finding that replace the record's own in :func:`finding_record`
_FINDING_KEYS = ("verdict", "reason", "epsilon_lower_bound", "delta_lower_bound", "counterexample", "p_value",
                 "margin", "marginal", "power", "confidence", "details", "samples", "error", "limits")


def question_label(question: Optional[str]) -> str:
    """``logic`` or ``float64`` (the name reports use)."""
    return _LABELS.get(str(question), str(question or ""))


@dataclass(frozen=True, slots=True)
class FindingView:
    """One finding of a record: its ``question`` (``logic`` | ``float``), its ``verdict`` (a
    verdict value or ``not_applicable``), ``reason`` (why there is no question), whether it
    ``decides`` the record's verdict, the record's float ``policy``, and ``rec``: the finding as a
    record of its own (:func:`finding_record`)."""

    question: str
    verdict: str
    reason: Optional[str]
    decides: bool
    policy: Optional[str]
    rec: Mapping[str, Any]

    @property
    def label(self) -> str:
        return question_label(self.question)

    @property
    def heading(self) -> str:
        return _HEADINGS.get(self.question, self.label)

    @property
    def applicable(self) -> bool:
        return self.verdict != NOT_APPLICABLE

    @property
    def refuted(self) -> bool:
        return self.verdict == "refuted"

    @property
    def warning(self) -> bool:
        """A float finding that refutes, under ``--float warn``: reported, not failing."""
        return self.question == FLOAT and self.refuted and self.policy == "warn"

    def verdict_text(self) -> str:
        """``REFUTED``, ``NOT REFUTED``, …, or ``NOT APPLICABLE``."""
        return "NOT APPLICABLE" if not self.applicable else verdict_label(self.verdict)

    def short_reason(self) -> str:
        """The reason without its explanation: ``outputs are integers``, ``--float off``."""
        reason = str(self.reason or "")
        if self.policy == "off" and self.question == FLOAT:
            return "--float off"
        return reason.split(":")[0].strip() or "not asked"


def float_policy(rec: Mapping[str, Any]) -> Optional[str]:
    """The record's float policy (``error`` | ``warn`` | ``off``), or None for an older record."""
    policy = rec.get("float_policy")
    return policy if isinstance(policy, str) and policy else None


def policies(records: Any) -> list[str]:
    """The float policies of ``records``, each once, in first-seen order."""
    out: list[str] = []
    for rec in records:
        if isinstance(rec, Mapping):
            p = float_policy(rec)
            if p and p not in out:
                out.append(p)
    return out


def findings_of(rec: Mapping[str, Any]) -> Optional[list[FindingView]]:
    """The record's findings in report order (logic, then float), or None when it has none (a
    record written before the split, or a kind that makes one finding). A float finding that
    was not asked is left out of a record without a float policy (a result built by hand)."""
    raw = rec.get("findings")
    if not isinstance(raw, Mapping) or not raw:
        return None
    policy = float_policy(rec)
    decided = rec.get("decided_by")
    names = [q for q in QUESTIONS if q in raw] + [q for q in raw if q not in QUESTIONS]
    out = []
    for q in names:
        f = raw[q]
        if not isinstance(f, Mapping):
            continue
        verdict = str(f.get("verdict") or NOT_APPLICABLE)
        if q != LOGIC and verdict == NOT_APPLICABLE and policy is None:
            continue  # a result built without a float policy (by hand, in a test) asked no such question
        out.append(FindingView(question=str(f.get("question") or q), verdict=verdict,
                               reason=f.get("reason") if isinstance(f.get("reason"), str) else None,
                               decides=(decided == q) if decided else (q == LOGIC),
                               policy=policy, rec=finding_record(rec, q)))
    return out or None


def finding(rec: Mapping[str, Any], question: str) -> Optional[FindingView]:
    """The record's finding for ``question``, or None."""
    for f in findings_of(rec) or ():
        if f.question == question:
            return f
    return None


def finding_record(rec: Mapping[str, Any], question: str) -> dict:
    """The finding ``question`` of ``rec`` as a record of its own: the record's keys (target,
    claim, reproduce, …) with the finding's verdict, bounds, counterexample, strength, confidence
    and details in place of the top-level ones, so that a record kind words it."""
    f = (rec.get("findings") or {}).get(question) or {}
    out = {k: v for k, v in rec.items() if k not in ("findings",)}
    decided = rec.get("decided_by", LOGIC) == question
    for key in _FINDING_KEYS:
        if key in f and not (decided and key == "details" and not f[key] and rec.get(key)):
            out[key] = f[key]
        elif key in ("counterexample", "p_value", "margin", "marginal", "power") and not decided:
            out[key] = None
    if out.get("samples") is None:
        out["samples"] = rec.get("samples")
    if out.get("confidence") is None:
        out["confidence"] = rec.get("confidence")
    if out.get("details") is None:
        out["details"] = {}
    out["question"] = question
    return out


def float_only(rec: Mapping[str, Any]) -> bool:
    """The float finding refutes and the logic one does not."""
    fs = {f.question: f for f in findings_of(rec) or ()}
    return FLOAT in fs and fs[FLOAT].refuted and LOGIC in fs and not fs[LOGIC].refuted


def float_warning(rec: Mapping[str, Any]) -> bool:
    """The float finding refutes under ``--float warn`` (a warning, not a failure)."""
    f = finding(rec, FLOAT)
    return f is not None and f.warning


# -- the porosity text ----------------------------------------------------------------------------

_CELLS_IN_ALL = re.compile(r"\((\d+) cells in all\)")
_MORE = re.compile(r",? and (\d+) more cells?\b")
#: the parenthesis that ends a float event's text: its shares on D and D′, or the older notes
_SHARE = re.compile(r"\((porosity|signed zero|a hidden bit|an output of another type|non-finite|never|\d)")


def is_float_event(event: Any) -> bool:
    return isinstance(event, Mapping) and event.get("kind") == "float-structure"


def _split_tail(text: str) -> tuple[str, str]:
    """``text`` as (cells, trailing parenthesis): the share ``(12.1% of outputs on D, never on D′)``
    or the older ``(porosity: …)`` note that ends the event text."""
    text = text.strip()
    if not text.endswith(")"):
        return text, ""
    depth = 0
    for i in range(len(text) - 1, -1, -1):
        if text[i] == ")":
            depth += 1
        elif text[i] == "(":
            depth -= 1
            if depth == 0:
                tail = text[i:]
                if not _SHARE.match(tail):
                    return text, ""
                return text[:i].rstrip(), tail
    return text, ""


def porosity_text(event: Any, limit: int = 2) -> str:
    """A float-structure event in words, naming at most ``limit`` cells: ``outputs in (−0.03125,
    −0.015625] with exactly 6 trailing zero mantissa bits, outputs in … … and 29 more cells
    (40.19% of the outputs on D, never on D′)``. The share note keeps its first clause only."""
    if not isinstance(event, Mapping):
        return ""
    text = str(event.get("text") or "")
    head, tail = _split_tail(text)
    total = None
    m = _CELLS_IN_ALL.search(head)
    if m:
        total = int(m.group(1))
    codes = event.get("cell_codes") if isinstance(event.get("cell_codes"), list) else None
    parts = [p.strip() for p in head.split(";")]
    parts = [p for p in parts if p and not p.startswith("…") and not _CELLS_IN_ALL.fullmatch(p)]
    more = 0
    if parts:
        m = _MORE.search(parts[-1])
        if m:  # the core's own "…, and N more cells"
            more = int(m.group(1))
            parts[-1] = parts[-1][:m.start()].rstrip(", ")
            parts = [p for p in parts if p]
    if total is None:
        total = len(codes) if codes else len(parts) + more
    total = max(total, len(parts) + more)
    shown = parts[:limit]
    rest = total - len(shown)
    words = "; ".join(shown) if shown else (text if not tail else head)
    if rest > 0:
        words += f" … and {rest} more cell{'' if rest == 1 else 's'}"
    if tail:
        note = tail[1:-1]
        note = re.sub(r"^(porosity|signed zero|a hidden bit):\s*", "", note).split(";")[0].strip()
        if note:
            words += f" ({note})"
    return words


def event_words(event: Any, limit: int = 2) -> str:
    """The event in words: a float-structure event by :func:`porosity_text`, any other by its
    text."""
    if is_float_event(event):
        return porosity_text(event, limit)
    if isinstance(event, Mapping):
        return str(event.get("text") or "")
    return "" if event is None else str(event)


def out_of_reach(rec: Mapping[str, Any]) -> str:
    """A finding record's reason when no outcome of its run could have refuted the claim (its
    limits' ``out_of_reach``, :mod:`dpaudit.estimators.limits`), else ``""``."""
    lim = rec.get("limits")
    if not isinstance(lim, Mapping) or not lim.get("out_of_reach") or rec.get("verdict") != "inconclusive":
        return ""
    return str(rec.get("reason") or "the claim is out of this run's reach")


def undecided_reason(rec: Mapping[str, Any]) -> str:
    """Why an INCONCLUSIVE finding record could not decide, where it says: out of its run's reach
    (:func:`out_of_reach`), or what the audit could not see (its ``reason``: no event to choose
    among outputs each a category of their own); ``""`` for a run cut by its time limit, which
    its line says otherwise, and for any other verdict."""
    reach = out_of_reach(rec)
    if reach or rec.get("verdict") != "inconclusive":
        return reach
    details = rec.get("details") if isinstance(rec.get("details"), Mapping) else {}
    if details.get("timed_out") or rec.get("timed_out"):
        return ""
    return str(rec.get("reason") or "")


def float_status(rec: Mapping[str, Any]) -> str:
    """The float64 finding in a few words for the terminal line and the summaries:
    ``float64: porous (ε ≥ 8.35: outputs in …; fix: …)``, ``float64: porous (warning, --float
    warn) (…)``, ``float64: porosity not found (ε ≥ 0.9)``, ``float64: no question (outputs are
    integers)``, ``float64: not asked (--float off)``; ``""`` when the record has no float
    finding."""
    f = finding(rec, FLOAT)
    if f is None:
        return ""
    r = f.rec
    eps = r.get("epsilon_lower_bound")
    bound = f"ε ≥ {fmt(eps)}" if num(eps) is not None else ""
    if not f.applicable:
        if f.short_reason() == "--float off":
            from dpaudit.report.provenance import float_source

            return f"float64: not asked ({float_source(rec)})"
        return f"float64: no question ({f.short_reason()})"
    if f.verdict == "refuted":
        cx = r.get("counterexample") if isinstance(r.get("counterexample"), Mapping) else {}
        where = event_words(cx.get("event"))
        top = rec.get("counterexample") if isinstance(rec.get("counterexample"), Mapping) else {}
        pair = (cx.get("dataset"), cx.get("neighbour"))
        if where and pair[0] is not None and pair != (top.get("dataset"), top.get("neighbour")):
            d, dn = pair_records(pair[0], pair[1])
            where = f"on D = {d}, D′ = {dn}, {where}"  # not the line's pair
        inner = "; ".join(x for x in (f"{bound}: {where}" if bound and where else bound or where,
                                      f"fix: {float_fix(r, rec)}") if x)
        tag = " (warning, --float warn)" if f.warning else ""
        word = "refutes too" if logic_refuted(rec) else "porous"  # porous: beyond a sound logic
        return f"float64: {word}{tag} ({inner})"
    if f.verdict == "not_refuted":
        # not refuted is not shown: "not porous" read as a proof where a larger budget refuted
        return f"float64: porosity not found ({bound})" if bound else "float64: porosity not found"
    if f.verdict == "error":
        return f"float64: could not run ({r.get('error') or 'error'})"
    if out_of_reach(r):
        return "float64: out of this run's reach" + (f" ({bound})" if bound else "")
    return f"float64: {verdict_label(f.verdict)}" + (f" ({bound})" if bound else "")


def replay_violation(rec: Mapping[str, Any]) -> str:
    """The replay stage's violation that decided a record, in a few words: ``an exact privacy
    loss ε = 5 (no sampling)`` or ``a declared sensitivity exceeded``."""
    stage = rec.get("replay") if isinstance(rec.get("replay"), Mapping) else {}
    for f in stage.get("findings") or ():
        if isinstance(f, Mapping) and f.get("kind") == "exact_loss_exceeded":
            v = f.get("values") if isinstance(f.get("values"), Mapping) else {}
            eps = num(v.get("epsilon_exact"))
            if eps is None and str(v.get("epsilon_exact")) == "inf":
                return "an exact privacy loss with no finite ε (no sampling)"
            word = "" if v.get("exact") is not False else "at least "
            return (f"an exact privacy loss ε = {word}{fmt(eps)} (no sampling)" if eps is not None
                    else "an exact privacy loss above the claim (no sampling)")
    return "a declared sensitivity exceeded"


def verdict_tag(rec: Mapping[str, Any]) -> str:
    """What qualifies the record's verdict label when its two findings differ: ``(logic)`` when
    the float finding refutes too (or warns) and the verdict is the logic one, ``(float64 only;
    the logic is NOT REFUTED, ε ≥ 0.49)`` when the float finding alone decides; ``""`` otherwise."""
    fs = {f.question: f for f in findings_of(rec) or ()}
    logic, flt = fs.get(LOGIC), fs.get(FLOAT)
    if rec.get("decided_by") == REPLAY and rec.get("verdict") == "refuted":
        eps = logic.rec.get("epsilon_lower_bound") if logic is not None else None
        bound = f", ε ≥ {fmt(eps)}" if num(eps) is not None else ""
        said = f"{logic.verdict_text()}{bound}" if logic is not None else "not asked"
        return f"(replay: {replay_violation(rec)}; the sampling is {said})"
    if logic is None or flt is None or rec.get("verdict") == "error":
        return ""
    if flt.decides and flt.refuted:
        eps = logic.rec.get("epsilon_lower_bound")
        bound = f", ε ≥ {fmt(eps)}" if num(eps) is not None and logic.verdict != "error" else ""
        if logic.refuted:
            return f"(float64; the logic is REFUTED too{bound})"
        return f"(float64 only; the logic is {logic.verdict_text()}{bound})"
    if flt.refuted:
        return "(logic)"
    return ""


def short_tag(rec: Mapping[str, Any]) -> str:
    """:func:`verdict_tag` in a word or two, for a table cell: ``logic``, ``float64 only``,
    ``float64``, or ``float64 warning`` (a float-only refutation under ``--float warn``)."""
    tag = verdict_tag(rec)
    if tag.startswith("(replay"):
        return "replay"
    if tag.startswith("(float64 only"):
        return "float64 only"
    if tag.startswith("(float64"):
        return "float64"
    if float_warning(rec):
        return "float64 warning"
    return "logic" if tag else ""
