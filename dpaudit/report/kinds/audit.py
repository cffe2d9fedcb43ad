"""Privacy-audit records: the sampled (black-box) audit and the exact (white-box) audit.

Both check an (ε, δ) claim on neighbouring datasets D, D′ and report a lower bound on
ln((p − δ)/q) and on δ(ε) = p − e^ε q at the claimed ε (a sampled audit's from Clopper-Pearson bounds
at a family-wise confidence, by the method its ``bound_method`` names: ``marginal`` is
ln((p_lo − δ)/q_hi), ``paired`` counts the pairs together, dpaudit/estimators/bounds.py; exact
values for an exact one; docs/math.md#oblivious-noise). The
record's keys are those of :meth:`dpaudit.results.AuditResult.to_record`; the facts read from its
``details`` are listed in :data:`SampledAudit.DETAIL_FACTS` and :data:`ExactAudit.DETAIL_FACTS`.
"""

from __future__ import annotations

import dataclasses

import math
from typing import Any, ClassVar, Mapping, Optional

from dpaudit.report import findings as fnd
from dpaudit.report.formatting import (delta_floor, fmt, num, pair_records, percent, verdict_label,
                                       verdict_meaning)
from dpaudit.report.kinds.base import (CounterexampleView, FindingBlock, RecordKind, SarifRule, as_json,
                                       dataset_views, interval_text, number_text, privacy_claim_text,
                                       short)
from dpaudit.results import Verdict

__all__ = ["PrivacyAudit", "SampledAudit", "ExactAudit", "counterexample_text", "refuting_pair",
           "plain_sentence", "times_text"]


def refuting_pair(rec: Mapping[str, Any]) -> str:
    """``; counterexample D = …`` for a REFUTED record with a counterexample, else ``""``."""
    cx = rec.get("counterexample")
    if rec.get("verdict") == Verdict.REFUTED.value and isinstance(cx, Mapping):
        return f"; counterexample {counterexample_text(cx)}"
    return ""


def counterexample_text(cx: Mapping[str, Any]) -> str:
    """``D = [...], D′ = [...], event output ≥ 0.7`` (D and D′ each cut to six records around the
    record that differs, marked ⟨…⟩, every record by its shortest exact repr: ``formatting.
    pair_records``; a float-structure event as ``porosity: …`` naming at most two cells)."""
    parts = []
    if isinstance(cx.get("dataset"), list) and isinstance(cx.get("neighbour"), list):
        d, dn = pair_records(cx["dataset"], cx["neighbour"])  # around the record that differs, marked
        parts += [f"D = {d}", f"D′ = {dn}"]
    else:
        if "dataset" in cx:
            parts.append(f"D = {short(cx['dataset'])}")
        if "neighbour" in cx:
            parts.append(f"D′ = {short(cx['neighbour'])}")
    event = cx.get("event")
    if fnd.is_float_event(event):
        parts.append(f"{fnd.float_reason(event)[0]}: {fnd.porosity_text(event)}")
    elif isinstance(event, Mapping) and event.get("text"):
        parts.append(f"event {event['text']}")
    return ", ".join(parts)


def times_text(x: float) -> str:
    """A ratio for people: ``2.72``, ``902``, ``12,300``, ``1.2 × 10^130``, ``∞``."""
    if math.isinf(x):
        return "∞"
    if x < 10:
        return f"{x:.3g}"
    if x < 1e6:
        digits = int(math.floor(math.log10(x)))
        return f"{round(x, 2 - digits):,.0f}"
    mant, exp = f"{x:.1e}".split("e")
    return f"{mant} × 10^{int(exp)}"


def _ratio(eps: Optional[float]) -> str:
    if eps is None:
        return "—"
    return times_text(math.exp(eps)) if eps < 700 else "∞"


def _share(p: Any) -> str:
    """A probability as a share of outputs: ``91.8%``, ``0.033%``, ``never``."""
    v = num(p)
    if v is None:
        return "—"
    if v == 0:
        return "never"
    return f"{100 * v:.3g}%"


def _event_phrase(cx: Mapping[str, Any]) -> str:
    event = cx.get("event")
    words = fnd.event_words(event)
    phrase = f"“{words}”" if words else "the event found"
    score = event.get("score") if isinstance(event, Mapping) and event.get("kind") == "score" else None
    weights = score.get("weights") if isinstance(score, Mapping) else None
    if isinstance(weights, list) and len(weights) > 1 and all(num(w) is not None for w in weights):
        top = max(range(len(weights)), key=lambda i: abs(num(weights[i]) or 0.0))
        phrase += f" (a score led by coordinate {top} of the output)"
    return phrase


