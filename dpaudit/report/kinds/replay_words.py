"""The words of a replay audit's reports (:mod:`dpaudit.report.kinds.replay`): the SARIF rule of
each finding kind, the badge and level of each severity, call sites and values as a report shows
them, and one plain sentence per finding for a reader who is no differential-privacy expert."""

from __future__ import annotations

import math
import os
from typing import Any, Mapping, Optional

from dpaudit.report.formatting import fmt, fmt_apart, num
from dpaudit.report.kinds.base import SarifRule, short

#: the order in which a record's findings are told: the strongest evidence first
SEVERITY_ORDER = ("violation", "finding", "limit", "note")

#: SARIF level of each severity: a violation refutes, a finding is a warning (not a refutation),
#: a limit or a note is said
SEVERITY_LEVELS = {"violation": "error", "finding": "warning", "limit": "note", "note": "note"}
#: what each severity means for the claim
SEVERITY_WORDS = {"violation": "a violation: it refutes the claim",
                   "finding": "a finding: evidence to check, not a refutation",
                   "limit": "a limit of the check: not a pass", "note": "a note, said for completeness"}
#: the badge (verdict colour, word) of each severity in the HTML
BADGES = {"violation": ("refuted", "VIOLATION"), "finding": ("inconclusive", "FINDING"),
           "limit": ("inconclusive", "LIMIT"), "note": ("not_refuted", "NOTE")}

SENSITIVITY_RULE = SarifRule(
    "DPA006", "NoiseAccountingViolated", "A declared sensitivity is exceeded at a noise call.",
    "Replayed on a neighbouring dataset with its noise frozen, the input of a noise primitive moved by "
    "more than the sensitivity that primitive declares: its noise is too small for that pair.")

