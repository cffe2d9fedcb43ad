"""``dpaudit check FILE --replay --in-process``: the record-and-replay audit from the command line
(dpaudit/replay/): a declared sensitivity exceeded is REFUTED at its call site (exit 1), which SARIF
points at; a correct mechanism has no finding (exit 0); without --in-process it is refused in one
line (exit 3), since the replay runs the code in dpaudit's own process. Deterministic: the replay
draws from a seeded generator and its verdicts are not statistical."""

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUG = "benchmarks/real_bugs/smartnoise_622_covariance.py"
CONTROL = "benchmarks/real_bugs/control_laplace_sum.py"


def dpaudit(*args):
    proc = subprocess.run([sys.executable, "-m", "dpaudit", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, env=dict(os.environ, CI="1"), timeout=300)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    return proc


def test_a_declared_sensitivity_exceeded_is_refuted_at_its_call_site(tmp_path):
    proc = dpaudit("check", BUG, CONTROL, "--replay", "--in-process", "--json", tmp_path / "r.json",
                   "--sarif", tmp_path / "r.sarif")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    bug, control = json.loads((tmp_path / "r.json").read_text())["results"]
    assert bug["kind"] == "replay" and bug["verdict"] == "refuted"
    assert bug["location"] == {"path": BUG, "line": 58}
    assert "declared sensitivity exceeded at smartnoise_622_covariance.py:58" in proc.stdout
    assert control["verdict"] == "not_refuted"
    assert not [f for f in control["findings"] if f["severity"] in ("violation", "finding")]
    result = json.loads((tmp_path / "r.sarif").read_text())["runs"][0]["results"][0]
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 58


def test_replay_needs_in_process_and_says_so_in_one_line():
    proc = dpaudit("check", BUG, "--replay")
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 3 and len(lines) == 1 and "add --in-process" in lines[0]