def _delta_gap(rec: Mapping[str, Any], cx: Mapping[str, Any], eps: Any, exact: bool) -> str:
    """The start of a refuted (ε, δ) claim's sentence, up to the δ gap's value: from the two
    intervals shown (``marginal``, p_lo − e^ε q_hi), or from the pairs counted together
    (``paired``, which is not that difference: dpaudit/estimators/bounds.py)."""
    p, q = cx.get("p"), cx.get("q")
    least = "" if exact else "at least "
    details = rec.get("details") if isinstance(rec.get("details"), Mapping) else {}
    if details.get("bound_method") == "betting":
        return (f"On D the event {_event_phrase(cx)} happens in {_share(p)} of outputs and on D′ "
                f"in {_share(q)}; a test by betting on draws like these (each bet on an event chosen "
                f"before it, S the last) shows the mechanism's δ at this ε is {least}")
    if details.get("bound_method") == "paired":
        return (f"On D the event {_event_phrase(cx)} happens in {_share(p)} of outputs and on D′ "
                f"in {_share(q)}; counted on pairs drawn with the same randomness, P[D] − e^ε·P[D′] "
                f"is {least}")
    p_lo = (cx.get("p_interval") or [p])[0] if isinstance(cx.get("p_interval"), list) else p
    q_hi = (cx.get("q_interval") or [None, q])[-1] if isinstance(cx.get("q_interval"), list) else q
    scaled = (math.exp(eps) * num(q_hi)) if eps is not None and num(q_hi) is not None else None
    allowed = _ratio(eps) if eps is not None else "—"
    return (f"On D the event {_event_phrase(cx)} has probability {least}{fmt(p_lo, 3)}, "
            f"more than e^ε = {allowed} times its probability on D′ ({'at most ' if not exact else ''}"
            f"{fmt(q_hi, 3)}, times e^ε: {fmt(scaled, 3)}) by ")


