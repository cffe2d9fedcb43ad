"""SARIF 2.1.0: one result per refuted claim (per replay finding), at the mechanism's file and line.

Static-analysis consumers (GitHub code scanning, GitLab, VS Code SARIF viewer) read the OASIS
SARIF 2.1.0 object model: ``{"version": "2.1.0", "$schema", "runs": [{"tool": {"driver":
{"name", "rules": [...]}}, "results": [...]}]}``. dpaudit writes

* one rule per registered record kind (:func:`dpaudit.report.kinds.registered_kinds`: sampled
  audit, exact audit, sensitivity search, formal claim, then the others by name, e.g. seed claim),
  always all of them in that order, so ``ruleIndex`` is stable across runs;
* one result per REFUTED record: ``ruleId``, ``ruleIndex``, ``level: "error"``, ``message.text``
  (claim, finding, reproduce line), ``locations`` at the mechanism's source (a path relative to the
  repository root with ``uriBaseId: "%SRCROOT%"``, and ``region.startLine``), a
  ``partialFingerprints`` entry so alerts are tracked across commits, and the numbers in
  ``properties``. A suite negative control that was *expected* to be refuted carries an external,
  accepted ``suppression`` with the reason, so a consumer lists it as intended.

A kind whose rule is about a paper's statement (``SarifRule.paper``, e.g. a seed claim) is not a
defect in code: refuted as its kind expects, its result is a ``note`` with the kind's accepted
suppression and justification; refuted against that expectation it is an ``error``.

A privacy audit's record with two findings (``findings: {"logic", "float"}``) reports
each refuted finding on its own, under one of two more rules after the kinds' (:data:`FINDING_RULES`):
``dpaudit/logic`` (the claim over the reals) and ``dpaudit/float64`` (the float64 implementation's
porosity), so a consumer tracks them apart. A float64 refutation under ``--float warn`` is level
``warning`` (the verdict stays NOT REFUTED); under ``--float error`` it is an ``error``. The run lists
each audited file with its SHA-256 (``artifacts[].hashes``) and states its float64 policy.

A kind may word its own results (:meth:`~dpaudit.report.kinds.base.RecordKind.sarif_findings`)
under rules of its own, listed after the two above (:attr:`~dpaudit.report.kinds.base.RecordKind.extra_rules`).
A replay audit does: one rule per finding kind (DPA006, a declared sensitivity exceeded, stays its
rule; data-dependent control flow, data-dependent noise scale, data outside the noise, an unnoised
release, reused noise, then its limits and notes) and one result per finding, whatever the verdict,
each at its own call site (the path relative to the repository, the line): a violation is an
``error``, a finding a ``warning`` (evidence, not a refutation), a limit or a note a ``note``.

Other records that are not refuted produce no result (SARIF reports findings, not passes). The location
comes from the record's ``location`` (``{"path", "line"}``); failing that, a ``FILE.py:FUNCTION``
target is resolved by reading FILE for ``def FUNCTION``.
"""

from __future__ import annotations

import ast
import hashlib
import os
from typing import Any, Mapping, Optional
from urllib.parse import quote

from dpaudit.report import describe as d
from dpaudit.report import findings as fnd
from dpaudit.report.kinds import RecordKind, SarifRule, kind_of, registered_kinds
from dpaudit.report.model import relative_path
from dpaudit.report.provenance import isolation_off, sandboxed
from dpaudit.results import Verdict

__all__ = ["render_sarif", "render_sarif_text", "SARIF_SCHEMA", "find_location", "FINDING_RULES"]

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

#: The rules of a privacy audit's two findings, by question, listed after the kinds' rules.
FINDING_RULES: dict[str, SarifRule] = {
    fnd.LOGIC: SarifRule("dpaudit/logic", "PrivacyClaimRefutedOverTheReals",
                         "A differential-privacy claim is false for the mechanism as a model over the reals.",
                         "An audit found neighbouring datasets D, D' and an event S that does not depend on the "
                         "binary representation of the output (a threshold, an interval, a score) with "
                         "P[M(D) in S] > e^eps P[M(D') in S] + delta at the stated confidence: the mechanism's "
                         "logic breaks the claim, whatever the arithmetic."),
    fnd.FLOAT: SarifRule("dpaudit/float64", "PrivacyClaimRefutedByFloat64Porosity",
                         "The float64 implementation of a mechanism leaks through the bits of its outputs.",
                         "An audit found neighbouring datasets D, D' whose outputs fall in different sets of "
                         "doubles (binade and trailing zero mantissa bits): x + noise and x' + noise round "
                         "differently, so the output's bits tell D from D' beyond the claim (porosity, "
                         "Mironov 2012). Fix: snap the output to a grid (Mironov's snapping mechanism) or use "
                         "integer noise (a discrete Laplace or discrete Gaussian)."),
}

