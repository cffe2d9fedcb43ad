"""``dpaudit verify`` end to end: rows, exit codes, one-line usage errors, JSON and SMT-LIB2."""

from __future__ import annotations

import subprocess
import sys

import pytest

from dpaudit.cli import ExitCode, run
from dpaudit.report.json_io import read_json


def test_verify_rows_json_and_smt2(tmp_path, capsys):
    out_json, smt = tmp_path / "formal.json", tmp_path / "smt"
    code = run(["verify", "--claim", "laplace-loss-bound", "--claim",
                "quantile-utility-eq22-add-remove", "--json", str(out_json), "--smt2-dir", str(smt)])
    text = capsys.readouterr().out
    assert code is ExitCode.OK
    rows = [line for line in text.splitlines() if line.startswith(("laplace-loss-bound ",
                                                                   "quantile-utility-eq22"))]
    assert len(rows) == 2
    assert "Chen, Pal & Golubchik 2016" in rows[0] and rows[0].split()[-3:-1] == ["PROVED", "PROVED"]
    assert rows[1].split()[-3:-1] == ["REFUTED", "REFUTED"]
    float(rows[0].split()[-1])  # seconds
    assert "counterexample (bound): " in text and "q=" in text
    assert "2 claims: 1 proved, 1 refuted; all as expected" in text
    run_json = read_json(out_json)
    assert [r["target"] for r in run_json["results"]] == ["laplace-loss-bound",
                                                          "quantile-utility-eq22-add-remove"]
    assert run_json["summary"]["mismatches"] == 0
    assert sorted(p.name for p in (smt / "laplace-loss-bound").iterdir()) == [
        "01-bound.smt2", "02-bound-attained.smt2"]


def test_unknown_claim_is_one_line_and_exit_5(capsys):
    # the exit-code table's 5, "no audit or claim matched" (it was 3, a usage error)
    assert run(["verify", "--claim", "l1-helly-9d"]) is ExitCode.NOTHING_TO_AUDIT
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "unknown claim 'l1-helly-9d'" in err and "l1-helly-2d" in err and "laplace-loss-bound" in err


@pytest.mark.parametrize("bad", ["0", "-1", "abc", "inf", "nan", ""])
def test_bad_timeout_is_a_one_line_usage_error(bad, capsys):
    assert run(["verify", "--timeout", bad, "--claim", "laplace-loss-bound"]) is ExitCode.USAGE_ERROR
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--timeout" in err


def test_a_difference_from_expected_exits_one(capsys):
    """A 1 ms timeout leaves queries unknown: INCONCLUSIVE differs from the expected PROVED,
    which fails the run (inconclusive is never a pass)."""
    code = run(["verify", "--claim", "l1-3d-spf-undefined", "--timeout", "0.001"])
    text = capsys.readouterr().out
    assert code is ExitCode.REFUTED
    assert "≠ INCONCLUSIVE" in text and "z3 answered unknown" in text
    assert "1 differ from expected: l1-3d-spf-undefined" in text


def test_console_entry_point():
    proc = subprocess.run([sys.executable, "-m", "dpaudit", "verify", "--claim",
                           "prerounding-sensitivity", "--claim", "control-l2-radius-0.9"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "control-l2-radius-0.9" in proc.stdout and "pair-1-2-meet: z3 answered unsat" in proc.stdout
