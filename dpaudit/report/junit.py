"""JUnit XML: one ``<testcase>`` per claim, so CI systems show dpaudit results beside unit tests.

Mapping (honest by construction: nothing undecided is shown as passed):

* REFUTED → ``<failure>`` with the finding (ε lower bound, counterexample) and the reproduce line;
  a replay audit's failure message names each violation and finding at its call site
  (``file:line``), its text gives what was seen there and the two runs' sequences where they part,
  and ``<system-out>`` adds its notes;
* ERROR → ``<error>`` with the cause;
* INCONCLUSIVE → ``<skipped>`` whose message starts ``INCONCLUSIVE (not a pass)``; a
  ``<failure>`` when the run failed on it (``--fail-on-inconclusive``: the run's
  ``fail_on_inconclusive``);
* NOT REFUTED / PROVED → a passing case whose ``<system-out>`` says which (``NOT REFUTED`` adds
  "this is not a proof").

A privacy audit with two findings (logic and float64) is two test cases, ``TARGET [logic]``
and ``TARGET [float64]``, each judged by its own finding: a float64 refutation under ``--float warn``
passes with the warning in ``<system-out>``, and a question not asked (integer outputs,
``--float off``) is ``<skipped>`` with the reason (nothing was checked). An ERROR record errs in both.

A suite control (a record with ``expected``) passes when its verdict equals the expected one and
fails otherwise, whatever the verdict: a broken mechanism that is REFUTED as expected is a working
control. Seed claims (a source paper's statement re-checked numerically) are judged the same way:
a statement recorded as false and REFUTED again passes; their output adds the re-check command. The schema followed is the common Jenkins/Ant one (``testsuites`` > ``testsuite`` >
``testcase``), which GitLab, GitHub Actions reporters and pytest's own ``--junitxml`` use.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any, Mapping

from dpaudit.report import describe as d
from dpaudit.report import findings as fnd
from dpaudit.report.kinds import JUnitOutcome, kind_of
from dpaudit.report.provenance import isolation_off

__all__ = ["render_junit"]

# characters XML 1.0 cannot carry at all (hostile output may contain them)
_BAD_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _clean(text: Any) -> str:
    return _BAD_XML.sub("\ufffd", str(text))


def _finding_outcome(rec: Mapping[str, Any], f: Any) -> JUnitOutcome:
    """The outcome of one finding's case (module docstring)."""
    k, fk = kind_of(rec), kind_of(f.rec)
    if rec.get("verdict") == "error":
        return JUnitOutcome("error", rec.get("error") or "error", "dpaudit.Error")
    if rec.get("expected") is not None:
        if f.decides:
            return k.junit_outcome()
        if f.verdict == "error":
            return JUnitOutcome("error", f.rec.get("error") or "error", "dpaudit.Error")
        return JUnitOutcome("passed")  # the control is judged by the finding that decides it
    if not f.applicable:
        return JUnitOutcome("skipped", f"NOT APPLICABLE (nothing was checked): {f.reason or f.short_reason()}")
    if f.warning:
        return JUnitOutcome("passed")
    if f.verdict == "refuted":
        return JUnitOutcome("failure", f"claim refuted by its {f.label} finding: {fk.finding_text()}",
                            "dpaudit.Refuted")
    if f.verdict == "error":
        return JUnitOutcome("error", f.rec.get("error") or "error", "dpaudit.Error")
    if f.verdict == "inconclusive":
        return JUnitOutcome("skipped", f"INCONCLUSIVE (not a pass): {fk.finding_text()}")
    return JUnitOutcome("passed")


def _finding_case(parent: ET.Element, rec: Mapping[str, Any], f: Any) -> str:
    """Add the testcase of one finding; return its outcome."""
    k, fk = kind_of(rec), kind_of(f.rec)
    case = _element(parent, rec, f"{d.title(rec)} [{f.label}]")
    outcome = _finding_outcome(rec, f)
    word = f.verdict_text() if f.applicable else "NOT APPLICABLE"
    lines = [f"{f.label} finding: {word}" + (f" ({d.verdict_meaning(f.verdict)})" if f.applicable else ""),
             f"claim: {k.claim_text()}"]
    if f.policy:
        lines.append(f"float64 policy: {f.policy}")
    if rec.get("verdict") == "error":
        lines.append(f"the check could not run: {rec.get('error') or 'unknown error'}")
    else:
        lines.append(fk.lead())
        if f.applicable and f.verdict != "error":
            lines.append(f"evidence: {fk.evidence_text()}")
    if f.warning:
        lines.append(f"WARNING (--float warn): the float64 implementation is porous; the verdict is the logic "
                     f"one, {d.verdict_label(rec.get('verdict'))}")
    if f.question == fnd.FLOAT and f.refuted:
        lines.append(f"fix: {fnd.float_fix(f.rec, rec)}")
    if f.decides and len(fnd.findings_of(rec) or ()) > 1:
        lines.append(f"this finding decides the verdict: {k.verdict_text()}")
    if rec.get("reproduce"):
        lines.append(f"reproduce: {rec['reproduce']}")
    body = "\n".join(lines)
    if outcome.status == "skipped":
        ET.SubElement(case, "skipped", {"message": _clean(outcome.message)})
    elif outcome.status != "passed":
        ET.SubElement(case, outcome.status, {"message": _clean(outcome.message),
                                             "type": outcome.type}).text = _clean(body)
    ET.SubElement(case, "system-out").text = _clean(body)
    return outcome.status


