"""The float policy (``--float error|warn|off``) end to end: one precedence rule everywhere
(flag > ``[tool.dpaudit]`` > decorator > "error"), the sandboxed and in-process checks agree, the
reproduce line carries the policy, and the exit codes follow the policy.

α: every verdict asserted here is either a float64 refutation of a porous mechanism (ε_LB far above
the claim in every run: the porosity events have probability 0 on one side) or a logic verdict of a
mechanism that is correct (NOT REFUTED, wrong with probability ≤ 0.05 by design) or off by 2× (its
logic finding refuted; the margin is wide at 200,000 samples). Seeds are fixed; nothing is retried.
"""

import json
import os
import textwrap

import pytest
from cli_in_process import dpaudit as in_process, dpaudit_process

pytestmark = pytest.mark.statistical

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SMALL = ["--samples", "200000", "--seed", "7"]
#: for the tests that assert no verdict (which policy is in force, what a rerun gives, why there is
#: no float question): a budget that decides nothing, so no sampling to wait for (a later
#: --samples wins over SMALL's)
NO_VERDICT = ["--samples", "2000", "--no-replay"]

MECHANISMS = """
import numpy as np
import dpaudit

@dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0, 1), size=4)
def correct(data, rng, size=None):
    return np.clip(data, 0, 1).sum() + rng.laplace(scale=1.0, size=size)

@dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0, 1), size=4)
def half_noise(data, rng, size=None):
    return np.clip(data, 0, 1).sum() + rng.laplace(scale=0.5, size=size)

@dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0, 1), size=4, float="warn")
def declared_warn(data, rng, size=None):
    return np.clip(data, 0, 1).sum() + rng.laplace(scale=1.0, size=size)

@dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0, 1), size=4, float_events=False)
def idealised(data, rng, size=None):
    return np.clip(data, 0, 1).sum() + rng.laplace(scale=1.0, size=size)

@dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0, 1), size=4)
def counts(data, rng, size=None):
    n = 1 if size is None else size
    noise = rng.geometric(1 - np.exp(-1.0), size=n) - rng.geometric(1 - np.exp(-1.0), size=n)
    out = int(np.floor(np.clip(data, 0, 1).sum())) + noise
    return int(out[0]) if size is None else out
"""


def dpaudit(*args, cwd):
    proc = in_process(*args, cwd=cwd)  # the command's entry point in this process
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    return proc


@pytest.fixture
def project(tmp_path):
    (tmp_path / "mech.py").write_text(textwrap.dedent(MECHANISMS))
    return tmp_path


def check(project, target, *flags):
    out = project / "r.json"
    proc = dpaudit("check", f"mech.py:{target}", *SMALL, "--quiet", "--json", out, *flags, cwd=project)
    return proc, json.loads(out.read_text())["results"][0]


@pytest.mark.slow
def test_error_is_the_default_and_refutes_a_porous_mechanism_through_its_float_finding(project):
    proc, rec = check(project, "correct")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    f = rec["findings"]
    assert rec["float_policy"] == "error" and rec["verdict"] == "refuted" and rec["decided_by"] == "float"
    assert f["logic"]["verdict"] == "not_refuted" and f["float"]["verdict"] == "refuted"
    assert f["float"]["counterexample"]["event"]["kind"] == "float-structure"
    # the split of the family-wise α is stated, and sums to the run's 1 - confidence
    assert abs(f["logic"]["alpha"] + f["float"]["alpha"] - 0.05) < 1e-12
    assert "--float=error" in rec["reproduce"]
    line = proc.stdout.splitlines()[0]
    assert "float64" in line and "logic" in line


@pytest.mark.slow
def test_warn_exits_0_on_a_correct_float64_mechanism_and_1_on_a_logic_bug(project):
    proc, rec = check(project, "correct", "--float", "warn")
    assert proc.returncode == 0 and rec["verdict"] == "not_refuted", proc.stdout
    assert rec["findings"]["float"]["verdict"] == "refuted" and "warn" in proc.stdout.splitlines()[0]
    assert "--float=warn" in rec["reproduce"]
    proc, rec = check(project, "half_noise", "--float", "warn")
    assert proc.returncode == 1 and rec["findings"]["logic"]["verdict"] == "refuted", proc.stdout


@pytest.mark.slow
def test_off_matches_the_decorators_idealised_audit_to_the_last_digit(project):
    _, flag = check(project, "correct", "--float", "off")
    _, declared = check(project, "idealised")
    assert flag["findings"]["float"]["verdict"] == "not_applicable"
    assert "off" in flag["findings"]["float"]["reason"]
    keys = ("verdict", "epsilon_lower_bound", "samples", "p_value", "counterexample")
    assert {k: flag[k] for k in keys} == {k: declared[k] for k in keys}
    assert flag["findings"]["logic"]["alpha"] == pytest.approx(0.05)


@pytest.mark.slow
def test_the_sandboxed_and_in_process_checks_agree_on_a_declared_policy(project):
    _, sandboxed = check(project, "declared_warn")
    _, here = check(project, "declared_warn", "--in-process")
    assert sandboxed["float_policy"] == here["float_policy"] == "warn"
    keys = ("verdict", "epsilon_lower_bound", "samples", "decided_by")
    assert {k: sandboxed[k] for k in keys} == {k: here[k] for k in keys}
    assert sandboxed["findings"]["float"]["epsilon_lower_bound"] == here["findings"]["float"]["epsilon_lower_bound"]


@pytest.mark.slow
def test_precedence_flag_over_pyproject_over_decorator(project):
    (project / "pyproject.toml").write_text('[tool.dpaudit]\nfloat = "off"\n')
    _, rec = check(project, "declared_warn", "--trust-config", *NO_VERDICT)  # pyproject over the decorator
    assert rec["float_policy"] == "off"
    _, rec = check(project, "declared_warn", "--float", "error", *NO_VERDICT)  # the flag over both (no trust needed)
    assert rec["float_policy"] == "error"
    (project / "pyproject.toml").write_text(
        '[tool.dpaudit]\nfloat = "off"\n[tool.dpaudit.targets."mech.py:correct"]\nfloat = "warn"\n')
    _, rec = check(project, "correct", "--trust-config", *NO_VERDICT)  # the target's table over the top level
    assert rec["float_policy"] == "warn"


@pytest.mark.slow
def test_the_reproduce_line_reruns_the_policy(project):
    _, rec = check(project, "declared_warn", "--float", "off", *NO_VERDICT)
    line = rec["reproduce"].split("  #")[0].split()
    assert line[:2] == ["dpaudit", "check"] and "--float=off" in line
    rerun = project / "rerun.json"
    proc = dpaudit(*line[1:], "--quiet", "--json", rerun, cwd=project)
    again = json.loads(rerun.read_text())["results"][0]
    assert proc.returncode == 0
    assert (again["float_policy"], again["epsilon_lower_bound"]) == ("off", rec["epsilon_lower_bound"])


@pytest.mark.slow
def test_integer_outputs_have_no_float_question_and_say_why(project):
    _, rec = check(project, "counts", *NO_VERDICT)
    f = rec["findings"]["float"]
    assert f["verdict"] == "not_applicable" and "integer" in f["reason"]
    assert rec["findings"]["logic"]["alpha"] == pytest.approx(0.05)  # all of α to the logic


@pytest.mark.parametrize("value", ["maybe", "ERRORS", ""])
def test_a_bad_policy_is_one_line_and_exit_3(project, value):
    proc = dpaudit_process("check", "mech.py:correct", "--float", value, cwd=project)  # a fresh process
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 3 and len(lines) == 1 and "error | warn | off" in lines[0], proc.stderr