def plain_sentence(rec: Mapping[str, Any]) -> str:
    """One plain sentence saying what was found, for a reviewer who is no statistician: how
    many times likelier the event is on D than on D′ against what the claim allows (e^ε_LB
    against e^ε), or for a δ claim the probability gap against δ; for NOT REFUTED the best event
    and "this is not a proof"; for a float finding the bits that tell D from D′."""
    verdict = rec.get("verdict")
    claim = rec.get("claim") if isinstance(rec.get("claim"), Mapping) else {}
    eps, delta = num(claim.get("epsilon")), num(claim.get("delta")) or 0.0
    eps_lb, delta_lb = num(rec.get("epsilon_lower_bound")), num(rec.get("delta_lower_bound"))
    cx = rec.get("counterexample") if isinstance(rec.get("counterexample"), Mapping) else None
    flt = rec.get("question") == fnd.FLOAT
    conf = num(rec.get("confidence"))
    exact = rec.get("kind") == "exact"
    least = "" if exact else "at least "
    at_conf = "" if exact or conf is None else f" (at {percent(conf)}% confidence)"
    allowed = _ratio(eps) if eps is not None else "—"
    claim_words = f"a claim of ε = {fmt(eps)}" if not delta else f"a claim of ε = {fmt(eps)}, δ = {fmt(delta)}"
    if verdict == Verdict.ERROR.value:
        return f"The check could not run: {rec.get('error') or 'unknown error'}."
    if verdict == Verdict.INTERRUPTED.value:
        done = [str(s) for s in rec.get("stages_finished") or [] if isinstance(s, str)]
        return ("The run was interrupted before the audit decided (Ctrl-C or a signal): this is not "
                "a pass. " + (f"Finished before the interruption: {'; '.join(done)}." if done
                              else "No stage had finished.") + _sampled_before(rec))
    if verdict == fnd.NOT_APPLICABLE:
        reason = str(rec.get("reason") or "")
        if rec.get("float_policy") == "off":
            from dpaudit.report.provenance import float_source

            # as the verdict line says it: the flag, the pyproject.toml or the mechanism's decorator
            return f"Not asked ({float_source(rec)}): only the logic question was audited."
        return f"No float64 question here: {reason.split(':')[0] or 'not asked'}."
    if verdict == Verdict.INCONCLUSIVE.value:
        details = rec.get("details") if isinstance(rec.get("details"), Mapping) else {}
        reach = details.get("out_of_reach") or fnd.undecided_reason(rec)
        if reach:
            return f"The audit could not decide: {reach}. This is not a pass."
        return ("The audit could not decide" + (" (cut short by the time limit)" if details.get("timed_out")
                                                else "") + ": this is not a pass.")
    if verdict == Verdict.REFUTED.value and cx is not None:
        p, q = cx.get("p"), cx.get("q")
        seen = f"{_share(p)} of outputs on D, {_share(q)} on D′"
        if flt:
            event = cx.get("event") if isinstance(cx.get("event"), Mapping) else {}
            codes = event.get("cell_codes")
            cells = (f"{len(codes)} float64 cell{'' if len(codes) == 1 else 's'}" if isinstance(codes, list)
                     and codes else "float64 cells")
            rare = "never reach" if num(q) == 0 else f"reach only {_share(q)} of the time"
            return (f"The output's float64 bits tell D from D′: {_share(p)} of outputs on D fall in {cells} "
                    f"({fnd.float_reason(event)[1]}) that outputs on D′ {rare}, so these bits make "
                    f"D {least}{_ratio(eps_lb)} times likelier than D′{at_conf}; {claim_words} allows at most "
                    f"{allowed} times.")
        if delta and delta_lb is not None and delta_lb > delta:
            return _delta_gap(rec, cx, eps, exact) + (
                f"{fmt(delta_floor(delta_lb), 3)}{at_conf}; {claim_words} allows a gap of at most "
                f"δ = {fmt(delta)}.")
        if q is not None and num(q) == 0:
            return (f"On D the event {_event_phrase(cx)} happens in {_share(p)} of outputs and on D′ "
                    f"never: it is {least}{_ratio(eps_lb)} times likelier on D{at_conf}; "
                    f"{claim_words} allows at most {allowed} times.")
        conf_clause = at_conf.replace(" (", ", ").rstrip(")") if at_conf else ""
        return (f"On D the event {_event_phrase(cx)} is {least}{_ratio(eps_lb)} times likelier than on D′ "
                f"({seen}{conf_clause}); {claim_words} allows at most {allowed} times.")
    if verdict == Verdict.REFUTED.value:
        return (f"The claim is false: ε ≥ {fmt(eps_lb)}, so some output is {least}{_ratio(eps_lb)} times "
                f"likelier on one dataset than on its neighbour; {claim_words} allows at most {allowed} times.")
    # NOT REFUTED (or PROVED, which an audit never says)
    what = "float64 bits" if flt else "events"
    if cx is not None and eps_lb is not None and eps_lb > 0:
        return (f"No violation found: the most telling of the {what} tried, {_event_phrase(cx)}, is "
                f"{least}{_ratio(eps_lb)} times likelier on D than on D′ (ε ≥ {fmt(eps_lb)}), within the "
                f"{allowed} times {claim_words} allows. This is not a proof.")
    samples = num(rec.get("samples"))
    spent = f" with {int(samples):,} samples" if samples else ""
    if flt:
        return (f"No violation found: the output's float64 bits did not tell D from D′{spent}"
                + (f" (ε ≥ {fmt(eps_lb)})" if eps_lb is not None else "") + ". This is not a proof.")
    return (f"No violation found{spent}: no event was measurably likelier on D than on D′ beyond "
            f"the {allowed} times {claim_words} allows. This is not a proof.")