def _entries(kinds: tuple) -> list[tuple[SarifRule, str]]:
    """Every rule with the tag it carries, in the order listed: each kind's rule, the two rules of
    a privacy audit's findings, then each kind's extra rules (a replay audit's per finding kind)."""
    entries = [(k.rule, k.description) for k in kinds]
    entries += [(r, f"{fnd.question_label(q)} finding of a privacy audit") for q, r in FINDING_RULES.items()]
    seen = {r.id for r, _ in entries}
    for k in kinds:
        for r in k.extra_rules:
            if r.id not in seen:
                seen.add(r.id)
                entries.append((r, k.description))
    return entries


_SEVERITY = {"error": "error", "warning": "warning", "note": "recommendation"}


def _rules(kinds: tuple) -> list[dict]:
    out = []
    for r, description in _entries(kinds):
        level = r.level or ("note" if r.paper else "error")
        out.append({
            "id": r.id,
            "name": r.name,
            "shortDescription": {"text": r.short},
            "fullDescription": {"text": r.full},
            "help": {"text": f"{r.full} Run the reproduce command in the message to reproduce it."},
            "defaultConfiguration": {"level": level},
            "properties": {"tags": ["differential-privacy", "privacy", description],
                           "precision": "very-high",
                           "problem.severity": _SEVERITY.get(level, "error")},
        })
    return out


def find_location(rec: Mapping[str, Any]) -> Optional[dict]:
    """``{"path", "line"}`` for a record: its ``location``, else ``FILE.py:FUNCTION`` in its target
    (the line of ``def FUNCTION`` in FILE, 1 when it cannot be found), else None."""
    loc = rec.get("location")
    if isinstance(loc, Mapping) and loc.get("path"):
        line = loc.get("line")
        return {"path": str(loc["path"]), "line": int(line) if isinstance(line, int) and line > 0 else 1}
    target = str(rec.get("target") or "")
    path, _, func = target.rpartition(":") if ":" in target else (target, "", "")
    if not path.endswith(".py") or not os.path.isfile(path):
        return None
    return {"path": relative_path(path), "line": _def_line(path, func)}


def _def_line(path: str, func: str) -> int:
    try:
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), filename=path)
    except (OSError, SyntaxError, ValueError):
        return 1
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == func.split(".")[-1]:
            return node.lineno
    return 1


def _uri(path: str) -> tuple[str, Optional[str]]:
    """A URI reference for ``path``: relative paths under ``%SRCROOT%``, absolute ones as file URIs."""
    p = path.replace(os.sep, "/")
    if os.path.isabs(path):
        return "file://" + quote(p if p.startswith("/") else "/" + p), None
    return quote(p), "%SRCROOT%"


def _fingerprint(rec: Mapping[str, Any], k: RecordKind, question: str = "") -> str:
    key = "|".join([str(rec.get("kind")), d.title(rec), k.claim_text()] + ([question] if question else []))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


def _finding_results(rec: Mapping[str, Any], kinds: tuple) -> list[dict]:
    """One result per refuted finding of a record with findings (``dpaudit/logic``,
    ``dpaudit/float64``); a float64 refutation under ``--float warn`` is a ``warning``."""
    out = []
    k = kind_of(rec)
    for f in fnd.findings_of(rec) or ():
        if not f.refuted or f.question not in FINDING_RULES:
            continue
        fk = kind_of(f.rec)
        rule = FINDING_RULES[f.question]
        text = (f"{d.title(rec)}: the claim {k.claim_text()} is REFUTED by its {f.label} finding: "
                f"{fk.lead()} Evidence: {fk.evidence_text()}.")
        if f.question == fnd.FLOAT:
            text += f" Fix: {fnd.float_fix(f.rec)}."
        if f.warning:
            text += " A warning under --float warn: the verdict is the logic one."
        level = "warning" if f.warning else "error"
        props = {key: f.rec[key] for key in k.sarif_properties if f.rec.get(key) is not None}
        props.update({"question": f.question, "float_policy": f.policy, "overall_verdict": rec.get("verdict")})
        res = _result(rec, kinds, rule=rule, rule_index=len(kinds) + list(FINDING_RULES).index(f.question),
                      level=level, text=text, key=f.question, properties=props)
        out.append(res)
    return out


