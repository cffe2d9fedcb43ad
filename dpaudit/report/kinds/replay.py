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
(``values["sequence"]``, :func:`dpaudit.replay.compare.sequence`). SARIF has a rule per finding
kind (:data:`FINDING_RULES`) and a result per finding, at its call site.
"""

from __future__ import annotations

import math
import os
from typing import Any, Mapping, Optional

from dpaudit.report.formatting import fmt, num, verdict_label, verdict_meaning
from dpaudit.report.kinds.base import (CounterexampleView, FindingBlock, JUnitOutcome, RecordKind,
                                       SarifFinding, SarifRule, SequenceView, SiteView, TableView,
                                       dataset_views, privacy_claim_text, short)
from dpaudit.results import Verdict

__all__ = ["ReplayRecord", "FINDING_RULES", "OTHER_RULES", "SEVERITY_LEVELS", "finding_sentence",
           "site_where"]

#: the order in which a record's findings are told: the strongest evidence first
_SEVERITY = ("violation", "finding", "limit", "note")

#: SARIF level of each severity: a violation refutes, a finding is a warning (not a refutation),
#: a limit or a note is said
SEVERITY_LEVELS = {"violation": "error", "finding": "warning", "limit": "note", "note": "note"}
#: what each severity means for the claim
_SEVERITY_WORDS = {"violation": "a violation: it refutes the claim",
                   "finding": "a finding: evidence to check, not a refutation",
                   "limit": "a limit of the check: not a pass", "note": "a note, said for completeness"}
#: the badge (verdict colour, word) of each severity in the HTML
_BADGES = {"violation": ("refuted", "VIOLATION"), "finding": ("inconclusive", "FINDING"),
           "limit": ("inconclusive", "LIMIT"), "note": ("not_refuted", "NOTE")}

_SENSITIVITY_RULE = SarifRule(
    "DPA006", "NoiseAccountingViolated", "A declared sensitivity is exceeded at a noise call.",
    "Replayed on a neighbouring dataset with its noise frozen, the input of a noise primitive moved by "
    "more than the sensitivity that primitive declares: its noise is too small for that pair.")

#: one SARIF rule per finding kind of a replay audit (the kind's main rule, DPA006, is the first)
FINDING_RULES: dict[str, SarifRule] = {
    "sensitivity_exceeded": _SENSITIVITY_RULE,
    "data_dependent_control_flow": SarifRule(
        "DPA008", "DataDependentControlFlow", "Which noise is drawn depends on the private data.",
        "Run on neighbouring datasets D and D' with every noise draw frozen, the code made different noise "
        "calls (or different operations on noisy values): the choice follows the data. A finding, not a "
        "refutation: some private algorithms branch on noisy data by design (a sparse vector); check that "
        "the branch is accounted for.", level="warning"),
    "data_dependent_noise_scale": SarifRule(
        "DPA009", "DataDependentNoiseScale", "The amount of noise depends on the private data.",
        "A noise call's public parameters (its scale, its size), or a factor a noisy value is multiplied or "
        "divided by, differ between neighbouring datasets D and D': the noise's size can reveal the data "
        "(for example the number of records). Compute the scale from public values only.", level="warning"),
    "data_outside_noise": SarifRule(
        "DPA010", "DataOutsideTheNoise", "Data reaches the output next to the noise, not under it.",
        "A value computed from the data, carrying no noise of its own, is combined with an already noisy "
        "value (after post-processing): that value reaches the output unprotected.", level="warning"),
    "unnoised_release": SarifRule(
        "DPA011", "DataReleasedWithoutNoise", "Part of the output is released without noise.",
        "With every noise draw frozen, part of the output still differs between neighbouring datasets and "
        "does not move when the noise moves: it is not a function of the noise, so it is released exactly.",
        level="warning"),
    "noise_reuse": SarifRule(
        "DPA012", "NoiseReused", "One noise draw protects two values whose difference follows the data.",
        "The same draw is added to two values whose difference depends on the data: subtracting the two "
        "releases cancels the noise and reveals that difference exactly. Draw fresh noise for each value.",
        level="warning"),
    "no_noise_intercepted": SarifRule(
        "DPA013", "NoNoiseIntercepted", "The replay saw no noise call: it could not check this code.",
        "No draw of the recording generator, no declared primitive and no supported library mechanism was "
        "seen: the noise comes from elsewhere (another generator, a C extension) or there is none. A limit "
        "of the check, not a pass.", level="note"),
    "time_limit": SarifRule(
        "DPA014", "ReplayTimeLimit", "The replay's search was cut short by its time limit.",
        "The time limit was reached before the search was done: what was found stands, what was not tried "
        "is unknown. A limit of the check, not a pass.", level="note"),
    "composition_excess": SarifRule(
        "DPA015", "AccountingExcessByComposition", "Per-call accounting adds up to more than the claimed ε.",
        "Added up by composition over the noise calls, the code's own noise supports more ε on a pair than "
        "claimed. An accounting note, not an ε lower bound: composition is an upper bound.", level="note"),
    "calibration_slack": SarifRule(
        "DPA016", "NoiseCalibratedAboveSensitivitySeen", "Noise is calibrated above the sensitivity the "
        "search saw.", "The noise would absorb a larger change of its input than any the search produced: "
        "a note on calibration, not a finding.", level="note"),
    "per_record_draws": SarifRule(
        "DPA017", "PerRecordRandomness", "A noise call draws once per record.",
        "A call's size follows the dataset's size exactly (subsampling, local noise): per-record "
        "randomness, not a noise scale. A note.", level="note"),
    "unaccounted_noise": SarifRule(
        "DPA018", "NoiseWithoutPerCallAccounting", "Draws of a distribution with no per-call accounting.",
        "Draws of distributions the replay does not account per call are frozen and their parameters "
        "compared, but composition does not cover them. A note.", level="note"),
    "input_not_observed": SarifRule(
        "DPA019", "NoiseInputNotObserved", "The value a noise draw protects was not observed.",
        "A draw left numpy's arithmetic before data was added to it, and the output does not show it alone: "
        "that call is not accounted. A note.", level="note"),
    "outside_randomness": SarifRule(
        "DPA020", "RandomnessOutsideTheRecordingGenerator", "The code draws randomness the replay cannot "
        "freeze.", "Runs on the same dataset differ: some randomness comes from outside the recording "
        "generator, so the replay cannot hold it fixed. A note.", level="note"),
}
#: the rule of a finding kind this dpaudit does not know, by severity
OTHER_RULES: dict[str, SarifRule] = {
    "finding": SarifRule("DPA021", "ReplayFinding", "A replay audit finding of another kind.",
                         "A finding of the record-and-replay audit of a kind this dpaudit does not know; see "
                         "its message.", level="warning"),
    "note": SarifRule("DPA022", "ReplayNote", "A replay audit note or limit of another kind.",
                      "A note or a limit of the record-and-replay audit of a kind this dpaudit does not know; "
                      "see its message.", level="note"),
}


def _rule(kind: Any, severity: Any) -> SarifRule:
    if kind in FINDING_RULES:
        return FINDING_RULES[kind]
    if severity == "violation":
        return _SENSITIVITY_RULE
    return OTHER_RULES["finding" if severity == "finding" else "note"]


# -- paths, values ------------------------------------------------------------------------------------

def _root(rec: Mapping[str, Any]) -> Optional[str]:
    """The folder the record's relative ``location`` is relative to, read off the finding whose
    absolute call site ends with it (so a report re-rendered elsewhere shows the same paths)."""
    loc = rec.get("location")
    lp = loc.get("path") if isinstance(loc, Mapping) else None
    if not isinstance(lp, str) or not lp or os.path.isabs(lp):
        return None
    tail = "/" + lp.replace(os.sep, "/")
    for f in rec.get("findings") or ():
        site = f.get("site") if isinstance(f, Mapping) else None
        path = site.get("path") if isinstance(site, Mapping) else None
        if isinstance(path, str) and path.replace(os.sep, "/").endswith(tail):
            return path.replace(os.sep, "/")[: -len(tail)] + "/"
    return None


def _path(path: str, root: Optional[str]) -> str:
    """A call site's path as the report shows it: relative to the record's root (or else to the
    current directory) when it lies inside it."""
    p = path.replace(os.sep, "/")
    if root and p.startswith(root):
        return p[len(root):]
    if os.path.isabs(path):
        from dpaudit.report.model import relative_path

        return relative_path(path)
    return p


def site_where(rec: Mapping[str, Any], site: Any) -> Optional[dict]:
    """``{path, line, function, code}`` of a finding's call site, the path relative (:func:`_path`),
    or None when the finding names none."""
    if not isinstance(site, Mapping) or not site.get("path") or str(site.get("path")).startswith("<"):
        return None
    line = site.get("line")
    return {"path": _path(str(site["path"]), _root(rec)),
            "line": int(line) if isinstance(line, int) and line > 0 else 1,
            "function": str(site.get("function") or ""), "code": str(site.get("code") or "")}


def _base(path: Any) -> str:
    return os.path.basename(str(path).replace("\\", "/"))


def _short_site(site: Any) -> str:
    """``file.py:line`` of a site record."""
    if not isinstance(site, Mapping):
        return "?"
    return f"{_base(site.get('path'))}:{site.get('line')}"


def _text(x: Any, digits: int = 6) -> str:
    """A recorded value for people: numbers at ``digits`` significant digits, short lists as
    ``[a, b]``, a large array's summary as ``array(shape) starting [...]``, ``—`` when absent."""
    if x is None:
        return "—"
    if num(x) is not None:
        return fmt(x, digits)
    if isinstance(x, list):
        inner = ", ".join(_text(v, digits) for v in x[:8])
        return f"[{inner}{', …' if len(x) > 8 else ''}]"
    if isinstance(x, Mapping) and "shape" in x:
        shape = "×".join(str(s) for s in x.get("shape") or ())
        first = x.get("first")
        return f"array of shape {shape}" + (f" starting {_text(first, digits)}" if first else "")
    if isinstance(x, Mapping) and ("method" in x or "operation" in x):
        return f"{x.get('method') or x.get('operation')} at {_short_site(x.get('site'))}"
    return short(x, 120)


