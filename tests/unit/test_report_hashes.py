"""Reports pin what was audited: the SHA-256 of each audited file (``run["audited_files"]``), the
dpaudit version and the environment, in the JSON, HTML, Markdown, JUnit and SARIF alike."""

import hashlib
import xml.etree.ElementTree as ET

from dpaudit.report import make_run, read_json, render_html, render_junit, render_markdown, render_sarif, write_json
from dpaudit.report.model import audited_files, audited_path

SOURCE = "import dpaudit\n\n\ndef noisy(data, rng):\n    return data.sum() + rng.laplace(scale=1.0)\n"


def rec(target, **extra):
    r = {"kind": "audit", "target": target, "verdict": "not_refuted", "elapsed_s": 0.1,
         "claim": {"epsilon": 1.0, "delta": 0.0, "neighbours": "add-remove"}, "epsilon_lower_bound": 0.5,
         "confidence": 0.95, "samples": 10, "reproduce": f"dpaudit check {target}"}
    r.update(extra)
    return r


def run_of(*records):
    return make_run(list(records), seed=1, started=0, finished=1, command="dpaudit check", git=False)


def test_each_audited_file_is_hashed_once_and_a_changed_byte_changes_its_hash(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pkg").mkdir()
    mech = tmp_path / "pkg" / "mech.py"
    mech.write_text(SOURCE)
    other = tmp_path / "other.py"
    other.write_text("def f(data):\n    return 0\n")
    records = [rec("pkg/mech.py:noisy"),                                          # the target's file part
               rec("pkg/mech.py:noisy", id="again"),                              # the same file: once
               rec("x", location={"path": "other.py", "line": 1}),                # the record's location
               rec("l1-helly-2d", kind="formal"),                                 # no file
               rec("gone.py:f")]                                                  # a file no longer there
    run = run_of(*records)
    first = run["audited_files"]
    assert [f["path"] for f in first] == ["pkg/mech.py", "other.py", "gone.py"]
    assert first[0]["sha256"] == hashlib.sha256(SOURCE.encode()).hexdigest()
    assert first[2] == {"path": "gone.py", "sha256": None, "error": "not found"}
    data = bytearray(mech.read_bytes())
    data[-2] ^= 0x01                                                              # one byte changed
    mech.write_bytes(bytes(data))
    second = run_of(*records)["audited_files"]
    assert second[0]["sha256"] != first[0]["sha256"] and second[1] == first[1]
    assert second[0]["sha256"] == hashlib.sha256(bytes(data)).hexdigest()


def test_the_path_comes_from_the_location_else_the_target():
    assert audited_path(rec("a/b.py:f", location={"path": "c/d.py", "line": 3})) == "c/d.py"
    assert audited_path(rec("a/b.py:Class.method")) == "a/b.py"
    assert audited_path(rec("a/b.py")) == "a/b.py"
    assert audited_path(rec("opendp:laplace")) is None and audited_path({"target": None}) is None
    assert audited_files([]) == []


def test_every_report_pins_the_files_the_version_and_the_environment(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mech.py").write_text(SOURCE)
    run = run_of(rec("mech.py:noisy", verdict="refuted", epsilon_lower_bound=3.0))
    digest = run["audited_files"][0]["sha256"]
    back = read_json(write_json(run, tmp_path / "r.json"))
    assert back["audited_files"] == run["audited_files"]            # kept as audited, not re-hashed
    (tmp_path / "mech.py").write_text(SOURCE + "# edited\n")
    assert read_json(tmp_path / "r.json")["audited_files"][0]["sha256"] == digest
    html = render_html(back, plots=False)
    assert "Audited files (SHA-256)" in html and digest in html and "numpy" in html
    assert f"dpaudit {run['tool_version']}" in html
    md = render_markdown(back)
    assert f"- `mech.py`: `{digest}`" in md and f"dpaudit `{run['tool_version']}`" in md
    assert f"numpy `{run['environment']['numpy']}`" in md
    props = {p.get("name"): p.get("value") for p in ET.fromstring(render_junit(back)).iter("property")}
    assert props["dpaudit.sha256:mech.py"] == digest and props["dpaudit.tool_version"] == run["tool_version"]
    sarif = render_sarif(back)["runs"][0]
    assert sarif["artifacts"] == [{"location": {"uri": "mech.py", "uriBaseId": "%SRCROOT%"},
                                   "roles": ["analysisTarget"], "hashes": {"sha-256": digest}}]
    assert sarif["properties"]["environment"] == run["environment"]


def test_an_older_run_without_hashes_still_renders_and_says_so(tmp_path):
    run = run_of(rec("mech.py:noisy"))
    del run["audited_files"]
    write_json(run, tmp_path / "old.json")
    back = read_json(tmp_path / "old.json")
    assert "Not recorded by this run" in render_html(back, plots=False)
    assert "Audited files: not recorded by this run." in render_markdown(back)
    assert "artifacts" not in render_sarif(back)["runs"][0]