def _own_results(rec: Mapping[str, Any], kinds: tuple, own: list) -> list[dict]:
    """The results a kind words itself (:meth:`~dpaudit.report.kinds.base.RecordKind.sarif_findings`:
    a replay audit's, one per finding at its call site), under the rules' list indices."""
    index = {r.id: i for i, (r, _) in enumerate(_entries(kinds))}
    out = []
    for f in own:
        if f.rule.id not in index:  # a rule its kind does not list: reported under the kind's own
            continue
        out.append(_result(rec, kinds, rule=f.rule, rule_index=index[f.rule.id], level=f.level, text=f.text,
                           key=f.key, properties=dict(f.properties),
                           location=f.location, function=f.function))
    return out


def _stage_results(rec: Mapping[str, Any], kinds: tuple) -> list[dict]:
    """The violations and findings of an audit's replay stage (``rec["replay"]``), each a result
    at its call site under its kind's rule, as a replay audit's own (its notes stay in the
    other reports)."""
    stage = rec.get("replay")
    if not isinstance(stage, Mapping) or stage.get("kind") != "replay":
        return []
    own = kind_of(stage).sarif_findings() or []
    strong = [f for f in own if f.properties.get("severity") in ("violation", "finding")]
    return _own_results(stage, kinds, strong)


def _result(rec: Mapping[str, Any], kinds: tuple, *, rule: Optional[SarifRule] = None,
            rule_index: Optional[int] = None, level: Optional[str] = None, text: Optional[str] = None,
            key: str = "", properties: Optional[dict] = None, location: Optional[Mapping[str, Any]] = None,
            function: str = "") -> dict:
    k = kind_of(rec)
    known = type(k) in kinds
    paper = k.rule.paper
    expected = k.sarif_expected()
    if rule is None:
        rule = k.rule if known else kinds[0].rule  # an unknown kind is reported under the first rule
        rule_index = kinds.index(type(k)) if known else 0
    if text is None:
        text = k.sarif_message(d.title(rec))
    if rec.get("reproduce"):
        text += f" Reproduce: {rec['reproduce']}"
    if level is None:
        level = "note" if paper and expected == Verdict.REFUTED.value else "error"
    res: dict[str, Any] = {
        "ruleId": rule.id,
        "ruleIndex": rule_index,
        "level": level,
        "kind": "fail",
        "message": {"text": text},
        "locations": [],
        "partialFingerprints": {"dpauditClaim/v1": _fingerprint(rec, k, key)},
        "properties": properties if properties is not None else
        {key: rec[key] for key in k.sarif_properties if rec.get(key) is not None},
    }
    loc = dict(location) if location is not None else find_location(rec)
    logical = [{"fullyQualifiedName": str(rec.get("target") or d.title(rec)),
                "kind": "declaration" if paper else "function"}]
    if function and location is not None:
        logical = [{"name": function, "fullyQualifiedName": f"{loc['path']}:{function}", "kind": "function"}]
    if loc is not None:
        uri, base = _uri(loc["path"])
        artifact = {"uri": uri} if base is None else {"uri": uri, "uriBaseId": base}
        res["locations"].append({"physicalLocation": {"artifactLocation": artifact,
                                                      "region": {"startLine": loc["line"]}},
                                 "logicalLocations": logical})
    else:
        res["locations"].append({"logicalLocations": logical})
    if expected == Verdict.REFUTED.value and level != "warning":
        res["suppressions"] = [{"kind": "external", "status": "accepted",
                                "justification": k.sarif_justification()}]
    return res