def _compact(x: Any, n: int = 4) -> str:
    """A value for a table cell: numbers at 4 digits, at most ``n`` values of a list or an array
    and how many there are."""
    if isinstance(x, list):
        inner = ", ".join(_compact(v) for v in x[:n])
        return f"[{inner}{f', … ({len(x)} values)' if len(x) > n else ''}]"
    if isinstance(x, Mapping) and "shape" in x:
        first = x.get("first") if isinstance(x.get("first"), list) else []
        shape = "×".join(str(s) for s in x.get("shape") or ())
        if not first:
            return f"array of shape {shape}"
        return "[" + ", ".join(_compact(v) for v in first[:n]) + f", … ({shape} values)]"
    return _text(x, 4)


def _pair(a: Any, b: Any) -> tuple[str, str]:
    """Two values that differ, with enough digits to show that they do (at most 17)."""
    for digits in (6, 10, 17):
        ta, tb = _text(a, digits), _text(b, digits)
        if ta != tb or a == b:
            return ta, tb
    return ta, tb


def _ratio(x: float) -> str:
    if math.isinf(x):
        return "infinitely many"
    return fmt(x, 3) if x < 1000 else f"{x:,.0f}"


def _site_of(f: Mapping[str, Any]) -> Mapping[str, Any]:
    site = f.get("site")
    return site if isinstance(site, Mapping) else {}


