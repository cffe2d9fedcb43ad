"""SARIF 2.1.0: one result per refuted claim, at the mechanism's file and line.

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
from dpaudit.report.kinds import RecordKind, kind_of, registered_kinds
from dpaudit.report.model import relative_path
from dpaudit.results import Verdict

__all__ = ["render_sarif", "render_sarif_text", "SARIF_SCHEMA", "find_location"]

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

def _rules(kinds: tuple) -> list[dict]:
    out = []
    for k in kinds:
        r = k.rule
        out.append({
            "id": r.id,
            "name": r.name,
            "shortDescription": {"text": r.short},
            "fullDescription": {"text": r.full},
            "help": {"text": f"{r.full} Re-run the reproduce command in the message to replay it."},
            "defaultConfiguration": {"level": "note" if r.paper else "error"},
            "properties": {"tags": ["differential-privacy", "privacy", k.description],
                           "precision": "very-high",
                           "problem.severity": "recommendation" if r.paper else "error"},
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


def _fingerprint(rec: Mapping[str, Any], k: RecordKind) -> str:
    key = "|".join([str(rec.get("kind")), d.title(rec), k.claim_text()])
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


def _result(rec: Mapping[str, Any], kinds: tuple) -> dict:
    k = kind_of(rec)
    known = type(k) in kinds
    rule = k.rule if known else kinds[0].rule  # an unknown kind is reported under the first rule
    paper = k.rule.paper
    expected = k.sarif_expected()
    text = k.sarif_message(d.title(rec))
    if rec.get("reproduce"):
        text += f" Reproduce: {rec['reproduce']}"
    res: dict[str, Any] = {
        "ruleId": rule.id,
        "ruleIndex": kinds.index(type(k)) if known else 0,
        "level": "note" if paper and expected == Verdict.REFUTED.value else "error",
        "kind": "fail",
        "message": {"text": text},
        "locations": [],
        "partialFingerprints": {"dpauditClaim/v1": _fingerprint(rec, k)},
        "properties": {key: rec[key] for key in k.sarif_properties if rec.get(key) is not None},
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
                                "justification": k.sarif_justification()}]
    return res


def render_sarif(run: Mapping[str, Any]) -> dict:
    """The SARIF 2.1.0 log (a dict; :func:`dpaudit.report.json_io.dumps` writes it) for ``run``."""
    kinds = registered_kinds()
    results = [_result(r, kinds) for r in run.get("results", []) if r.get("verdict") == Verdict.REFUTED.value]
    invocation: dict[str, Any] = {"executionSuccessful": True}
    if run.get("command"):
        invocation["commandLine"] = str(run["command"])
    for key, field in (("started", "startTimeUtc"), ("finished", "endTimeUtc")):
        if run.get(key):
            invocation[field] = str(run[key])
    driver = {"name": "dpaudit", "rules": _rules(kinds)}
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


def render_sarif_text(run: Mapping[str, Any]) -> str:
    """The SARIF log of ``run`` as JSON text (the ``sarif`` format of the report registry)."""
    from dpaudit.report.json_io import dumps

    return dumps(render_sarif(run))
