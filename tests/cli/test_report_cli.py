"""``dpaudit report RESULT.json``: re-renders a saved run; bad files are one line and exit 3."""

import json
import xml.etree.ElementTree as ET

import pytest
from cli_in_process import dpaudit as in_process, dpaudit_process

from dpaudit.report import make_run, write_json

RECORDS = [
    {"kind": "audit", "target": "m.py:f", "verdict": "refuted", "elapsed_s": 0.1, "reproduce": "dpaudit check m.py:f",
     "claim": {"epsilon": 1.0, "delta": 0.0, "neighbours": "add-remove"}, "epsilon_lower_bound": 2.0,
     "confidence": 0.95, "samples": 100, "location": {"path": "m.py", "line": 3}},
    {"kind": "formal", "target": "c", "verdict": "proved", "elapsed_s": 0.1, "smt2": "(check-sat)\n"},
]


def dpaudit(*args, cwd=None):
    return in_process(*args, cwd=cwd)  # the command's entry point in this process


@pytest.fixture
def saved(tmp_path):
    return write_json(make_run(RECORDS, seed=3, started=0, finished=1, command="dpaudit check m.py", git=False),
                      tmp_path / "result.json")


def test_rerenders_every_format(saved, tmp_path):
    out = dpaudit("report", saved, "--html", tmp_path / "r.html", "--junit", tmp_path / "r.xml",
                  "--sarif", tmp_path / "r.sarif", "--json", tmp_path / "copy.json", "--markdown", tmp_path / "r.md")
    assert out.returncode == 0, out.stderr
    assert "2 results (1 refuted, 1 proved)" in out.stdout
    assert "<svg" not in (tmp_path / "r.html").read_text() and "REFUTED" in (tmp_path / "r.html").read_text()
    assert len(list(ET.parse(tmp_path / "r.xml").getroot().iter("testcase"))) == 2
    assert len(json.loads((tmp_path / "r.sarif").read_text())["runs"][0]["results"]) == 1
    assert json.loads((tmp_path / "copy.json").read_text()) == json.loads(open(saved).read())
    md = (tmp_path / "r.md").read_text()
    assert md.startswith("## dpaudit: 1 refuted, 1 proved") and "`dpaudit check m.py:f`" in md
    assert out.stdout.splitlines()[1:] == [f"dpaudit: wrote {fmt}: {tmp_path / name}" for fmt, name in
                                           (("json", "copy.json"), ("junit", "r.xml"), ("sarif", "r.sarif"),
                                            ("markdown", "r.md"), ("html", "r.html"))]


@pytest.mark.parametrize("content, message", [
    (None, "no such file"),
    ("{oops", "not valid JSON"),
    ('{"results": []}', "no format_version"),
    ('{"format_version": "7.0", "results": []}', "format_version '7.0'"),
    ('{"format_version": "1.0", "results": [{"kind": "audit"}]}', "'target'"),
])
def test_bad_result_files_are_one_line_and_exit_3(tmp_path, content, message):
    path = tmp_path / "r.json"
    if content is not None:
        path.write_text(content)
    out = dpaudit("report", path, "--html", tmp_path / "r.html")
    assert out.returncode == 3
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in out.stderr
    assert not (tmp_path / "r.html").exists()


def test_nothing_to_write_is_a_usage_error(saved):
    out = dpaudit_process("report", saved)  # in a fresh process
    assert out.returncode == 3 and "--html F" in out.stderr and "--markdown F" in out.stderr


def test_a_report_never_overwrites_the_result_it_reads_or_another_format(saved, tmp_path):
    # `dpaudit report two.json --html two.json` replaced the saved result by HTML, exit 0 (a
    # hurried user's probe); check refused the same mistake
    before = open(saved).read()
    out = dpaudit("report", saved, "--html", saved)
    assert out.returncode == 3 and "would overwrite the result it reads" in out.stderr
    assert open(saved).read() == before
    out = dpaudit("report", saved, "--json", tmp_path / "x.out", "--html", tmp_path / "x.out")
    assert out.returncode == 3 and "both write" in out.stderr and not (tmp_path / "x.out").exists()
