"""SARIF 2.1.0: one result per refuted claim, at the mechanism's file and line.

Static-analysis consumers (GitHub code scanning, GitLab, VS Code SARIF viewer) read the OASIS
SARIF 2.1.0 object model: ``{"version": "2.1.0", "$schema", "runs": [{"tool": {"driver":
{"name", "rules": [...]}}, "results": [...]}]}``. dpaudit writes

* one rule per claim kind (sampled audit, exact audit, sensitivity search, formal claim, seed
  claim), always all five in that order, so ``ruleIndex`` is stable across runs;
* one result per REFUTED record: ``ruleId``, ``ruleIndex``, ``level: "error"``, ``message.text``
  (claim, finding, reproduce line), ``locations`` at the mechanism's source (a path relative to the
  repository root with ``uriBaseId: "%SRCROOT%"``, and ``region.startLine``), a
  ``partialFingerprints`` entry so alerts are tracked across commits, and the numbers in
  ``properties``. A suite negative control that was *expected* to be refuted carries an external,
  accepted ``suppression`` with the reason, so a consumer lists it as intended.

A seed claim is a statement of a source paper, not a defect in code. When it is refuted as
expected (its ``expected``, else its ``recorded_verdict``, is ``refuted``) its result is a
``note`` with an accepted suppression citing SPEC §8's erratum, located at the line that defines the
claim in ``mechanisms/``. A seed claim refuted against its recorded verdict is an ``error``: the
re-check no longer reproduces what we recorded.

Records that are not refuted produce no result (SARIF reports findings, not passes). The location
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
from dpaudit.report.model import relative_path
from dpaudit.results import Verdict

__all__ = ["render_sarif", "SARIF_SCHEMA", "RULES", "find_location"]

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

#: kind -> (rule id, rule name, short description, full description)
RULES = {
    "audit": ("DPA001", "PrivacyClaimRefutedBySampling",
              "A differential-privacy claim is refuted by a sampled audit.",
              "A black-box audit found neighbouring datasets D, D' and an event S with "
              "P[M(D) in S] > e^eps P[M(D') in S] + delta: the Clopper-Pearson lower bound on epsilon, "
              "from samples that played no part in choosing D, D' or S, exceeds the claim at the "
              "stated family-wise confidence."),
    "exact": ("DPA002", "PrivacyClaimRefutedExactly",
              "A differential-privacy claim is refuted by the exact output law.",
              "A white-box audit computed the exact privacy loss sup_y |ln p_D(y) - ln p_D'(y)| "
              "(or the hockey-stick delta) of the mechanism's declared output law on a neighbouring "
              "pair, and it exceeds the claim."),
    "sensitivity": ("DPA003", "SensitivityBoundRefuted",
                    "A declared sensitivity bound is refuted by a counterexample.",
                    "A hypothesis search found neighbouring datasets on which the function's outputs "
                    "differ by more than the declared (global or individual) sensitivity bound."),
    "formal": ("DPA004", "FormalClaimRefuted",
               "A formal claim is refuted by a solver model.",
               "z3 found a model that violates the claim; the model and the SMT-LIB2 query are in "
               "the report."),
    "seed-claim": ("DPA005", "SeedStatementRefuted",
                   "A statement of a source paper is refuted by a numeric check.",
                   "A formula, lemma or theorem of one of the seed papers was re-checked numerically "
                   "(exact sums or quadrature of the stated formula, exact privacy losses, exhaustive "
                   "enumeration) and an explicit counterexample shows it false. This is a finding about "
                   "the paper, not a defect in this code; SPEC section 8 lists the erratum and the "
                   "correction the reference mechanisms implement."),
}
#: kinds whose findings are about a paper, not the code: a refutation expected of them is a note
_PAPER_KINDS = frozenset({"seed-claim"})
_KINDS = list(RULES)


def _rules() -> list[dict]:
    out = []
    for kind in _KINDS:
        rid, name, short, full = RULES[kind]
        out.append({
            "id": rid,
            "name": name,
            "shortDescription": {"text": short},
            "fullDescription": {"text": full},
            "help": {"text": f"{full} Re-run the reproduce command in the message to replay it."},
            "defaultConfiguration": {"level": "note" if kind in _PAPER_KINDS else "error"},
            "properties": {"tags": ["differential-privacy", "privacy", d.KIND_TEXT[kind]],
                           "precision": "very-high",
                           "problem.severity": "recommendation" if kind in _PAPER_KINDS else "error"},
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


def _fingerprint(rec: Mapping[str, Any]) -> str:
    key = "|".join([str(rec.get("kind")), d.title(rec), d.claim_text(rec)])
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


def _result(rec: Mapping[str, Any]) -> dict:
    kind = rec.get("kind") if rec.get("kind") in RULES else "audit"
    paper = kind in _PAPER_KINDS
    expected = rec.get("expected", rec.get("recorded_verdict") if paper else None)
    if paper:
        text = (f"{d.title(rec)}: the paper's statement \"{d.claim_text(rec)}\" is REFUTED by a numeric "
                f"check: {d.finding_text(rec)}.")
    else:
        text = f"{d.title(rec)}: the claim {d.claim_text(rec)} is REFUTED: {d.finding_text(rec)}."
    if rec.get("reproduce"):
        text += f" Reproduce: {rec['reproduce']}"
    res: dict[str, Any] = {
        "ruleId": RULES[kind][0],
        "ruleIndex": _KINDS.index(kind),
        "level": "note" if paper and expected == Verdict.REFUTED.value else "error",
        "kind": "fail",
        "message": {"text": text},
        "locations": [],
        "partialFingerprints": {"dpauditClaim/v1": _fingerprint(rec)},
        "properties": {k: rec[k] for k in ("id", "target", "verdict", "expected", "claim",
                                           "epsilon_lower_bound", "delta_lower_bound", "confidence",
                                           "samples", "reproduce", "recorded_verdict", "seed_paper",
                                           "source", "statement", "spec", "errata", "observed", "bound",
                                           "recheck") if rec.get(k) is not None},
    }
    loc = find_location(rec)
    logical = [{"fullyQualifiedName": str(rec.get("target") or d.title(rec)),
                "kind": "declaration" if paper else "function"}]
    if loc is not None:
        uri, base = _uri(loc["path"])
        artifact = {"uri": uri} if base is None else {"uri": uri, "uriBaseId": base}
        res["locations"].append({"physicalLocation": {"artifactLocation": artifact,
                                                      "region": {"startLine": loc["line"]}},
                                 "logicalLocations": logical})
    else:
        res["locations"].append({"logicalLocations": logical})
    if expected == Verdict.REFUTED.value:
        res["suppressions"] = [{"kind": "external", "status": "accepted",
                                "justification": _seed_justification(rec) if paper else
                                "negative control: this broken variant is expected to be refuted"}]
    return res


def _seed_justification(rec: Mapping[str, Any]) -> str:
    errata = rec.get("errata") if isinstance(rec.get("errata"), list) else []
    where = f"SPEC §8 {', '.join(map(str, errata))}" if errata else str(rec.get("spec") or "SPEC")
    paper = f"seed {rec['seed_paper']}" if rec.get("seed_paper") else "a seed paper"
    return (f"a statement of {paper} ({d.paper_source(rec) or 'source unknown'}) recorded as false ({where}); "
            "a finding about the paper, not a defect in this code")


def render_sarif(run: Mapping[str, Any]) -> dict:
    """The SARIF 2.1.0 log (a dict; :func:`dpaudit.report.json_io.dumps` writes it) for ``run``."""
    results = [_result(r) for r in run.get("results", []) if r.get("verdict") == Verdict.REFUTED.value]
    invocation: dict[str, Any] = {"executionSuccessful": True}
    if run.get("command"):
        invocation["commandLine"] = str(run["command"])
    for key, field in (("started", "startTimeUtc"), ("finished", "endTimeUtc")):
        if run.get(key):
            invocation[field] = str(run[key])
    driver = {"name": "dpaudit", "rules": _rules()}
    if run.get("tool_version"):
        driver["version"] = driver["semanticVersion"] = str(run["tool_version"])
    sarif_run: dict[str, Any] = {
        "tool": {"driver": driver},
        "invocations": [invocation],
        "columnKind": "unicodeCodePoints",
        "results": results,
        "properties": {"seed": run.get("seed"), "format_version": run.get("format_version"),
                       "git_commit": run.get("git_commit"), "summary": run.get("summary")},
    }
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [sarif_run]}
