"""``dpaudit check FILE.py:f --sensitivity B``: the sensitivity search on third-party code, run in
the sandbox child with per-call and total time limits, writing the four report formats."""

import json
import time
import xml.etree.ElementTree as ET

import pytest

from dpaudit.cli import run

SOURCE = """\
import time

def total(data):
    return float(data.sum())

def clipped_total(data):
    return float(min(data.sum(), 2.0))

def hangs(data):
    time.sleep(1000)

def slow(data):
    time.sleep(0.05)
    return float(data.sum())

def raises(data):
    if len(data) > 2:
        raise ValueError("three is too many")
    return float(data.sum())
"""


@pytest.fixture
def mech(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CI", "1")
    (tmp_path / "f.py").write_text(SOURCE)
    return tmp_path


def check(mech, target, *flags):
    paths = {k: mech / f"r.{k}" for k in ("json", "html", "junit", "sarif")}
    code = run(["check", f"f.py:{target}", "--quiet", *flags,
                *[f"--{k}={v}" for k, v in paths.items()]])
    (rec,) = json.loads(paths["json"].read_text())["results"]
    ET.parse(paths["junit"])
    assert json.loads(paths["sarif"].read_text())["version"] == "2.1.0"
    assert paths["html"].read_text().rstrip().endswith("</html>")
    return int(code), rec


@pytest.mark.parametrize("isolation", [pytest.param("strict", marks=pytest.mark.slow), "none"])
def test_a_violation_is_refuted_the_same_in_the_sandbox_and_in_process(mech, isolation):
    code, rec = check(mech, "total", "--sensitivity=0.5", "--examples=200",
                      f"--isolation={isolation}")
    assert (code, rec["kind"], rec["verdict"]) == (1, "sensitivity", "refuted")
    cex = rec["counterexample"]
    assert abs(sum(cex["dataset"]) - sum(cex["neighbour"])) > 0.5
    assert rec["reproduce"].startswith("dpaudit check f.py:total --sensitivity=0.5")
    assert rec["isolation"].startswith("none" if isolation == "none" else ("landlock", "process"))


@pytest.mark.slow
def test_a_correct_bound_is_not_refuted(mech):
    code, rec = check(mech, "clipped_total", "--sensitivity=1", "--examples=200")
    assert (code, rec["verdict"]) == (0, "not_refuted")


def test_what_f_raises_is_an_error_with_its_input(mech):
    code, rec = check(mech, "raises", "--sensitivity=1", "--examples=200")
    assert (code, rec["verdict"]) == (6, "error")
    assert "raised ValueError: three is too many" in rec["error"]


def test_a_hang_is_stopped_by_the_per_call_limit(mech):
    t0 = time.monotonic()
    code, rec = check(mech, "hangs", "--sensitivity=1", "--call-timeout=0.5")
    assert (code, rec["verdict"]) == (6, "error") and "hung" in rec["error"]
    assert time.monotonic() - t0 < 10


@pytest.mark.slow
def test_the_whole_search_is_stopped_by_the_total_limit(mech):
    """The search stops trying pairs when --timeout is spent, before the sandbox's own limit
    would stop the child: NOT REFUTED after the pairs tried (INCONCLUSIVE if none was), with a
    note naming the limit, never the function's ERROR."""
    t0 = time.monotonic()
    code, rec = check(mech, "slow", "--sensitivity=1", "--examples=100000", "--timeout=3")
    assert code == 0 and rec["verdict"] in ("not_refuted", "inconclusive") and rec["error"] is None
    assert "--timeout 3 s" in rec["details"]["note"]
    assert time.monotonic() - t0 < 15


@pytest.mark.slow
def test_a_call_the_sandbox_limit_stops_is_inconclusive_not_an_error(mech):
    """A call longer than all the time left is stopped by the sandbox's total limit: the run's own
    limit, not the function's fault."""
    code, rec = check(mech, "hangs", "--sensitivity=1", "--timeout=3")
    assert (code, rec["verdict"], rec["error"]) == (0, "inconclusive", None), rec
    assert "--timeout 3 s" in rec["details"]["note"]


def test_search_flags_without_sensitivity_are_a_usage_error(mech, capsys):
    assert int(run(["check", "f.py:total", "--norm=l2"])) == 3
    assert "--norm needs --sensitivity B" in capsys.readouterr().err