class PrivacyAudit(RecordKind):
    """An (ε, δ) claim checked on neighbouring pairs; ``claim`` is ``{epsilon, delta, neighbours}``.

    A record with ``findings`` has two: the logic one and the float64 one
    (:mod:`dpaudit.report.findings`); its top-level verdict is the overall one under its float
    policy, and its top-level bounds are those of the finding that decided it. Every method here
    reads either kind of record; :meth:`finding_blocks` shows each finding apart, the deciding one
    first."""

    __slots__ = ()
    shown = frozenset({"epsilon_lower_bound", "delta_lower_bound", "confidence", "samples", "counterexample",
                       "findings", "float_policy", "decided_by", "question"})
    #: ``details`` key -> fact label, in the order shown
    DETAIL_FACTS: ClassVar[tuple] = ()

    def claim(self) -> Mapping[str, Any]:
        claim = self.rec.get("claim")
        return claim if isinstance(claim, Mapping) else {}

    def claim_text(self) -> str:
        claim = self.rec.get("claim")
        if isinstance(claim, Mapping) and "epsilon" in claim:
            return privacy_claim_text(claim)
        return str(self.rec.get("target", ""))  # an error record has no claim

    def where(self) -> str:
        raise NotImplementedError

    def findings(self) -> Optional[list]:
        """The record's findings (:func:`dpaudit.report.findings.findings_of`), None before the split."""
        return fnd.findings_of(self.rec)

    def verdict_text(self) -> str:
        tag = fnd.verdict_tag(self.rec)
        label = verdict_label(self.rec.get("verdict"))
        return f"{label} {tag}" if tag else label

    def evidence_text(self) -> str:
        """The top-level finding in one sentence: ``ε ≥ 6.8 at 95.5% confidence (claimed ε = 1)
        from 4,179 samples (the logic finding's; the run drew 61,284 at 95% over its findings);
        counterexample D = […], D′ = […], event …``. The confidence and the samples are those of
        the finding whose bound it is, as every format shows that finding; the run's own
        numbers follow, named, where they differ."""
        own = self.numbers_record()
        if own is not self.rec:
            mine = {**self.rec, "confidence": own.get("confidence"), "samples": own.get("samples")}
            mine.pop("findings", None)
            text = type(self)(mine).evidence_text()
            whose = self.whose(own)
            if whose:
                head, sep, tail = text.partition("; counterexample")
                text = f"{head} ({whose}){sep}{tail}"
            return text
        rec, claim = self.rec, self.claim()
        eps_lb = rec.get("epsilon_lower_bound")
        text = f"ε ≥ {fmt(eps_lb)} {self.where()}".strip() if num(eps_lb) is not None else "no ε bound"
        approximate = (num(claim.get("delta")) or 0) > 0
        if num(rec.get("delta_lower_bound")) is not None and approximate:
            text += f"; δ ≥ {fmt(delta_floor(rec['delta_lower_bound']))} at ε = {fmt(claim.get('epsilon'))}"
        text += f" (claimed ε = {fmt(claim.get('epsilon'))}"
        text += f", δ = {fmt(claim.get('delta'))})" if approximate else ")"
        if rec.get("samples"):
            text += f" from {int(num(rec['samples']) or 0):,} samples"
        return text + refuting_pair(rec)

    def numbers_record(self) -> Mapping[str, Any]:
        """The finding record whose bound the top-level one is (the deciding question's; the
        logic finding's when the replay decided), or this record when it has no findings."""
        decided = self.rec.get("decided_by") or fnd.LOGIC
        question = fnd.LOGIC if decided == fnd.REPLAY else decided
        if not isinstance(self.rec.get("findings"), Mapping) or question not in self.rec["findings"]:
            return self.rec
        return fnd.finding_record(self.rec, question)

    def whose(self, own: Mapping[str, Any]) -> str:
        """``the logic finding's; the run drew 61,284 at 95% over its findings`` where the
        finding's confidence or samples differ from the run's, else ``""``."""
        conf, total = num(self.rec.get("confidence")), num(self.rec.get("samples"))
        if (num(own.get("confidence")), num(own.get("samples"))) == (conf, total) or conf is None:
            return ""
        name = "float64" if own.get("question") == fnd.FLOAT else str(own.get("question") or "logic")
        drew = f"the run drew {int(total):,} at" if total else "the run:"
        return f"the {name} finding's; {drew} {percent(conf)}% over its findings"

    def finding(self) -> str:
        """The deciding finding's evidence; with two findings, the float64 one after it
        (``float64: porous (…)``), or, when the float64 finding alone decided, the fix."""
        rec = self.rec
        if rec.get("verdict") == fnd.NOT_APPLICABLE:
            return plain_sentence(rec)
        text = self.evidence_text() + self.limits_clause()
        stage = self.replay_stage()
        # a finding's own record (question set: a report block, a JUnit case) has its own evidence;
        # the replay's is the whole record's, and its own block's and case's
        by_replay = rec.get("decided_by") == fnd.REPLAY and stage is not None and not rec.get("question")
        if by_replay:  # the replay's finding first; the float64 one still ends the line
            text = f"{stage.finding()}; the sampling: {text}"
        flt = fnd.finding(rec, fnd.FLOAT)
        if flt is None or rec.get("question"):
            return text
        if flt.decides and flt.refuted and not by_replay:
            return f"{text}; fix: {fnd.float_fix(flt.rec, rec)}"
        status = fnd.float_status(rec)
        return f"{text}; {status}" if status else text

    def limits_clause(self) -> str:
        """For a NOT REFUTED: what the budget could have shown at all (the record's ``limits``,
        :mod:`dpaudit.estimators.limits`): ``; this budget cannot show ε above 11.3 nor δ below
        4.1e-06``; for an INCONCLUSIVE whose claim was out of the budget's reach, why and what
        budget could reach it; empty otherwise."""
        lim = self.rec.get("limits")
        reach = fnd.undecided_reason(self.numbers_record())
        if reach and self.rec.get("verdict") == Verdict.INCONCLUSIVE.value and not self.rec.get("timed_out"):
            return f"; {reach}"
        if self.rec.get("verdict") != Verdict.NOT_REFUTED.value or not isinstance(lim, Mapping):
            return ""
        ceiling, floor = num(lim.get("epsilon_ceiling")), num(lim.get("delta_floor"))
        if ceiling is None or floor is None:
            return ""
        return f"; this budget cannot show ε above {fmt(ceiling)} nor δ below {fmt(floor)}"

    def figure(self) -> str:
        if num(self.rec.get("epsilon_lower_bound")) is None:
            return ""
        flt = fnd.finding(self.rec, fnd.FLOAT)
        which = " (float64)" if flt is not None and flt.decides and flt.refuted else ""
        return f"ε ≥ {fmt(self.rec['epsilon_lower_bound'])}{which} (claimed {fmt(self.claim().get('epsilon'))})"

    def epsilon_bound(self) -> str:
        return fmt(self.rec.get("epsilon_lower_bound"))

    def confidence_text(self) -> str:
        raise NotImplementedError

    def own_facts(self) -> list[tuple[str, str]]:
        return self.evidence_facts() + self.stat_facts()

    def evidence_facts(self) -> list[tuple[str, str]]:
        """The facts a reviewer reads: the bounds, the confidence, the samples."""
        rec = self.rec
        facts = [("ε lower bound", fmt(rec.get("epsilon_lower_bound")))]
        approximate = (num(self.claim().get("delta")) or 0) > 0
        if approximate or num(rec.get("delta_lower_bound")) is not None:
            facts.append(("δ lower bound (at the claimed ε)", fmt(delta_floor(rec.get("delta_lower_bound")))))
        facts += [("confidence", self.confidence_text()),
                  ("samples", f"{int(num(rec.get('samples')) or 0):,}")]
        return facts

    def stat_facts(self) -> list[tuple[str, str]]:
        """The facts a statistician checks (how the event was found and bounded)."""
        det = self.rec.get("details") if isinstance(self.rec.get("details"), Mapping) else {}
        return [(label, self.detail_text(det[key])) for key, label in self.DETAIL_FACTS
                if det.get(key) is not None]

    def detail_text(self, value: Any) -> str:
        return str(value)

    def counterexample(self) -> Optional[CounterexampleView]:
        cx = self.rec.get("counterexample")
        if not isinstance(cx, Mapping):
            return None
        event = cx.get("event")
        if fnd.is_float_event(event):
            event_text = fnd.porosity_text(event)
        else:
            event_text = event.get("text") if isinstance(event, Mapping) and event.get("text") else (
                as_json(event) if event is not None else None)
        datasets, marked = dataset_views(cx.get("dataset"), cx.get("neighbour"))
        rows = () if datasets else tuple((label, as_json(cx[key])) for key, label in
                                         (("dataset", "D"), ("neighbour", "D′")) if key in cx)
        probs = None
        if "p" in cx or "q" in cx:
            det = self.rec.get("details") if isinstance(self.rec.get("details"), Mapping) else {}
            # the betting look's draws also chose S: their intervals describe, the wealth decides
            on = " (the betting look's draws)" if det.get("bound_method") == "betting" else ""
            probs = {"p": fmt(cx.get("p")), "p_interval": interval_text(cx.get("p_interval")) + on,
                     "q": fmt(cx.get("q")), "q_interval": interval_text(cx.get("q_interval")) + on}
        return CounterexampleView(rows, event_text, probs, datasets, marked)

    def plots(self, salt: str) -> list[tuple[str, str]]:
        from dpaudit.report.plots import record_svgs

        try:
            return record_svgs(self.rec, salt=salt)
        except Exception:  # noqa: BLE001 - malformed or hostile plot data: the report, without its plot
            return []

    # -- the HTML's blocks --------------------------------------------------------------------------

    def lead(self) -> str:
        return plain_sentence(self.rec)

    def section_facts(self) -> list[tuple[str, str]]:
        facts = self.head_facts()
        policy = fnd.float_policy(self.rec)
        if policy:
            facts.append(("float64 policy", f"{policy}: {fnd.POLICY_MEANING.get(policy, '')}".rstrip(": ")))
        raw = self.rec.get("findings") if isinstance(self.rec.get("findings"), Mapping) else {}
        split = [(f.label, num((raw.get(f.question) or {}).get("confidence"))) for f in self.findings() or ()
                 if f.applicable]
        split = [(label, c) for label, c in split if c is not None]
        if len(split) > 1:
            facts.append(("confidence per finding", ", ".join(f"{label} {fmt(100 * c, 4)}%" for label, c in split)
                          + f" (together {fmt(100 * (num(self.rec.get('confidence')) or 0), 4)}%)"))
        # NOT REFUTED: what the budget could have shown (its clause, less the leading "; ")
        reach = self.limits_clause() if self.rec.get("verdict") == Verdict.NOT_REFUTED.value else ""
        if reach:
            facts.append(("this budget's reach", reach[2:]))
        facts.append(("time", f"{fmt(self.rec.get('elapsed_s'), 3)} s"))
        return facts

    def replay_stage(self) -> Optional[RecordKind]:
        """The replay stage that ran before the sampling (``rec["replay"]``, a replay record:
        :func:`dpaudit.replay.stage.verdict_of_stage`), as its record kind; None without one."""
        stage = self.rec.get("replay")
        if not isinstance(stage, Mapping) or stage.get("kind") != "replay":
            return None
        from dpaudit.report.kinds.replay import ReplayRecord

        return ReplayRecord(stage)

    def finding_blocks(self, salt: str, plots: bool = True) -> list[FindingBlock]:
        fs = self.findings()
        if not fs or len(fs) == 1 or self.rec.get("verdict") == Verdict.ERROR.value and not any(
                f.applicable for f in fs):
            blocks = [self._block(self.rec, None, salt, plots)]
        else:
            # the finding that decides the verdict first (the reason a reviewer acts on), then the other
            ordered = sorted(fs, key=lambda f: not (f.decides and f.applicable))
            blocks = [self._block(f.rec, f, f"{salt}-{f.question}", plots) for f in ordered]
        stage = self._stage_blocks(salt, plots)
        return stage + blocks if self.rec.get("decided_by") == fnd.REPLAY else blocks + stage

    def _stage_blocks(self, salt: str, plots: bool) -> list[FindingBlock]:
        """The replay stage's blocks after the sampling's (first when it alone decides): its
        overall sentence under a heading of its own, then each violation, finding and note at
        its call site."""
        stage = self.replay_stage()
        if stage is None:
            return []
        blocks = stage.finding_blocks(f"{salt}-replay", plots)
        decides = self.rec.get("decided_by") == fnd.REPLAY
        calls = num(stage.rec.get("calls"))
        spent = f" ({int(calls)} calls, before the sampling)" if calls is not None else ""
        first = dataclasses.replace(
            blocks[0], question="replay", heading=f"Replay: the noise calls, recorded and replayed{spent}",
            note="decides the verdict" if decides else "its own evidence: a violation refutes, a "
            "finding is for a person to check")
        return [first, *blocks[1:]]

    def _block(self, rec: Mapping[str, Any], f: Any, salt: str, plots: bool) -> FindingBlock:
        k = type(self)(rec)
        verdict = str(rec.get("verdict"))
        applicable = f is None or f.applicable
        note = ""
        if f is not None:
            if f.warning:
                note = "a warning under --float warn: it does not change the verdict"
            elif f.decides and applicable:
                note = "decides the verdict"
            elif f.refuted:
                note = "refutes the claim too"
        lead = plain_sentence(rec)
        if verdict == Verdict.ERROR.value:
            lead = verdict_meaning(verdict).capitalize() + "."
        stats = k.stat_facts() + k.strength_facts()
        if f is not None and num((self.rec.get("findings") or {}).get(f.question, {}).get("alpha")) is not None:
            alpha = num(self.rec["findings"][f.question]["alpha"])
            stats.append(("error level α of this finding (its share of 1 − confidence)",
                          f"{fmt(alpha)} (confidence {fmt(100 * (1 - alpha), 4)}%)"))
        stats += self.tail_facts()[:-1]  # method, seed (the time is the record's)
        return FindingBlock(
            question=None if f is None else f.question, heading=None if f is None else f.heading,
            verdict=verdict if applicable else fnd.NOT_APPLICABLE, lead=lead, note=note,
            fix=fnd.float_fix(f.rec, self.rec) if f is not None and f.question == fnd.FLOAT and f.refuted else "",
            counterexample=k.counterexample() if applicable else None,
            plots=tuple(k.plots(salt)) if plots and applicable else (),
            evidence=tuple(k.evidence_facts()) if applicable and verdict != Verdict.ERROR.value else (),
            stats=tuple(stats) if applicable and verdict != Verdict.ERROR.value else ())

    def strength_facts(self) -> list[tuple[str, str]]:
        """How strong a graded verdict is (a sampled audit's p-value, margin, power)."""
        return []


