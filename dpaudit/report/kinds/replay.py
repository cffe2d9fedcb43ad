"""Record-and-replay records (:mod:`dpaudit.replay`): the mechanism run on D, then on a neighbour
D′ with every noise draw frozen, and what differed at the noise calls.

The record's keys are those of :meth:`dpaudit.replay.ReplayResult.to_record`: ``claim``,
``findings`` (a list: ``kind``, ``severity`` ``violation`` | ``finding`` | ``limit`` | ``note``,
``message``, ``site`` ``{path, line, function, code}``, ``dataset``, ``neighbour``, ``values``),
``accounting`` (per-call ``calls`` rows and the ``composition`` on the pair that supports the most
ε), ``calls``, ``budget``, ``pairs``. Only a violation (a declared sensitivity exceeded at a call
site) refutes; the other findings are said as what they are.

Every format shows each finding at its call site (``path:line`` and the line of code), with what
was seen there: the value on D and on D′, the noise scale, the declared sensitivity and the excess
(from the finding's ``values`` and the accounting row of that site), and, for data-dependent
control flow and noise scale, the two runs' sequences side by side around where they part
(``values["sequence"]``, :func:`dpaudit.replay.sequences.sequence`). SARIF has a rule per finding
kind (:data:`FINDING_RULES`) and a result per finding, at its call site.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from dpaudit.report.formatting import fmt, num, verdict_label, verdict_meaning
from dpaudit.report.kinds.base import (CounterexampleView, FindingBlock, JUnitOutcome, RecordKind,
                                       SarifFinding, SequenceView, SiteView, TableView,
                                       dataset_views, privacy_claim_text, short)
from dpaudit.results import Verdict

__all__ = ["ReplayRecord", "FINDING_RULES", "OTHER_RULES", "SEVERITY_LEVELS", "finding_sentence",
           "site_where"]

from dpaudit.report.kinds.replay_words import (
    BADGES, FINDING_RULES, OTHER_RULES, SENSITIVITY_RULE, SEVERITY_LEVELS, SEVERITY_ORDER,
    SEVERITY_WORDS, VERBS, compact_text, finding_sentence, pair_texts, params_changed,
    rule_of, short_site, site_key, site_of, site_where, value_text, values_of)

#: what a refutation by each kind of replay violation says (the lead of the report's block)
REFUTED_BECAUSE = {
    "sensitivity_exceeded": "a noise function gets a bigger change of its input than it declares",
    "exact_loss_exceeded": "the release reveals its noised values, and their exact privacy loss on "
                           "a neighbouring pair is above the claim",
    "unnoised_release": "the release carries data that no noise covers",
}


# -- the record kind ------------------------------------------------------------------------------------

class ReplayRecord(RecordKind):
    """A replay audit: each finding names its call site (``file:line``)."""

    __slots__ = ()
    kind = "replay"
    description = "record and replay at the noise calls"
    rule = SENSITIVITY_RULE
    extra_rules = tuple(r for r in list(FINDING_RULES.values()) + list(OTHER_RULES.values())
                        if r is not SENSITIVITY_RULE)
    shown = frozenset({"findings", "accounting", "calls", "budget", "pairs", "noise_intercepted", "libraries"})
    legend = ("A replay audit runs the code on a dataset D with a recording noise generator, then on a "
              "neighbouring dataset D′ with every noise draw held fixed: what still differs at a noise call is "
              "the data's doing. Only a declared sensitivity exceeded (a VIOLATION) refutes the claim; a "
              "FINDING (data-dependent control flow or noise scale, data outside the noise, an unnoised "
              "release, reused noise) is evidence to check, not a proof of a leak; a LIMIT is what the replay "
              "could not see; a NOTE is said for completeness.")

    def claim_text(self) -> str:
        claim = self.rec.get("claim")
        if isinstance(claim, Mapping) and "epsilon" in claim:
            return privacy_claim_text(claim)
        return str(self.rec.get("target", ""))

    def findings(self) -> list[Mapping[str, Any]]:
        found = self.rec.get("findings")
        items = [f for f in found if isinstance(f, Mapping)] if isinstance(found, list) else []
        return sorted(items, key=lambda f: SEVERITY_ORDER.index(f.get("severity"))
                      if f.get("severity") in SEVERITY_ORDER else len(SEVERITY_ORDER))

    def finding(self) -> str:
        found = self.findings()
        calls = self.rec.get("calls")
        if not found:
            return (f"no finding at the noise calls ({calls} calls of the mechanism); "
                    f"this is not a proof")
        head = str(found[0].get("message") or found[0].get("title") or found[0].get("kind"))
        rest = [f.get("severity") for f in found[1:]]
        counts = [(n, s) for s in SEVERITY_ORDER if (n := rest.count(s))]
        more = ", ".join(f"{n} {s}{'' if n == 1 else 's'}" for n, s in counts)
        return head + (f" (and {more})" if more else "")

    def site(self) -> Optional[Mapping[str, Any]]:
        """The first finding's call site, for SARIF's location."""
        found = self.findings()
        site = found[0].get("site") if found else None
        return site if isinstance(site, Mapping) else None

    # -- pieces ---------------------------------------------------------------------------------------

    def where(self, f: Mapping[str, Any]) -> Optional[dict]:
        """The finding's call site with its path relative (:func:`site_where`)."""
        return site_where(self.rec, f.get("site"))

    def heading_of(self, f: Mapping[str, Any]) -> str:
        """``Declared sensitivity exceeded at file.py:58``."""
        title = str(f.get("title") or f.get("kind") or "finding")
        site = f.get("site")
        at = f" at {short_site(site)}" if self.where(f) is not None else ""
        return title[:1].upper() + title[1:] + at

    def accounting(self) -> Mapping[str, Any]:
        acc = self.rec.get("accounting")
        return acc if isinstance(acc, Mapping) else {}

    def row_at(self, f: Mapping[str, Any]) -> tuple[Optional[Mapping[str, Any]], bool]:
        """The accounting row of the finding's call site (its call when the values name it), and
        whether the accounting's pair is the finding's own."""
        acc = self.accounting()
        rows = [r for r in acc.get("calls") or () if isinstance(r, Mapping)]
        site = f.get("site") if isinstance(f.get("site"), Mapping) else {}
        same_site = [r for r in rows if isinstance(r.get("site"), Mapping) and site_key(r["site"]) == site_key(site)]
        call = values_of(f).get("call")
        exact = [r for r in rows if isinstance(call, int) and r.get("index") == call]
        row = (exact or same_site or [None])[0]
        pair = acc.get("pair") if isinstance(acc.get("pair"), Mapping) else {}
        own = (pair.get("dataset"), pair.get("neighbour")) == (f.get("dataset"), f.get("neighbour"))
        return row, own

    def site_rows(self, f: Mapping[str, Any]) -> list[tuple[str, str]]:
        """What was seen at the finding's call site: the values on D and D′, the scale, the
        declared sensitivity, the change and the excess."""
        kind, v = f.get("kind"), values_of(f)
        row, own = self.row_at(f)
        rows: list[tuple[str, str]] = []
        if kind == "sensitivity_exceeded":
            ta, tb = pair_texts(v.get("D"), v.get("D_prime"))
            norm = str(v.get("norm") or "l1")
            rows += [("input on D", ta), ("input on D′", tb),
                     (f"change ‖Δ‖{_norm_index(norm)}", fmt(v.get("shift"), 6)),
                     ("declared sensitivity", fmt(v.get("sensitivity"), 6)),
                     ("excess", fmt(v.get("excess"), 6))]
        elif kind == "data_dependent_control_flow":
            rows += [("on D", "no such step" if v.get("D") is None else value_text(v.get("D"))),
                     ("on D′", "no such step" if v.get("D_prime") is None else value_text(v.get("D_prime")))]
        elif kind == "data_dependent_noise_scale":
            for name, a, b in params_changed(v):
                ta, tb = pair_texts(a, b)
                rows += [(f"{name} on D", ta), (f"{name} on D′", tb)]
            if "operation" in v:
                ta, tb = pair_texts(v.get("D"), v.get("D_prime"))
                verb = VERBS.get(str(v.get("operation")), str(v.get("operation")))
                rows += [("on D", f"{verb} by {ta}" if verb in VERBS.values() else f"{verb} with {ta}"),
                         ("on D′", f"{verb} by {tb}" if verb in VERBS.values() else f"{verb} with {tb}")]
            elif not params_changed(v) and ("D" in v or "D_prime" in v):
                ta, tb = pair_texts(v.get("D"), v.get("D_prime"))
                rows += [("input shape on D", ta), ("input shape on D′", tb)]
        elif kind in ("data_outside_noise",):
            ta, tb = pair_texts(v.get("D"), v.get("D_prime"))
            rows += [("value added on D", ta), ("value added on D′", tb)]
        elif kind == "unnoised_release":
            for c in (v.get("coordinates") or [])[:3]:
                if isinstance(c, Mapping):
                    ta, tb = pair_texts(c.get("D"), c.get("D_prime"))
                    rows.append((f"output[{c.get('coordinate')}]", f"{ta} on D, {tb} on D′"))
            if num(v.get("count")) is not None and (num(v.get("count")) or 0) > 3:
                rows.append(("outputs released without noise", fmt(v.get("count"))))
            if "D" in v and "coordinates" not in v:
                ta, tb = pair_texts(v.get("D"), v.get("D_prime"))
                rows += [("input on D", ta), ("input on D′", tb)]
                if "scale" in v:
                    rows.append(("noise scale", fmt(v.get("scale"))))
        elif kind == "noise_reuse":
            rows += [("first added at", short_site(v.get("first"))), ("added again at", short_site(v.get("again")))]
        # the noise of that call (its accounting row), unless the finding is about its parameters
        if row is not None and kind not in ("unnoised_release", "data_dependent_control_flow") \
                and not params_changed(v):
            noise = str(row.get("method") or "")
            if row.get("distribution") and row.get("distribution") != noise:
                noise += f" ({row['distribution']})"
            scale = row.get("scale")
            text = noise + (f", scale {value_text(scale)}" if scale is not None else "")
            rsite = row.get("site") if isinstance(row.get("site"), Mapping) else {}
            if site_key(rsite) != site_key(site_of(f)):
                text += f", drawn at {short_site(rsite)} (call #{(row.get('index') or 0) + 1})"
            varies = any(g.get("kind") == "data_dependent_noise_scale" and params_changed(values_of(g))
                         and site_key(site_of(g)) == site_key(rsite) for g in self.findings())
            rows.append(("noise", text + (" (its scale on the accounting table's pair; it follows the data)"
                                           if varies and not own and scale is not None else "")))
            if kind != "sensitivity_exceeded" and row.get("sensitivity") is not None:
                rows.append(("declared sensitivity", fmt(row.get("sensitivity"), 6)))
        return rows

    def site_view(self, f: Mapping[str, Any]) -> Optional[SiteView]:
        w = self.where(f)
        rows = tuple(self.site_rows(f))
        if w is None:
            return SiteView("", "", "", rows) if rows else None
        return SiteView(f"{w['path']}:{w['line']}", w["function"], w["code"], rows)

    def sequence_view(self, f: Mapping[str, Any]) -> Optional[SequenceView]:
        """The two runs' sequences of a control flow or noise scale finding, side by side."""
        seq = values_of(f).get("sequence")
        if not isinstance(seq, Mapping) or not isinstance(seq.get("D"), list):
            return None
        at = seq.get("parted_at")
        d = {e.get("index"): e for e in seq.get("D") or () if isinstance(e, Mapping)}
        dp = {e.get("index"): e for e in seq.get("D_prime") or () if isinstance(e, Mapping)}
        keys = sorted(k for k in set(d) | set(dp) if isinstance(k, int))

        def cell(e: Optional[Mapping[str, Any]]) -> Optional[tuple]:
            if e is None:
                return None
            return (int(e.get("index") or 0) + 1, str(e.get("method") or e.get("operation") or "?"),
                    str(e.get("site") or ""), str(e.get("params") or ""))

        rows = tuple((cell(d.get(k)), cell(dp.get(k)), "part" if k == at else "") for k in keys)
        ops = seq.get("of") == "operations"
        kind = f.get("kind")
        title = "The two runs' " + ("operations on noisy values" if ops else "noise calls") + ", side by side"
        if kind == "data_dependent_control_flow":
            note = (f"highlighted: {'operation' if ops else 'call'} #{(at or 0) + 1}, where the two runs part"
                    if isinstance(at, int) else "")
        else:
            note = (f"highlighted: {'operation' if ops else 'call'} #{(at or 0) + 1}, the same step on both runs "
                    f"with a different {'operand' if ops else 'parameter'}" if isinstance(at, int) else "")
        return SequenceView(title, rows, int(num(seq.get("before")) or 0),
                            (int(num(seq.get("after_D")) or 0), int(num(seq.get("after_D_prime")) or 0)), note)

    def detail_rows(self, f: Mapping[str, Any]) -> list[tuple[str, str]]:
        """The jargon, folded: the check's own message, the accounting of the call, how the pair was
        found and the line that replays it."""
        out = [("the check's words", str(f.get("message") or ""))]
        row, own = self.row_at(f)
        if row is not None and own:
            if num(row.get("epsilon_call")) is not None:
                out.append(("ε this call supports on the pair", fmt(row.get("epsilon_call"), 6)))
            if num(row.get("mu_call")) is not None:
                out.append(("μ (Gaussian DP) this call supports on the pair", fmt(row.get("mu_call"), 6)))
            if num(row.get("ratio")) is not None:
                out.append(("change / declared sensitivity", fmt(row.get("ratio"), 6)))
            if row.get("input_observed"):
                out.append(("input observed from", str(row["input_observed"])))
        v = values_of(f)
        for key in ("norm", "epsilon_supported", "epsilon_claimed", "delta_supported", "calls", "element"):
            if key in v and not isinstance(v[key], (Mapping, list)):
                out.append((key.replace("_", " "), fmt(v[key], 6) if num(v[key]) is not None else str(v[key])))
        if f.get("pair_label"):
            out.append(("pair found by", str(f["pair_label"])))
        if f.get("reproduce"):
            out.append(("replay this pair", str(f["reproduce"])))
        return out

    # -- HTML -------------------------------------------------------------------------------------------

    def _overall(self) -> str:
        """The replay's overall sentence: for a refutation, what each kind of violation found says
        (:data:`REFUTED_BECAUSE`), not one cause for all."""
        verdict = self.rec.get("verdict")
        found = self.findings()
        counts = {s: sum(1 for f in found if f.get("severity") == s) for s in SEVERITY_ORDER}
        said = ", ".join(f"{n} {s}{'' if n == 1 else 's'}" for s, n in counts.items() if n)
        how = ("The code ran on D, then on a neighbouring D′ with every noise draw held fixed, so what "
               "still differs at a noise call is the data's doing.")
        if verdict == Verdict.ERROR.value:
            return f"The check could not run: {self.rec.get('error') or 'unknown error'}."
        if verdict == Verdict.REFUTED.value:
            kinds = dict.fromkeys(str(f.get("kind")) for f in found if f.get("severity") == "violation")
            why = [REFUTED_BECAUSE[k] for k in kinds if k in REFUTED_BECAUSE]
            head = "The claim is false: " + ("; ".join(why) or "a violation was found at a noise call")
        elif counts["finding"]:
            head = ("Not refuted, not passed: the replay saw what the claim's proof must account for, each at "
                    "its line of code below")
        elif counts["limit"]:
            head = "Not refuted, not passed: the replay could not see everything it needed"
        else:
            head = (f"No finding at the noise calls after {self.rec.get('pairs')} neighbouring pairs "
                    f"({self.rec.get('calls')} runs of the code); this is not a proof")
        return f"{head}{f' ({said})' if said else ''}. {how}"

    def lead(self) -> str:
        return self._overall()

    def section_facts(self) -> list[tuple[str, str]]:
        rec = self.rec
        facts = self.head_facts()
        if num(rec.get("pairs")) is not None:
            facts.append(("neighbouring pairs compared", fmt(rec["pairs"])))
        if num(rec.get("calls")) is not None:
            budget = f" (budget {fmt(rec['budget'])})" if num(rec.get("budget")) is not None else ""
            facts.append(("runs of the code", fmt(rec["calls"]) + budget))
        if rec.get("noise_intercepted") is False:
            facts.append(("noise intercepted", "no"))
        libs = rec.get("libraries")
        if isinstance(libs, list) and libs:
            facts.append(("libraries", ", ".join(map(str, libs))))
        return facts + self.tail_facts()

    def finding_blocks(self, salt: str, plots: bool = True) -> list[FindingBlock]:
        verdict = str(self.rec.get("verdict"))
        blocks = [FindingBlock(question=None, heading=None, verdict=verdict, lead=self._overall(),
                               lead_label=verdict_label(verdict))]
        if verdict == Verdict.ERROR.value:
            return blocks
        notes = []
        for f in self.findings():
            severity = str(f.get("severity") or "note")
            if severity == "note":
                notes.append(f)
                continue
            badge, label = BADGES.get(severity, BADGES["note"])
            w = self.where(f)
            datasets, marked = dataset_views(f.get("dataset"), f.get("neighbour"))
            cx = CounterexampleView((), None, None, datasets, marked) if datasets else None
            blocks.append(FindingBlock(
                question=str(f.get("kind") or ""), heading=self.heading_of(f), verdict=badge, label=label,
                note="refutes the claim" if severity == "violation" else (
                    "evidence to check, not a refutation" if severity == "finding" else "a limit of the check"),
                lead=finding_sentence(f, "" if w is None else short_site(f.get("site"))),
                site=self.site_view(f), sequence=self.sequence_view(f), counterexample=cx,
                stats=tuple(self.detail_rows(f)), stats_label="details"))
        if notes:
            blocks.append(FindingBlock(
                question="notes", heading=f"{len(notes)} note{'' if len(notes) == 1 else 's'}",
                verdict="not_refuted", label="NOTE",
                lead="Said for completeness: none of these is evidence against the claim.",
                evidence=tuple((self.heading_of(f), str(f.get("message") or "")) for f in notes)))
        return blocks

    def extra(self) -> dict:
        return {k: v for k, v in super().extra().items() if v is not None}

    def tables(self) -> list[TableView]:
        """The accounting: one row per noise call on the pair that supports the most ε."""
        acc = self.accounting()
        rows = [r for r in acc.get("calls") or () if isinstance(r, Mapping)]
        if not rows:
            return []
        out = []
        for r in rows:
            eps = r.get("epsilon_call")
            supported = (fmt(eps, 4) if num(eps) is not None else
                         f"μ = {fmt(r.get('mu_call'), 4)}" if num(r.get("mu_call")) is not None else "—")
            ta, tb = compact_text(r.get("input_D")), compact_text(r.get("input_D_prime"))
            if ta == tb and r.get("input_D") != r.get("input_D_prime"):
                ta, tb = pair_texts(r.get("input_D"), r.get("input_D_prime"))
            norm = str(r.get("norm") or "")
            shift = fmt(r.get("shift"), 4) + (f" ({norm})" if norm not in ("", "-") and r.get("shift") is not None
                                              else "")
            method, dist = str(r.get("method") or ""), str(r.get("distribution") or "")
            noise = method if dist in ("", method) else f"{method} ({dist})"
            out.append((str((r.get("index") or 0) + 1), short_site(r.get("site")), noise,
                        compact_text(r.get("scale")), ta, tb, shift, fmt(r.get("sensitivity"), 6), supported))
        pair = acc.get("pair") if isinstance(acc.get("pair"), Mapping) else {}
        comp = acc.get("composition") if isinstance(acc.get("composition"), Mapping) else {}
        claim = self.rec.get("claim") if isinstance(self.rec.get("claim"), Mapping) else {}
        note = ""
        if pair:
            found = f" ({pair['label']})" if pair.get("label") else ""
            note = (f"The pair{found}: D = {short(pair.get('dataset'), 90)}, "
                    f"D′ = {short(pair.get('neighbour'), 90)}.")
        if comp:
            delta = num(comp.get("delta")) or 0.0
            note += (f" By composition the code's own noise supports ε = {fmt(comp.get('epsilon'), 6)}"
                     + (f", δ = {fmt(delta, 3)}" if delta else "")
                     + f" on this pair (claimed ε = {fmt(claim.get('epsilon'))}): an upper bound, not an ε "
                       f"lower bound.")
            if comp.get("composition"):
                note += f" Composition: {comp['composition']}."
        return [TableView(f"Accounting: the {len(rows)} noise call{'' if len(rows) == 1 else 's'} on the pair "
                          f"that supports the most ε",
                          ("#", "call site", "noise call", "scale", "input on D", "input on D′", "change |Δ|",
                           "declared sensitivity", "ε supported"),
                          tuple(out), numeric=(0,), note=note.strip(), nowrap=(1, 2, 3, 6, 7, 8))]

    # -- JUnit, SARIF -------------------------------------------------------------------------------------

    def _named(self, severities: tuple) -> list[str]:
        out = []
        for f in self.findings():
            if f.get("severity") in severities:
                w = self.where(f)
                at = f" at {w['path']}:{w['line']}" if w else ""
                out.append(f"{f.get('title') or f.get('kind')}{at}")
        return out

    def junit_outcome(self) -> JUnitOutcome:
        """As every kind (REFUTED fails, INCONCLUSIVE is skipped: not a pass), with each violation
        and finding named at its call site in the message."""
        base = super().junit_outcome()
        if base.status in ("passed", "error") or self.expected() is not None:
            return base
        named = self._named(("violation", "finding", "limit"))
        if not named:
            return base
        if base.status == "failure":
            return JUnitOutcome("failure", "claim refuted: " + "; ".join(named), base.type)
        return JUnitOutcome("skipped", "INCONCLUSIVE (not a pass): " + "; ".join(named))

    def report_lines(self, notes: bool = True) -> list[str]:
        """One line per finding (severity, title, call site and its code, what was seen there),
        with the two runs' sequences where they part, then each note (unless ``notes`` is False)."""
        out = []
        for f in self.findings():
            w = self.where(f)
            at = f" at {w['path']}:{w['line']}" if w else ""
            code = f" `{w['code']}`" if w and w["code"] else ""
            head = f"{str(f.get('severity') or 'note').upper()}: {f.get('title') or f.get('kind')}{at}{code}"
            if f.get("severity") == "note":
                if notes:
                    out.append(f"{head}: {f.get('message')}")
                continue
            rows = "; ".join(f"{k} {v}" for k, v in self.site_rows(f))
            out.append(f"{head}: {finding_sentence(f, short_site(f.get('site')) if w else '')}"
                       + (f" [{rows}]" if rows else ""))
            seq = self.sequence_view(f)
            if seq is not None:
                for a, b, mark in seq.rows:
                    out.append(f"  {'>' if mark else ' '} on D: {_cell_text(a)} | on D′: {_cell_text(b)}")
        return out

    def sarif_findings(self) -> Optional[list[SarifFinding]]:
        if self.rec.get("verdict") == Verdict.ERROR.value:
            return None
        out = []
        claim = self.claim_text()
        for f in self.findings():
            severity = str(f.get("severity") or "note")
            rule = rule_of(f.get("kind"), severity)
            w = self.where(f)
            where = f"{w['path']}:{w['line']}" if w else "no call site"
            verdict = self.rec.get("verdict")
            title = str(f.get("title") or f.get("kind"))
            text = f"{title[:1].upper() + title[1:]} at {where}: "
            if severity == "note":
                text += f"{str(f.get('message') or '').rstrip('.')}."
            else:
                rows = "; ".join(f"{k}: {v}" for k, v in self.site_rows(f))
                text += (finding_sentence(f, short_site(f.get("site")) if w else "")
                         + (f" Seen: {rows}." if rows else "") + f" In the replay's words: {f.get('message')}.")
            text += (f" ({SEVERITY_WORDS.get(severity, severity)}; the claim {claim} is "
                     f"{verdict_label(verdict)}: {verdict_meaning(verdict)}.)")
            if f.get("reproduce") and severity != "note":
                text += f" Replay the pair: {f['reproduce']}"
            props = {"kind": f.get("kind"), "severity": severity, "target": self.rec.get("target"),
                     "verdict": verdict, "claim": self.rec.get("claim"), "values": values_of(f),
                     "dataset": f.get("dataset"), "neighbour": f.get("neighbour"),
                     "reproduce": f.get("reproduce") or self.rec.get("reproduce")}
            out.append(SarifFinding(rule=rule, level=SEVERITY_LEVELS.get(severity, "note"), text=text,
                                    location=None if w is None else {"path": w["path"], "line": w["line"]},
                                    function=w["function"] if w else "",
                                    key=f"{f.get('kind')}|{where}",
                                    properties={k: v for k, v in props.items() if v is not None}))
        return out


def _norm_index(norm: str) -> str:
    return {"l1": "₁", "l2": "₂", "linf": "∞"}.get(norm, "")


def _cell_text(c: Optional[tuple]) -> str:
    if c is None:
        return "(none)"
    index, name, site, params = c
    return f"#{index} {name} at {site}" + (f" ({params})" if params else "")
