"""The run model and its canonical JSON: keys, validation, round trip and the stable view."""

import datetime as dt
import json

import pytest

from dpaudit.claims import ApproxDP, Neighbours, PureDP
from dpaudit.errors import InvalidArgument, UsageError
from dpaudit.report import check_run, make_run, read_json, stable_view, write_json, write_reports
from dpaudit.report.model import git_commit, location, record_of, timestamp
from dpaudit.results import FORMAT_VERSION, AuditResult, Counterexample, Interval, Verdict

T0 = dt.datetime(2026, 11, 22, 7, 0, tzinfo=dt.timezone.utc)


def audit_result(verdict=Verdict.REFUTED, eps_lb=1.4, delta=0.0, elapsed=1.0):
    cx = Counterexample((0.0, 1.0), (0.0,), {"kind": "threshold", "text": "output > 0.5"},
                        0.4, 0.1, Interval(0.35, 0.45), Interval(0.08, 0.12))
    claim = PureDP(1.0) if delta == 0 else ApproxDP(1.0, delta)
    return AuditResult("examples/laplace_sum.py:noisy_sum", claim, Neighbours.ADD_REMOVE, verdict,
                       eps_lb, None, 0.95, 10_000, cx, "dpaudit check x.py", elapsed, seed=7)


def test_make_run_has_the_design_keys_and_the_records():
    results = [audit_result(), audit_result(Verdict.NOT_REFUTED, 0.9)]
    run = make_run(results, seed=7, started=T0, finished=T0 + dt.timedelta(seconds=3),
                   command=["dpaudit", "check", "x.py"], git=False)
    for key in ("format_version", "tool_version", "seed", "started", "finished", "command",
                "environment", "git_commit", "results"):
        assert key in run
    assert run["format_version"] == FORMAT_VERSION
    assert run["started"] == "2026-11-22T07:00:00Z" and run["finished"] == "2026-11-22T07:00:03Z"
    assert run["command"] == "dpaudit check x.py"
    assert set(run["environment"]) >= {"python", "numpy", "scipy", "statsmodels", "hypothesis", "z3", "platform"}
    assert run["environment"]["numpy"]
    assert run["results"] == [r.to_record() for r in results]
    assert run["summary"]["verdicts"]["refuted"] == 1 and run["summary"]["worst"] == "refuted"
    json.dumps(run, allow_nan=False)  # standard JSON


def test_records_are_validated():
    with pytest.raises(InvalidArgument, match="verdict"):
        record_of({"kind": "audit", "target": "f"})
    with pytest.raises(InvalidArgument, match="record verdict must be one of"):
        record_of({"kind": "audit", "target": "f", "verdict": "passed"})
    with pytest.raises(InvalidArgument, match="seed"):
        make_run([], seed=-1, started=T0, finished=T0, command="x", git=False)
    rec = record_of({"kind": "formal", "target": "c", "verdict": "proved"})
    assert rec["reproduce"] == "" and rec["error"] is None and rec["elapsed_s"] is None


def test_timestamps_and_locations():
    assert timestamp(0) == "1970-01-01T00:00:00Z"
    assert timestamp("2026-01-01T00:00:00Z") == "2026-01-01T00:00:00Z"
    with pytest.raises(InvalidArgument):
        timestamp([1])
    assert location(None) is None
    assert location(("dpaudit/report/model.py", 12)) == {"path": "dpaudit/report/model.py", "line": 12}


def test_json_round_trip_keeps_non_finite_numbers(tmp_path):
    rec = audit_result(eps_lb=float("inf")).to_record()
    run = make_run([rec], seed=1, started=T0, finished=T0, command="c", git=False)
    path = write_json(run, tmp_path / "sub" / "r.json")
    back = read_json(path)
    assert back == run
    assert back["results"][0]["epsilon_lower_bound"] == "inf"
    text = (tmp_path / "sub" / "r.json").read_text()
    assert "Infinity" not in text and text.startswith('{\n  "format_version"')


def test_read_json_rejects_what_it_cannot_read(tmp_path):
    with pytest.raises(UsageError, match="no such file"):
        read_json(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(UsageError, match="not valid JSON"):
        read_json(tmp_path / "bad.json")
    run = make_run([], seed=1, started=T0, finished=T0, command="c", git=False)
    run["format_version"] = "9.0"
    write_json(run, tmp_path / "future.json")
    with pytest.raises(UsageError, match="format_version '9.0'"):
        read_json(tmp_path / "future.json")
    with pytest.raises(InvalidArgument, match="results"):
        check_run({"format_version": FORMAT_VERSION, "results": {}})


def test_stable_view_ignores_times_only():
    a = make_run([audit_result(elapsed=1.0)], seed=3, started=T0, finished=T0, command="a", git=False)
    b = make_run([audit_result(elapsed=9.0)], seed=3, started=0, finished=5, command="b", git=False)
    assert a != b and stable_view(a) == stable_view(b)
    c = make_run([audit_result(eps_lb=1.5)], seed=3, started=T0, finished=T0, command="a", git=False)
    assert stable_view(a) != stable_view(c)


def test_git_commit_outside_a_repository_is_none(tmp_path):
    assert git_commit(str(tmp_path)) is None


def test_write_reports_writes_only_what_is_asked(tmp_path):
    run = make_run([audit_result()], seed=1, started=T0, finished=T0, command="c", git=False)
    written = write_reports(run, json=tmp_path / "r.json", junit=tmp_path / "r.xml")
    assert set(written) == {"json", "junit"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json", "r.xml"]
    assert write_reports(run) == {}


def test_differences_tolerates_last_bit_noise_but_not_real_changes():
    from dpaudit.report import differences

    old = {"verdict": "not_refuted", "delta_at_claim": 7.11e-17, "epsilon_lower_bound": 0.9876543210123,
           "elapsed_s": 1.0, "rows": [1, "a"]}
    noisy = dict(old, delta_at_claim=6.98e-17, epsilon_lower_bound=0.9876543210124, elapsed_s=9.0)
    assert differences(noisy, old) == []
    assert differences(dict(old, epsilon_lower_bound=0.98766), old) == [
        "epsilon_lower_bound: 0.98766 != 0.9876543210123"]
    assert differences(dict(old, verdict="refuted"), old) == ["verdict: 'refuted' != 'not_refuted'"]
    assert differences(dict(old, rows=[1, "b"]), old) == ["rows[1]: 'b' != 'a'"]
    assert len(differences({k: v for k, v in old.items() if k != "rows"}, old)) == 1


def test_the_environment_names_the_dp_libraries_installed_and_only_those(monkeypatch):
    """A verdict on code that calls diffprivlib or OpenDP needs the library's version beside it;
    a library that is not installed is left out (not written as None)."""
    from importlib import metadata

    from dpaudit.report.model import environment

    real = metadata.version

    def version(dist):
        if dist == "opendp":
            return "9.9.9"
        if dist in ("diffprivlib", "python-dp", "dp-accounting"):
            raise metadata.PackageNotFoundError(dist)
        return real(dist)

    monkeypatch.setattr(metadata, "version", version)
    env = environment()
    assert env["opendp"] == "9.9.9"
    assert not {"diffprivlib", "python-dp", "dp-accounting"} & set(env)
    assert env["numpy"] == real("numpy")