class SampledAudit(PrivacyAudit):
    """A black-box audit: bounds from validation samples that played no part in choosing the pair
    or the event, at the run's family-wise confidence."""

    __slots__ = ()
    kind = "audit"
    description = "sampled privacy audit (black box)"
    rule = SarifRule("DPA001", "PrivacyClaimRefutedBySampling",
                     "A differential-privacy claim is refuted by a sampled audit.",
                     "A black-box audit found neighbouring datasets D, D' and an event S with "
                     "P[M(D) in S] > e^eps P[M(D') in S] + delta: the Clopper-Pearson lower bound on epsilon, "
                     "from samples that played no part in choosing D, D' or S, or a test by betting whose "
                     "every draw was tested by an event chosen before it was drawn, exceeds the claim at "
                     "the stated family-wise confidence.")
    DETAIL_FACTS = (("pair_label", "pair found by"), ("bound_method", "bound"),
                    ("candidates_validated", "candidates validated (family-wise)"), ("output_kind", "output"))

    shown = PrivacyAudit.shown | {"p_value", "margin", "marginal", "power", "reproducible", "family"}

    def where(self) -> str:
        conf = num(self.rec.get("confidence"))
        return f"at {percent(conf)}% confidence" if conf else ""

    def own_facts(self) -> list[tuple[str, str]]:
        """The shared facts, then how strong the verdict is (p-value, margin, MARGINAL, power),
        whether the mechanism reruns alike from its seed, and the family the confidence covers."""
        return self.evidence_facts() + self.stat_facts() + self.strength_facts()

    def evidence_facts(self) -> list[tuple[str, str]]:
        facts = super().evidence_facts()
        rec = self.rec
        if rec.get("marginal") and num(rec.get("p_value")) is not None:
            facts.append(("MARGINAL", f"p = {fmt(rec['p_value'])} is above 0.001: confirm with a fresh "
                                      f"seed at a higher confidence"))
        if rec.get("reproducible") is not None:
            facts.append(("reproducible from the seed", "yes" if rec["reproducible"] else
                          "no: the mechanism draws its own randomness (the bound stays valid; a "
                          "rerun gives other numbers)"))
        return facts

    def stat_facts(self) -> list[tuple[str, str]]:
        facts = super().stat_facts()
        det = self.rec.get("details") if isinstance(self.rec.get("details"), Mapping) else {}
        val = det.get("validation")
        if isinstance(val, Mapping) and val.get("n_D") is not None and val.get("design") == "betting":
            # the betting look's draws of its last pair: they also chose its events, so these are
            # a description, not the evidence (the wealth is: the p-value)
            facts.append(("draws of the betting look", f"{fmt(val.get('in_event_D'))} of {fmt(val.get('n_D'))} "
                                                       f"outputs on D in S, {fmt(val.get('in_event_D_prime'))} of "
                                                       f"{fmt(val.get('n_D_prime'))} on D′ (each draw was bet on an "
                                                       f"event chosen before it; S is the last one)"))
        elif isinstance(val, Mapping) and val.get("n_D") is not None:
            facts.append(("validation split", f"{fmt(val.get('in_event_D'))} of {fmt(val.get('n_D'))} outputs "
                                              f"on D in S, {fmt(val.get('in_event_D_prime'))} of "
                                              f"{fmt(val.get('n_D_prime'))} on D′ ({val.get('design', '')})"))
        return facts

    def strength_facts(self) -> list[tuple[str, str]]:
        rec, facts = self.rec, []
        if num(rec.get("p_value")) is not None:
            text = fmt(rec["p_value"])
            if rec.get("marginal"):
                text += " — MARGINAL (above 0.001): confirm with a fresh seed at a higher confidence"
            facts.append(("p-value of the claim (family-wise)", text))
        if num(rec.get("margin")) is not None:
            facts.append(("margin ε_LB / ε", fmt(rec["margin"])))
        power = rec.get("power")
        if isinstance(power, Mapping):
            seen = [f"ε ≥ {fmt(power['epsilon'])}" if num(power.get("epsilon")) is not None else "",
                    f"δ ≥ {fmt(power['delta'])} at the claimed ε" if num(power.get("delta")) is not None else ""]
            seen = [x for x in seen if x]
            facts.append((f"this budget would refute (probability {fmt(power.get('probability'))})",
                          " or ".join(seen) if seen else "no ε on this event"))
        family = rec.get("family")
        if isinstance(family, Mapping) and family.get("targets"):
            facts.append(("family-wise over", f"{family['targets']} targets at "
                          f"{fmt(100 * (num(family.get('confidence')) or 0), 4)}% (Bonferroni)"))
        return facts

    def confidence_text(self) -> str:
        conf = num(self.rec.get("confidence"))
        return f"{percent(conf)}% (family-wise)" if conf is not None else "—"


