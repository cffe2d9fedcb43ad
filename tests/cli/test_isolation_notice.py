"""Whenever the audited code ran without the full sandbox (``--in-process``, a library target,
``--isolation process``, a kernel without Landlock), the verdict line and every report say so: JSON
``sandboxed: false``, HTML, Markdown, JUnit and SARIF; a sandboxed run says nothing of the kind."""

from __future__ import annotations

import html
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from dpaudit.cli import run
from dpaudit.execution.isolation import landlock_abi

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = str(ROOT / "examples" / "laplace_sum.py")
FORMATS = ("json", "html", "markdown", "junit", "sarif")
NOTICE = "isolation off: the code ran in dpaudit's own process, without the sandbox"


def _check(tmp_path: Path, capsys, *flags: str) -> tuple[int, str, dict[str, str]]:
    paths = {fmt: tmp_path / f"r.{fmt}" for fmt in FORMATS}
    code = run(["check", *flags, "--samples=2000", "--no-replay", "--quiet",
                *(f"--{fmt}={p}" for fmt, p in paths.items()), "--", EXAMPLE])
    return int(code), capsys.readouterr().out, {fmt: p.read_text() for fmt, p in paths.items()}


def test_an_audit_in_process_says_so_on_the_line_and_in_every_report(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code, out, reports = _check(tmp_path, capsys, "--in-process")
    assert code == 0, out
    (line,) = [ln for ln in out.splitlines() if ": NOT REFUTED" in ln]
    assert f"[{NOTICE} (it could read the job's secrets and change this verdict)]" in line
    (rec,) = json.loads(reports["json"])["results"]
    assert rec["sandboxed"] is False and rec["isolation"] == "none (in process)"
    assert NOTICE in html.unescape(reports["html"])
    assert NOTICE in reports["markdown"]
    junit = ET.fromstring(reports["junit"])
    props = {p.get("name"): p.get("value") for p in junit.iter("property")}
    assert NOTICE in props["dpaudit.isolation_off"]
    assert all(NOTICE in (so.text or "") for so in junit.iter("system-out"))
    sarif = json.loads(reports["sarif"])["runs"][0]
    notes = sarif["invocations"][0]["toolExecutionNotifications"]
    assert [n["level"] for n in notes] == ["warning"] and NOTICE in notes[0]["message"]["text"]
    assert sarif["properties"]["sandboxed"] is False


@pytest.mark.skipif(landlock_abi() < 1, reason="the full sandbox needs Landlock in the kernel")
def test_a_sandboxed_audit_says_nothing_of_the_kind(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code, out, reports = _check(tmp_path, capsys)
    assert code == 0, out
    assert "isolation off" not in out
    (rec,) = json.loads(reports["json"])["results"]
    assert rec["sandboxed"] is True
    for fmt in ("html", "markdown", "junit", "sarif"):
        assert "isolation off" not in reports[fmt], fmt
    sarif = json.loads(reports["sarif"])["runs"][0]
    assert "toolExecutionNotifications" not in sarif["invocations"][0]
    assert sarif["properties"]["sandboxed"] is True


def test_a_process_only_record_is_said_to_be_unconfined():
    from dpaudit.report.provenance import isolation_off, sandboxed

    rec = {"isolation": "process only (Landlock unavailable: Function not implemented) + seccomp"}
    assert sandboxed(rec) is False
    assert isolation_off(rec) == ("isolation off: process only (Landlock unavailable: Function not "
                                  "implemented) + seccomp, no file-system confinement (the code "
                                  "could read the runner's files and reach the network)")
    assert isolation_off({"isolation": "landlock (ABI 7) + seccomp"}) == ""
    assert isolation_off({}) == "" and sandboxed({}) is None