def _key(site: Mapping[str, Any]) -> tuple:
    """What identifies a call site: its file and line."""
    return (site.get("path"), site.get("line"))


def _values(f: Mapping[str, Any]) -> Mapping[str, Any]:
    v = f.get("values")
    return v if isinstance(v, Mapping) else {}


def _params_changed(v: Mapping[str, Any]) -> list[tuple[str, Any, Any]]:
    params = v.get("parameters")
    if not isinstance(params, Mapping):
        return []
    return [(str(k), p.get("D"), p.get("D_prime")) for k, p in params.items() if isinstance(p, Mapping)]


_VERBS = {"multiply": "multiplied", "divide": "divided", "true_divide": "divided", "floor_divide": "divided"}


def finding_sentence(f: Mapping[str, Any], where: str = "") -> str:
    """One plain sentence for a finding: what was seen and why it matters, for a reader who is
    no differential-privacy expert (the check's own message is its technical wording)."""
    kind, v = f.get("kind"), _values(f)
    at = f" at {where}" if where else ""
    if kind == "sensitivity_exceeded":
        s, shift = num(v.get("sensitivity")), num(v.get("shift"))
        method = v.get("method") or "the noise function"
        if s is None or shift is None:
            return f"{f.get('message')}."
        if s == 0:
            return (f"The input of {method}{at} changed by {fmt(shift, 6)} between D and D′, but {method} "
                    f"declares that it does not change at all: the noise it adds does not cover this change, "
                    f"so the release is not as private as claimed.")
        ratio = shift / s if not math.isnan(shift) else math.inf
        return (f"The input of {method}{at} changed by {fmt(shift, 6)} between D and D′, but {method} "
                f"declares that one person can change it by at most {fmt(s, 6)}: its noise is sized for a "
                f"change {_ratio(ratio)} times smaller, so the release is not as private as claimed.")
    if kind == "data_dependent_control_flow":
        seq = v.get("sequence") if isinstance(v.get("sequence"), Mapping) else {}
        what = "operations on noisy values" if seq.get("of") == "operations" or (
            isinstance(v.get("D"), Mapping) and "operation" in v["D"]) else "noise calls"
        k = v.get("index")
        step = f" at {'operation' if what.startswith('op') else 'call'} #{k + 1}" if isinstance(k, int) else ""
        a = "nothing" if v.get("D") is None else _text(v.get("D"))
        b = "nothing" if v.get("D_prime") is None else _text(v.get("D_prime"))
        return (f"The code did different things on D and on D′: its {what} part{step} ({a} on D, {b} on D′). "
                f"Which noise is used then depends on the private data, which can reveal it; some private "
                f"algorithms do this on purpose (a sparse vector), so check that this branch is accounted for.")
    if kind == "data_dependent_noise_scale":
        changed = _params_changed(v)
        if changed:
            name, a, b = changed[0]
            ta, tb = _pair(a, b)
            return (f"The amount of noise drawn{at} depends on the data (its {name} is {ta} on D and {tb} "
                    f"on D′): the size of the noise can then reveal the data, for example the number of "
                    f"records, which the privacy claim does not allow for.")
        if "operation" in v:
            ta, tb = _pair(v.get("D"), v.get("D_prime"))
            verb = _VERBS.get(str(v.get("operation")), f"combined ({v.get('operation')})")
            return (f"{'At ' + where if where else 'Here'} a noisy value is {verb} by a number computed from the "
                    f"data ({ta} on D, {tb} on D′): the noise is rescaled by the data, so its size can reveal "
                    f"the data, for example the number of records.")
        ta, tb = _pair(v.get("D"), v.get("D_prime"))
        return (f"The input of the noise call{at} has a different shape on D ({ta}) and on D′ ({tb}): how much "
                f"noise is drawn depends on the data.")
    if kind == "data_outside_noise":
        ta, tb = _pair(v.get("D"), v.get("D_prime"))
        return (f"{'At ' + where if where else 'Here'} a value computed from the data, with no noise of its own "
                f"({ta} on D, {tb} on D′), is combined with a value that is already noisy: that part reaches the "
                f"output unprotected.")
    if kind == "unnoised_release" and num(v.get("scale")) == 0 and "D" in v:
        ta, tb = _pair(v.get("D"), v.get("D_prime"))
        return (f"{'At ' + where if where else 'Here'} noise of scale 0 is added to a value that differs between "
                f"D and D′ ({ta} on D, {tb} on D′): that value is released exactly, without noise.")
    if kind == "unnoised_release":
        coords = v.get("coordinates") if isinstance(v.get("coordinates"), list) else []
        first = coords[0] if coords and isinstance(coords[0], Mapping) else None
        seen = ""
        if first is not None:
            ta, tb = _pair(first.get("D"), first.get("D_prime"))
            seen = f" (output[{first.get('coordinate')}] is {ta} on D and {tb} on D′)"
        return (f"Part of the output{at} differs between D and D′ even with every noise draw held fixed{seen}, "
                f"and it does not move when the noise does: it is released exactly, without noise.")
    if kind == "noise_reuse":
        call = v.get("call")
        which = f" (call #{call + 1})" if isinstance(call, int) else ""
        return (f"The same noise draw{which} is added to two values, at {_short_site(v.get('first'))} and at "
                f"{_short_site(v.get('again'))}, whose difference depends on the data: subtracting the two "
                f"cancels the noise and reveals that difference exactly.")
    msg = str(f.get("message") or f.get("title") or kind or "")
    return (msg[:1].upper() + msg[1:]).rstrip(".") + "."


