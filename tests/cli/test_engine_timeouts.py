"""Every engine of ``dpaudit check`` keeps to ``--timeout``: the curve audit and the sensitivity
search stop on their own when the time is spent, in process and sandboxed (before the sandbox's
hard limit stops the child), and say so: the curve audit reports the lower curve of the validation
samples it drew or is INCONCLUSIVE, the search is NOT REFUTED after the pairs it tried (REFUTED if
it had found a counterexample), each with a note naming the limit, never an ERROR. Fixed seeds; the
mechanisms sleep at every call, so the limit, not the budget, ends each run."""

import json
import time
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from dpaudit.cli import run
from dpaudit.results import Verdict

SOURCE = """\
import time
import dpaudit

@dpaudit.mechanism(rho=0.5, neighbours="linf", domain=(0, 1), size=1)
def slow_gaussian(data, rng, size=None):
    time.sleep(0.3)
    return data[0] + rng.normal(0.0, 1.0, size=size)

def slow_sum(data):
    time.sleep(0.02)
    return float(data.sum())
"""

#: what the engine may take beyond --timeout: a call under way when the time is up, and the
#: bounds computed on what was drawn (the limit counts from the command's start, before the engine)
ENGINE_GRACE = 1.5
#: ... and the whole command: the first import of the report writers, five reports, closing the
#: sandbox, on a machine shared with other jobs. Without a limit either run takes minutes
GRACE = 8.0


@pytest.fixture
def mech(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CI", "1")
    (tmp_path / "m.py").write_text(SOURCE)
    return tmp_path


def check(mech, *args):
    """``dpaudit check`` with every report format; (exit code, record, seconds taken)."""
    paths = {k: mech / f"r.{k}" for k in ("json", "html", "junit", "sarif", "markdown")}
    t0 = time.monotonic()
    code = run(["check", *args, "--quiet", *[f"--{k}={v}" for k, v in paths.items()]])
    took = time.monotonic() - t0
    (rec,) = json.loads(paths["json"].read_text())["results"]
    ET.parse(paths["junit"])
    assert json.loads(paths["sarif"].read_text())["version"] == "2.1.0"
    assert paths["html"].read_text().rstrip().endswith("</html>")
    assert paths["markdown"].read_text().strip()
    return int(code), rec, took


@pytest.mark.slow
@pytest.mark.parametrize("where", [["--in-process"], []], ids=["in-process", "sandboxed"])
def test_the_curve_engine_stops_at_the_time_limit(mech, where):
    code, rec, took = check(mech, "m.py:slow_gaussian", "--timeout=3", *where)
    assert rec["kind"] == "curve" and rec["error"] is None, rec
    assert took <= 3 + GRACE and rec["elapsed_s"] <= 3 + ENGINE_GRACE, (took, rec["elapsed_s"])
    assert rec["details"]["timed_out"] and "--timeout 3 s" in rec["details"]["note"]
    if rec["verdict"] == "inconclusive":  # nothing validated by then
        assert code == 0 and rec["point"] is None and "before any validation" in rec["details"]["note"]
    else:  # a look validated something: its lower curve, from those samples only
        assert rec["verdict"] in ("not_refuted", "refuted") and "validation samples" in rec["details"]["note"]


@pytest.mark.slow
@pytest.mark.parametrize("where", [["--in-process"], []], ids=["in-process", "sandboxed"])
def test_the_sensitivity_search_stops_at_the_time_limit(mech, where):
    code, rec, took = check(mech, "m.py:slow_sum", "--sensitivity=1", "--examples=100000",
                            "--timeout=3", *where)
    assert rec["kind"] == "sensitivity" and rec["error"] is None, rec
    assert took <= 3 + GRACE and rec["elapsed_s"] <= 3 + ENGINE_GRACE, (took, rec["elapsed_s"])
    assert rec["verdict"] in ("not_refuted", "inconclusive") and code == 0, rec
    assert rec["details"]["timed_out"] and "--timeout 3 s" in rec["details"]["note"]
    assert rec["examples"] < 100_000


def _slow_gaussian(data, rng, size=None):
    time.sleep(0.05)
    return data[0] + rng.normal(0.0, 1.0, size=size)


@pytest.mark.slow
def test_curve_audit_takes_a_timeout():
    from dpaudit.curves import curve_audit

    t0 = time.monotonic()
    res = curve_audit(_slow_gaussian, rho=0.5, neighbours="linf", domain=(0, 1), size=1,
                      seed=3, timeout=1.5)
    # 3 s of slack for a loaded machine (-n 4 on 2 cores); without the limit it ran to its
    # budget, minutes
    assert time.monotonic() - t0 <= 1.5 + 3.0
    assert res.verdict is not Verdict.ERROR and res.details["timed_out"]
    assert "timeout=1.5 s" in res.details["note"]
    if res.verdict is Verdict.INCONCLUSIVE:
        assert res.point is None and not any(res.delta_lower_bound)
    rec = res.to_record()
    assert rec["details"]["note"] == res.details["note"]
    # no limit: no note, and the record has no such keys
    fast = curve_audit(lambda data, rng, size=None: data[0] + rng.normal(0.0, 1.0, size=size),
                       rho=0.5, neighbours="linf", domain=(0, 1), size=1, seed=3, samples=20_000)
    assert "note" not in fast.details and "timed_out" not in fast.to_record()["details"]


def test_a_counterexample_found_before_the_limit_is_kept():
    """Every pair of add-remove neighbours breaks a bound of 1 on ``10·len``: the first pair
    refutes, and the shrinking that follows is cut by the limit; the pair found is reported (as
    shrunk by then), with its values as they were computed."""
    from dpaudit.sensitivity import check_sensitivity

    def ten_per_record(data):
        time.sleep(0.05)
        return 10.0 * len(data)

    t0 = time.monotonic()
    res = check_sensitivity(ten_per_record, 1.0, neighbours="add-remove", domain=(0, 1),
                            sizes=(1, 6), seed=5, timeout=0.4)
    assert time.monotonic() - t0 <= 0.4 + 1.0
    assert res.verdict is Verdict.REFUTED and res.counterexample.gap == pytest.approx(10.0)
    if res.details.get("timed_out"):
        assert "shrunk no further" in res.details["note"] and "timeout=0.4 s" in res.details["note"]
    assert abs(len(res.counterexample.dataset) - len(res.counterexample.neighbour)) == 1


def test_a_search_with_no_pair_tried_is_inconclusive():
    from dpaudit.sensitivity import check_sensitivity

    def very_slow(data):
        time.sleep(0.3)
        return float(np.sum(data))

    res = check_sensitivity(very_slow, 1.0, neighbours="add-remove", domain=(0, 1), sizes=3,
                            seed=5, timeout=0.2)
    assert res.verdict in (Verdict.INCONCLUSIVE, Verdict.NOT_REFUTED)
    assert res.details["timed_out"] and res.examples <= 1
    if res.examples == 0:
        assert res.verdict is Verdict.INCONCLUSIVE and "no pair was tried" in res.details["note"]