def _element(parent: ET.Element, rec: Mapping[str, Any], name: str) -> ET.Element:
    case = ET.SubElement(parent, "testcase", {
        "classname": _clean(f"dpaudit.{rec.get('kind', 'result')}"),
        "name": _clean(name),
        "time": f"{max(0.0, d.num(rec.get('elapsed_s')) or 0.0):.3f}",
    })
    if rec.get("location"):
        loc = rec["location"]
        case.set("file", _clean(loc.get("path", "")))
        case.set("line", str(loc.get("line", "")))
    return case


def _case(parent: ET.Element, rec: Mapping[str, Any], name: str = "") -> list[str]:
    """Add the record's testcases (two for a privacy audit with two findings, else one); return
    their outcomes: passed | failure | error | skipped."""
    fs = fnd.findings_of(rec)
    if fs and len(fs) > 1:
        return [_finding_case(parent, rec, f) for f in fs] + _stage_case(parent, rec)
    verdict = rec.get("verdict")
    k = kind_of(rec)
    case = _element(parent, rec, name or f"{d.title(rec)} [{k.claim_text()}]")
    finding = k.finding_text()
    reproduce = rec.get("reproduce") or ""
    located = "".join(f"\n{line}" for line in k.report_lines(notes=False))
    body = _clean(f"{d.verdict_label(verdict)}: {finding}{located}"
                  + (f"\nreproduce: {reproduce}" if reproduce else ""))
    outcome = k.junit_outcome()
    if outcome.status == "skipped":
        ET.SubElement(case, "skipped", {"message": _clean(outcome.message)})
    elif outcome.status != "passed":
        ET.SubElement(case, outcome.status, {"message": _clean(outcome.message),
                                             "type": outcome.type}).text = body
    out = f"{d.verdict_label(verdict)}: {d.verdict_meaning(verdict)}\n{finding}"
    out += "".join(f"\n{line}" for line in k.report_lines())
    if reproduce:
        out += f"\nreproduce: {reproduce}"
    if k.recheck():
        out += f"\nre-check: {k.recheck()}"
    ET.SubElement(case, "system-out").text = _clean(out)
    return [outcome.status] + _stage_case(parent, rec)


def _stage_case(parent: ET.Element, rec: Mapping[str, Any]) -> list[str]:
    """The test case of an audit's replay stage (``rec["replay"]``), named ``TARGET [replay]``
    beside ``[logic]`` and ``[float64]``, each finding at its call site (always there when the
    stage ran, so a run's test count does not change with what it finds)."""
    stage = rec.get("replay")
    if not isinstance(stage, Mapping) or stage.get("kind") != "replay":
        return []
    return _case(parent, stage, name=f"{d.title(rec)} [replay]")


def _gate_inconclusive(suite: ET.Element, counts: dict) -> None:
    """Under ``--fail-on-inconclusive`` (the run's ``fail_on_inconclusive``) an INCONCLUSIVE case
    is a ``<failure>``, as the exit code makes it: a dashboard reading the file showed green (every
    case passed or skipped) for a job that failed."""
    for case in suite.iter("testcase"):
        skip = case.find("skipped")
        if skip is None or not (skip.get("message") or "").startswith("INCONCLUSIVE"):
            continue
        message = skip.get("message") or ""
        case.remove(skip)
        fail = ET.Element("failure", {"message": _clean("failing under --fail-on-inconclusive: " + message),
                                      "type": "dpaudit.Inconclusive"})
        fail.text = message
        case.insert(0, fail)
        counts["skipped"] -= 1
        counts["failure"] += 1


def render_junit(run: Mapping[str, Any]) -> str:
    """The JUnit XML document for ``run`` (one testcase per record, two per privacy audit with
    two findings)."""
    records = run.get("results", [])
    suites = ET.Element("testsuites", {"name": "dpaudit"})
    suite = ET.SubElement(suites, "testsuite", {"name": "dpaudit", "timestamp": _clean(run.get("started") or "")})
    props = ET.SubElement(suite, "properties")
    for key in ("seed", "tool_version", "format_version", "git_commit", "command"):
        if run.get(key) is not None:
            ET.SubElement(props, "property", {"name": f"dpaudit.{key}", "value": _clean(run[key])})
    for policy in fnd.policies(records):
        ET.SubElement(props, "property", {"name": "dpaudit.float_policy", "value": _clean(policy)})
    for f in run.get("audited_files") or ():
        if isinstance(f, Mapping) and f.get("path"):
            ET.SubElement(props, "property", {"name": f"dpaudit.sha256:{_clean(f['path'])}",
                                              "value": _clean(f.get("sha256") or "not hashed")})
    for rec in records:
        if isolation_off(rec):
            ET.SubElement(props, "property", {"name": "dpaudit.isolation_off",
                                              "value": _clean(f"{d.title(rec)}: {isolation_off(rec)}")})
    counts = {"passed": 0, "failure": 0, "error": 0, "skipped": 0}
    total_time = 0.0
    tests = 0
    for rec in records:
        before = len(suite)
        for status in _case(suite, rec):
            counts[status] += 1
            tests += 1
        if isolation_off(rec):  # each of the record's test cases says it, first
            for case in list(suite)[before:]:
                out = case.find("system-out")
                if out is not None:
                    out.text = _clean(f"{isolation_off(rec)}\n{out.text or ''}")
        total_time += max(0.0, d.num(rec.get("elapsed_s")) or 0.0)
    if run.get("fail_on_inconclusive"):
        _gate_inconclusive(suite, counts)
    attrs = {"tests": str(tests), "failures": str(counts["failure"]),
             "errors": str(counts["error"]), "skipped": str(counts["skipped"]), "time": f"{total_time:.3f}"}
    for el in (suites, suite):
        for k, v in attrs.items():
            el.set(k, v)
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