#: one SARIF rule per finding kind of a replay audit (the kind's main rule, DPA006, is the first)
FINDING_RULES: dict[str, SarifRule] = {
    "sensitivity_exceeded": SENSITIVITY_RULE,
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
    "exact_loss_exceeded": SarifRule(
        "DPA023", "ExactPrivacyLossExceeded", "The release reveals noised values whose exact privacy loss "
        "exceeds the claim.", "Run on neighbouring datasets D and D' with the noise frozen, the output reveals "
        "each noised value (the value itself, or a map of it that does not depend on the data and loses "
        "nothing), so the privacy loss of the noise is exact: |Δ|/b for Laplace noise of scale b whose input "
        "moves by Δ, added up over the values. It is above the claimed ε: a refutation without sampling."),
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


def rule_of(kind: Any, severity: Any) -> SarifRule:
    if kind in FINDING_RULES:
        return FINDING_RULES[kind]
    if severity == "violation":
        return SENSITIVITY_RULE
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


def short_site(site: Any) -> str:
    """``file.py:line`` of a site record."""
    if not isinstance(site, Mapping):
        return "?"
    return f"{_base(site.get('path'))}:{site.get('line')}"


def value_text(x: Any, digits: int = 6) -> str:
    """A recorded value for people: numbers at ``digits`` significant digits, short lists as
    ``[a, b]``, a large array's summary as ``array(shape) starting [...]``, ``—`` when absent."""
    if x is None:
        return "—"
    if num(x) is not None:
        return fmt(x, digits)
    if isinstance(x, list):
        inner = ", ".join(value_text(v, digits) for v in x[:8])
        return f"[{inner}{', …' if len(x) > 8 else ''}]"
    if isinstance(x, Mapping) and "shape" in x:
        shape = "×".join(str(s) for s in x.get("shape") or ())
        first = x.get("first")
        return f"array of shape {shape}" + (f" starting {value_text(first, digits)}" if first else "")
    if isinstance(x, Mapping) and ("method" in x or "operation" in x):
        return f"{x.get('method') or x.get('operation')} at {short_site(x.get('site'))}"
    return short(x, 120)


def compact_text(x: Any, n: int = 4) -> str:
    """A value for a table cell: numbers at 4 digits, at most ``n`` values of a list or an array
    and how many there are."""
    if isinstance(x, list):
        inner = ", ".join(compact_text(v) for v in x[:n])
        return f"[{inner}{f', … ({len(x)} values)' if len(x) > n else ''}]"
    if isinstance(x, Mapping) and "shape" in x:
        first = x.get("first") if isinstance(x.get("first"), list) else []
        shape = "×".join(str(s) for s in x.get("shape") or ())
        if not first:
            return f"array of shape {shape}"
        return "[" + ", ".join(compact_text(v) for v in first[:n]) + f", … ({shape} values)]"
    return value_text(x, 4)


def pair_texts(a: Any, b: Any) -> tuple[str, str]:
    """Two values that differ, with enough digits to show that they do (at most 17)."""
    for digits in (6, 10, 17):
        ta, tb = value_text(a, digits), value_text(b, digits)
        if ta != tb or a == b:
            return ta, tb
    return ta, tb


def _ratio(x: float) -> str:
    """A ratio above 1 in words, with the digits that tell it from 1 (1.005 read "1 times")."""
    if math.isinf(x):
        return "infinitely many"
    return fmt_apart(x, 1.0, 3) if x < 1000 else f"{x:,.0f}"


def site_of(f: Mapping[str, Any]) -> Mapping[str, Any]:
    site = f.get("site")
    return site if isinstance(site, Mapping) else {}


def site_key(site: Mapping[str, Any]) -> tuple:
    """What identifies a call site: its file and line."""
    return (site.get("path"), site.get("line"))


def values_of(f: Mapping[str, Any]) -> Mapping[str, Any]:
    v = f.get("values")
    return v if isinstance(v, Mapping) else {}


def params_changed(v: Mapping[str, Any]) -> list[tuple[str, Any, Any]]:
    params = v.get("parameters")
    if not isinstance(params, Mapping):
        return []
    return [(str(k), p.get("D"), p.get("D_prime")) for k, p in params.items() if isinstance(p, Mapping)]


VERBS = {"multiply": "multiplied", "divide": "divided", "true_divide": "divided", "floor_divide": "divided"}


def _exact_loss_sentence(v: Mapping[str, Any], at: str) -> str:
    """:func:`finding_sentence` of an ``exact_loss_exceeded`` finding (its ``values`` ``v``): the
    loss is the noised values' together where the release reveals several."""
    eps = num(v.get("epsilon_exact"))
    loss = "no finite ε" if eps is None else f"ε = {fmt(eps, 6)}"
    ta, tb = pair_texts(v.get("D"), v.get("D_prime"))
    revealed = v.get("revealed") if isinstance(v.get("revealed"), list) else []
    if len(revealed) > 1:  # the loss is the values' together, not this call's alone
        return (f"The output{at} shows this noisy value and {len(revealed) - 1} other"
                f"{'s' if len(revealed) > 2 else ''} themselves; the value under this noise is {ta} "
                f"on D and {tb} on D′ (scale {fmt(v.get('scale'), 6)}), and the {len(revealed)} noised "
                f"values together cost exactly {loss} of privacy, more than the claimed "
                f"ε = {fmt(v.get('epsilon_claimed'))}, so the release is not as private as claimed "
                f"(computed, not sampled).")
    return (f"The output{at} shows the noisy value itself, and the value under the noise is {ta} on D and "
            f"{tb} on D′: with noise of scale {fmt(v.get('scale'), 6)} that change costs exactly {loss} of "
            f"privacy, more than the claimed ε = {fmt(v.get('epsilon_claimed'))}, so the release is not as "
            f"private as claimed (computed, not sampled).")


def finding_sentence(f: Mapping[str, Any], where: str = "") -> str:
    """One plain sentence for a finding: what was seen and why it matters, for a reader who is
    no differential-privacy expert (the check's own message is its technical wording)."""
    kind, v = f.get("kind"), values_of(f)
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
    if kind == "exact_loss_exceeded":
        return _exact_loss_sentence(v, at)
    if kind == "data_dependent_control_flow":
        seq = v.get("sequence") if isinstance(v.get("sequence"), Mapping) else {}
        what = "operations on noisy values" if seq.get("of") == "operations" or (
            isinstance(v.get("D"), Mapping) and "operation" in v["D"]) else "noise calls"
        k = v.get("index")
        step = f" at {'operation' if what.startswith('op') else 'call'} #{k + 1}" if isinstance(k, int) else ""
        a = "nothing" if v.get("D") is None else value_text(v.get("D"))
        b = "nothing" if v.get("D_prime") is None else value_text(v.get("D_prime"))
        return (f"The code did different things on D and on D′: its {what} part{step} ({a} on D, {b} on D′). "
                f"Which noise is used then depends on the private data, which can reveal it; some private "
                f"algorithms do this on purpose (a sparse vector), so check that this branch is accounted for.")
    if kind == "data_dependent_noise_scale":
        changed = params_changed(v)
        if changed:
            name, a, b = changed[0]
            ta, tb = pair_texts(a, b)
            return (f"The amount of noise drawn{at} depends on the data (its {name} is {ta} on D and {tb} "
                    f"on D′): the size of the noise can then reveal the data, for example the number of "
                    f"records, which the privacy claim does not allow for.")
        if "operation" in v:
            ta, tb = pair_texts(v.get("D"), v.get("D_prime"))
            verb = VERBS.get(str(v.get("operation")), f"combined ({v.get('operation')})")
            return (f"{'At ' + where if where else 'Here'} a noisy value is {verb} by a number computed from the "
                    f"data ({ta} on D, {tb} on D′): the noise is rescaled by the data, so its size can reveal "
                    f"the data, for example the number of records.")
        ta, tb = pair_texts(v.get("D"), v.get("D_prime"))
        return (f"The input of the noise call{at} has a different shape on D ({ta}) and on D′ ({tb}): how much "
                f"noise is drawn depends on the data.")
    if kind == "data_outside_noise":
        ta, tb = pair_texts(v.get("D"), v.get("D_prime"))
        return (f"{'At ' + where if where else 'Here'} a value computed from the data, with no noise of its own "
                f"({ta} on D, {tb} on D′), is combined with a value that is already noisy: that part reaches the "
                f"output unprotected.")
    if kind == "unnoised_release" and num(v.get("scale")) == 0 and "D" in v:
        ta, tb = pair_texts(v.get("D"), v.get("D_prime"))
        return (f"{'At ' + where if where else 'Here'} noise of scale 0 is added to a value that differs between "
                f"D and D′ ({ta} on D, {tb} on D′): that value is released exactly, without noise.")
    if kind == "unnoised_release":
        coords = v.get("coordinates") if isinstance(v.get("coordinates"), list) else []
        first = coords[0] if coords and isinstance(coords[0], Mapping) else None
        seen = ""
        if first is not None:
            ta, tb = pair_texts(first.get("D"), first.get("D_prime"))
            seen = f" (output[{first.get('coordinate')}] is {ta} on D and {tb} on D′)"
        return (f"Part of the output{at} differs between D and D′ even with every noise draw held fixed{seen}, "
                f"and it does not move when the noise does: it is released exactly, without noise.")
    if kind == "noise_reuse":
        call = v.get("call")
        which = f" (call #{call + 1})" if isinstance(call, int) else ""
        return (f"The same noise draw{which} is added to two values, at {short_site(v.get('first'))} and at "
                f"{short_site(v.get('again'))}, whose difference depends on the data: subtracting the two "
                f"cancels the noise and reveals that difference exactly.")
    msg = str(f.get("message") or f.get("title") or kind or "")
    return (msg[:1].upper() + msg[1:]).rstrip(".") + "."