class ExactAudit(PrivacyAudit):
    """A white-box audit on the mechanism's declared exact output law: exact losses and δ."""

    __slots__ = ()
    kind = "exact"
    description = "exact privacy audit (white box, exact output law)"
    rule = SarifRule("DPA002", "PrivacyClaimRefutedExactly",
                     "A differential-privacy claim is refuted by the exact output law.",
                     "A white-box audit computed the exact privacy loss sup_y |ln p_D(y) - ln p_D'(y)| "
                     "(or the hockey-stick delta) of the mechanism's declared output law on a neighbouring "
                     "pair, and it exceeds the claim.")
    DETAIL_FACTS = (("exact_loss", "exact privacy loss sup |ln p − ln q|"),
                    ("delta_at_claim", "exact δ at the claimed ε (hockey stick)"),
                    ("pairs_evaluated", "neighbouring pairs evaluated"), ("pair_label", "worst pair"))

    def where(self) -> str:
        return "exactly"

    def evidence_facts(self) -> list[tuple[str, str]]:
        return [f for f in super().evidence_facts() if f[0] != "samples"]  # computed, not sampled

    def confidence_text(self) -> str:
        return "exact (1)"

    def detail_text(self, value: Any) -> str:
        return number_text(value)


def _sampled_before(rec: Mapping[str, Any]) -> str:
    """An interrupted record's sampling: the samples drawn and the best bound of the early looks
    that finished (each at its own α on its own samples)."""
    n = rec.get("samples")
    if not isinstance(n, int) or n <= 0:
        return ""
    looks = [x for x in rec.get("looks_finished") or () if isinstance(x, Mapping)
             and isinstance(x.get("epsilon_lb"), (int, float)) and isinstance(x.get("alpha"), (int, float))]
    text = f" The sampling had drawn {n:,} samples"
    if not looks:
        return text + "; no early look had finished."
    best = max(looks, key=lambda x: x["epsilon_lb"])
    claimed = num((rec.get("claim") or {}).get("epsilon")) if isinstance(rec.get("claim"), Mapping) else None
    above = claimed is not None and best["epsilon_lb"] > claimed
    return (text + f"; the best of its {len(looks)} finished early look(s): ε ≥ {best['epsilon_lb']:.4g} "
            f"at {percent(1 - best['alpha'])}% confidence (look {best.get('look')}), a bound that "
            f"stands on that look's own samples" +
            (f", above the claimed ε = {fmt(claimed)}: that look refutes the claim at the run's "
             f"confidence, though the run did not finish." if above else "."))
