"""JUnit XML: one ``<testcase>`` per claim, so CI systems show dpaudit results beside unit tests.

Mapping (honest by construction: nothing undecided is shown as passed):

* REFUTED → ``<failure>`` with the finding (ε lower bound, counterexample) and the reproduce line;
* ERROR → ``<error>`` with the cause;
* INCONCLUSIVE → ``<skipped>`` whose message starts ``INCONCLUSIVE (not a pass)``;
* NOT REFUTED / PROVED → a passing case whose ``<system-out>`` says which (``NOT REFUTED`` adds
  "this is not a proof").

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
from dpaudit.report.kinds import kind_of

__all__ = ["render_junit"]

# characters XML 1.0 cannot carry at all (hostile output may contain them)
_BAD_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _clean(text: Any) -> str:
    return _BAD_XML.sub("\ufffd", str(text))


def _case(parent: ET.Element, rec: Mapping[str, Any]) -> str:
    """Add one testcase; return its outcome: passed | failure | error | skipped."""
    verdict = rec.get("verdict")
    k = kind_of(rec)
    name = f"{d.title(rec)} [{k.claim_text()}]"
    case = ET.SubElement(parent, "testcase", {
        "classname": _clean(f"dpaudit.{rec.get('kind', 'result')}"),
        "name": _clean(name),
        "time": f"{max(0.0, d.num(rec.get('elapsed_s')) or 0.0):.3f}",
    })
    if rec.get("location"):
        loc = rec["location"]
        case.set("file", _clean(loc.get("path", "")))
        case.set("line", str(loc.get("line", "")))
    finding = k.finding_text()
    reproduce = rec.get("reproduce") or ""
    body = _clean(f"{d.verdict_label(verdict)}: {finding}" + (f"\nreproduce: {reproduce}" if reproduce else ""))
    outcome = k.junit_outcome()
    if outcome.status == "skipped":
        ET.SubElement(case, "skipped", {"message": _clean(outcome.message)})
    elif outcome.status != "passed":
        ET.SubElement(case, outcome.status, {"message": _clean(outcome.message),
                                             "type": outcome.type}).text = body
    out = f"{d.verdict_label(verdict)}: {d.verdict_meaning(verdict)}\n{finding}"
    if reproduce:
        out += f"\nreproduce: {reproduce}"
    if k.recheck():
        out += f"\nre-check: {k.recheck()}"
    ET.SubElement(case, "system-out").text = _clean(out)
    return outcome.status


def render_junit(run: Mapping[str, Any]) -> str:
    """The JUnit XML document for ``run`` (one testcase per record)."""
    records = run.get("results", [])
    suites = ET.Element("testsuites", {"name": "dpaudit"})
    suite = ET.SubElement(suites, "testsuite", {"name": "dpaudit", "timestamp": _clean(run.get("started") or "")})
    props = ET.SubElement(suite, "properties")
    for key in ("seed", "tool_version", "format_version", "git_commit", "command"):
        if run.get(key) is not None:
            ET.SubElement(props, "property", {"name": f"dpaudit.{key}", "value": _clean(run[key])})
    counts = {"passed": 0, "failure": 0, "error": 0, "skipped": 0}
    total_time = 0.0
    for rec in records:
        counts[_case(suite, rec)] += 1
        total_time += max(0.0, d.num(rec.get("elapsed_s")) or 0.0)
    attrs = {"tests": str(len(records)), "failures": str(counts["failure"]),
             "errors": str(counts["error"]), "skipped": str(counts["skipped"]), "time": f"{total_time:.3f}"}
    for el in (suites, suite):
        for k, v in attrs.items():
            el.set(k, v)
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