def _undecided_text(r: Mapping[str, Any]) -> str:
    """``TARGET: INCONCLUSIVE — why`` for a record that decided nothing (ERROR, INTERRUPTED,
    INCONCLUSIVE): not a pass."""
    details = r.get("details") if isinstance(r.get("details"), Mapping) else {}
    why = r.get("error") or details.get("note")
    label = Verdict(r["verdict"]).label
    return (f"{d.title(r)}: {label}" + (f" — {' '.join(str(why).split())[:300]}" if why else "")
            + ": the audit decided nothing, this is not a pass")


def render_sarif(run: Mapping[str, Any]) -> dict:
    """The SARIF 2.1.0 log (a dict; :func:`dpaudit.report.json_io.dumps` writes it) for ``run``."""
    kinds = registered_kinds()
    results = []
    for r in run.get("results", []):
        own = kind_of(r).sarif_findings()
        if own is not None:
            results += _own_results(r, kinds, own)
        elif isinstance(r.get("findings"), Mapping) and r.get("verdict") != Verdict.ERROR.value \
                and fnd.findings_of(r):
            results += _finding_results(r, kinds)
        elif r.get("verdict") == Verdict.REFUTED.value:
            results.append(_result(r, kinds))
        results += _stage_results(r, kinds)
    # a run that did not finish an audit (ERROR: the audited code or dpaudit failed;
    # INTERRUPTED: stopped by a signal) did not execute successfully, and one that decided
    # nothing (INCONCLUSIVE) says so: code scanning must not read an empty result list as clean
    undecided = {Verdict.ERROR.value: "error", Verdict.INTERRUPTED.value: "error",
                 Verdict.INCONCLUSIVE.value: "warning"}
    stopped = [r for r in run.get("results", []) if r.get("verdict") in undecided]
    invocation: dict[str, Any] = {"executionSuccessful": not any(
        undecided[r["verdict"]] == "error" for r in stopped)}
    if run.get("command"):
        invocation["commandLine"] = str(run["command"])
    for key, field in (("started", "startTimeUtc"), ("finished", "endTimeUtc")):
        if run.get(key):
            invocation[field] = str(run[key])
    off = [r for r in run.get("results", []) if isolation_off(r)]
    notes = [{"level": undecided[r["verdict"]], "message": {"text": _undecided_text(r)}} for r in stopped]
    notes += [{"level": "warning", "message": {"text": f"{d.title(r)}: {isolation_off(r)}"}} for r in off]
    if notes:  # code scanning shows the run's notifications with its alerts
        invocation["toolExecutionNotifications"] = notes
    said = [sandboxed(r) for r in run.get("results", []) if sandboxed(r) is not None]
    driver = {"name": "dpaudit", "rules": _rules(kinds)}
    if run.get("tool_version"):
        driver["version"] = driver["semanticVersion"] = str(run["tool_version"])
    sarif_run: dict[str, Any] = {
        "tool": {"driver": driver},
        "invocations": [invocation],
        "columnKind": "unicodeCodePoints",
        "results": results,
        "properties": {"seed": run.get("seed"), "format_version": run.get("format_version"),
                       "git_commit": run.get("git_commit"), "summary": run.get("summary"),
                       "float_policy": fnd.policies(run.get("results", [])),
                       "sandboxed": all(said) if said else None,
                       "environment": run.get("environment")},
    }
    artifacts = _artifacts(run)
    if artifacts:
        sarif_run["artifacts"] = artifacts
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [sarif_run]}


def _artifacts(run: Mapping[str, Any]) -> list[dict]:
    """Each audited file with its SHA-256 when audited (``run["audited_files"]``)."""
    out = []
    for f in run.get("audited_files") or ():
        if not isinstance(f, Mapping) or not f.get("path"):
            continue
        uri, base = _uri(str(f["path"]))
        loc = {"uri": uri} if base is None else {"uri": uri, "uriBaseId": base}
        art: dict[str, Any] = {"location": loc, "roles": ["analysisTarget"]}
        if f.get("sha256"):
            art["hashes"] = {"sha-256": str(f["sha256"])}
        out.append(art)
    return out


def render_sarif_text(run: Mapping[str, Any]) -> str:
    """The SARIF log of ``run`` as JSON text (the ``sarif`` format of the report registry)."""
    from dpaudit.report.json_io import dumps

    return dumps(render_sarif(run))