# -- the record kind ------------------------------------------------------------------------------------

class ReplayRecord(RecordKind):
    """A replay audit: each finding names its call site (``file:line``)."""

    __slots__ = ()
    kind = "replay"
    description = "record and replay at the noise calls"
    rule = _SENSITIVITY_RULE
    extra_rules = tuple(r for r in list(FINDING_RULES.values()) + list(OTHER_RULES.values())
                        if r is not _SENSITIVITY_RULE)
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
        return sorted(items, key=lambda f: _SEVERITY.index(f.get("severity"))
                      if f.get("severity") in _SEVERITY else len(_SEVERITY))

    def finding(self) -> str:
        found = self.findings()
        calls = self.rec.get("calls")
        if not found:
            return (f"no finding at the noise calls ({calls} calls of the mechanism); "
                    f"this is not a proof")
        head = str(found[0].get("message") or found[0].get("title") or found[0].get("kind"))
        rest = [f.get("severity") for f in found[1:]]
        counts = [(n, s) for s in _SEVERITY if (n := rest.count(s))]
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
        at = f" at {_short_site(site)}" if self.where(f) is not None else ""
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
        same_site = [r for r in rows if isinstance(r.get("site"), Mapping) and _key(r["site"]) == _key(site)]
        call = _values(f).get("call")
        exact = [r for r in rows if isinstance(call, int) and r.get("index") == call]
        row = (exact or same_site or [None])[0]
        pair = acc.get("pair") if isinstance(acc.get("pair"), Mapping) else {}
        own = (pair.get("dataset"), pair.get("neighbour")) == (f.get("dataset"), f.get("neighbour"))
        return row, own

    def site_rows(self, f: Mapping[str, Any]) -> list[tuple[str, str]]:
        """What was seen at the finding's call site: the values on D and D′, the scale, the
        declared sensitivity, the change and the excess."""
        kind, v = f.get("kind"), _values(f)
        row, own = self.row_at(f)
        rows: list[tuple[str, str]] = []
        if kind == "sensitivity_exceeded":
            ta, tb = _pair(v.get("D"), v.get("D_prime"))
            norm = str(v.get("norm") or "l1")
            rows += [("input on D", ta), ("input on D′", tb),
                     (f"change ‖Δ‖{_norm_index(norm)}", fmt(v.get("shift"), 6)),
                     ("declared sensitivity", fmt(v.get("sensitivity"), 6)),
                     ("excess", fmt(v.get("excess"), 6))]
        elif kind == "data_dependent_control_flow":
            rows += [("on D", "no such step" if v.get("D") is None else _text(v.get("D"))),
                     ("on D′", "no such step" if v.get("D_prime") is None else _text(v.get("D_prime")))]
        elif kind == "data_dependent_noise_scale":
            for name, a, b in _params_changed(v):
                ta, tb = _pair(a, b)
                rows += [(f"{name} on D", ta), (f"{name} on D′", tb)]
            if "operation" in v:
                ta, tb = _pair(v.get("D"), v.get("D_prime"))
                verb = _VERBS.get(str(v.get("operation")), str(v.get("operation")))
                rows += [("on D", f"{verb} by {ta}" if verb in _VERBS.values() else f"{verb} with {ta}"),
                         ("on D′", f"{verb} by {tb}" if verb in _VERBS.values() else f"{verb} with {tb}")]
            elif not _params_changed(v) and ("D" in v or "D_prime" in v):
                ta, tb = _pair(v.get("D"), v.get("D_prime"))
                rows += [("input shape on D", ta), ("input shape on D′", tb)]
        elif kind in ("data_outside_noise",):
            ta, tb = _pair(v.get("D"), v.get("D_prime"))
            rows += [("value added on D", ta), ("value added on D′", tb)]
        elif kind == "unnoised_release":
            for c in (v.get("coordinates") or [])[:3]:
                if isinstance(c, Mapping):
                    ta, tb = _pair(c.get("D"), c.get("D_prime"))
                    rows.append((f"output[{c.get('coordinate')}]", f"{ta} on D, {tb} on D′"))
            if num(v.get("count")) is not None and (num(v.get("count")) or 0) > 3:
                rows.append(("outputs released without noise", fmt(v.get("count"))))
            if "D" in v and "coordinates" not in v:
                ta, tb = _pair(v.get("D"), v.get("D_prime"))
                rows += [("input on D", ta), ("input on D′", tb)]
                if "scale" in v:
                    rows.append(("noise scale", fmt(v.get("scale"))))
        elif kind == "noise_reuse":
            rows += [("first added at", _short_site(v.get("first"))), ("added again at", _short_site(v.get("again")))]
        # the noise of that call (its accounting row), unless the finding is about its parameters
        if row is not None and kind not in ("unnoised_release", "data_dependent_control_flow") \
                and not _params_changed(v):
            noise = str(row.get("method") or "")
            if row.get("distribution") and row.get("distribution") != noise:
                noise += f" ({row['distribution']})"
            scale = row.get("scale")
            text = noise + (f", scale {_text(scale)}" if scale is not None else "")
            rsite = row.get("site") if isinstance(row.get("site"), Mapping) else {}
            if _key(rsite) != _key(_site_of(f)):
                text += f", drawn at {_short_site(rsite)} (call #{(row.get('index') or 0) + 1})"
            varies = any(g.get("kind") == "data_dependent_noise_scale" and _params_changed(_values(g))
                         and _key(_site_of(g)) == _key(rsite) for g in self.findings())
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
        seq = _values(f).get("sequence")
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
        v = _values(f)
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
        verdict = self.rec.get("verdict")
        found = self.findings()
        counts = {s: sum(1 for f in found if f.get("severity") == s) for s in _SEVERITY}
        said = ", ".join(f"{n} {s}{'' if n == 1 else 's'}" for s, n in counts.items() if n)
        how = ("The code ran on D, then on a neighbouring D′ with every noise draw held fixed, so what "
               "still differs at a noise call is the data's doing.")
        if verdict == Verdict.ERROR.value:
            return f"The check could not run: {self.rec.get('error') or 'unknown error'}."
        if verdict == Verdict.REFUTED.value:
            head = "The claim is false: a noise function gets a bigger change of its input than it declares"
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
            facts.append(("libraries replayed", ", ".join(map(str, libs))))
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
            badge, label = _BADGES.get(severity, _BADGES["note"])
            w = self.where(f)
            datasets, marked = dataset_views(f.get("dataset"), f.get("neighbour"))
            cx = CounterexampleView((), None, None, datasets, marked) if datasets else None
            blocks.append(FindingBlock(
                question=str(f.get("kind") or ""), heading=self.heading_of(f), verdict=badge, label=label,
                note="refutes the claim" if severity == "violation" else (
                    "evidence to check, not a refutation" if severity == "finding" else "a limit of the check"),
                lead=finding_sentence(f, "" if w is None else _short_site(f.get("site"))),
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
            ta, tb = _compact(r.get("input_D")), _compact(r.get("input_D_prime"))
            if ta == tb and r.get("input_D") != r.get("input_D_prime"):
                ta, tb = _pair(r.get("input_D"), r.get("input_D_prime"))
            norm = str(r.get("norm") or "")
            shift = fmt(r.get("shift"), 4) + (f" ({norm})" if norm not in ("", "-") and r.get("shift") is not None
                                              else "")
            method, dist = str(r.get("method") or ""), str(r.get("distribution") or "")
            noise = method if dist in ("", method) else f"{method} ({dist})"
            out.append((str((r.get("index") or 0) + 1), _short_site(r.get("site")), noise,
                        _compact(r.get("scale")), ta, tb, shift, fmt(r.get("sensitivity"), 6), supported))
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
            out.append(f"{head}: {finding_sentence(f, _short_site(f.get('site')) if w else '')}"
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
            rule = _rule(f.get("kind"), severity)
            w = self.where(f)
            where = f"{w['path']}:{w['line']}" if w else "no call site"
            verdict = self.rec.get("verdict")
            title = str(f.get("title") or f.get("kind"))
            text = f"{title[:1].upper() + title[1:]} at {where}: "
            if severity == "note":
                text += f"{str(f.get('message') or '').rstrip('.')}."
            else:
                rows = "; ".join(f"{k}: {v}" for k, v in self.site_rows(f))
                text += (finding_sentence(f, _short_site(f.get("site")) if w else "")
                         + (f" Seen: {rows}." if rows else "") + f" In the replay's words: {f.get('message')}.")
            text += (f" ({_SEVERITY_WORDS.get(severity, severity)}; the claim {claim} is "
                     f"{verdict_label(verdict)}: {verdict_meaning(verdict)}.)")
            if f.get("reproduce") and severity != "note":
                text += f" Replay the pair: {f['reproduce']}"
            props = {"kind": f.get("kind"), "severity": severity, "target": self.rec.get("target"),
                     "verdict": verdict, "claim": self.rec.get("claim"), "values": _values(f),
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
