"""``dpaudit check FILE --replay``: the record-and-replay audit from the command line
(dpaudit/replay/): a declared sensitivity exceeded is REFUTED at its call site (exit 1), which SARIF
points at; a correct mechanism has no finding (exit 0); in the sandbox child (the default) the
record is the one an in-process run gives; and the replay stage of a default ``dpaudit check``
reports its findings beside the sampled verdict and hands its pair to the sampling.
Deterministic: the replay draws from a seeded generator and its verdicts are not statistical;
the one sampled run here has a fixed seed, and its refutation's α is the check's 0.05."""

import json
import os

import pytest
from cli_in_process import dpaudit as in_process, dpaudit_process

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUG = "benchmarks/real_bugs/smartnoise_622_covariance.py"
CONTROL = "benchmarks/real_bugs/control_laplace_sum.py"


def dpaudit(*args):
    proc = in_process(*args, cwd=ROOT)  # the command's entry point in this process
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    return proc


@pytest.mark.slow
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


@pytest.mark.slow
def test_in_the_sandbox_the_replay_gives_the_in_process_record(tmp_path):
    sandboxed = dpaudit("check", BUG, "--replay", "--json", tmp_path / "s.json")
    trusted = dpaudit("check", BUG, "--replay", "--in-process", "--json", tmp_path / "p.json")
    assert sandboxed.returncode == trusted.returncode == 1, sandboxed.stdout + sandboxed.stderr
    s = json.loads((tmp_path / "s.json").read_text())["results"][0]
    p = json.loads((tmp_path / "p.json").read_text())["results"][0]
    assert s["details"]["ran_in"] == "the sandbox child"
    assert s["isolation"] != p["isolation"] == "none (in process)"
    for key in ("verdict", "location", "calls", "pairs", "claim"):
        assert s[key] == p[key], key
    assert [(f["kind"], f["site"]["line"], f["dataset"], f["neighbour"]) for f in s["findings"]] == \
        [(f["kind"], f["site"]["line"], f["dataset"], f["neighbour"]) for f in p["findings"]]


def test_contradicting_replay_flags_are_refused_in_one_line():
    proc = dpaudit_process("check", BUG, "--replay", "--no-replay", cwd=ROOT)  # in a fresh process
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 3 and len(lines) == 1 and "contradict" in lines[0]


PRIMITIVE_BUG = """
import numpy as np
import dpaudit

@dpaudit.primitive(sensitivity=1.0, epsilon=1.0)
def laplace(value, rng):
    return value + rng.laplace(scale=1.0)

@dpaudit.mechanism(epsilon=1.0, domain=(0, 1), size=5, float=False)
def total(data, rng):
    s = 2.0 * float(np.clip(data, 0, 1).sum())
    return laplace(s, rng)
"""


@pytest.mark.slow
def test_the_replay_stage_reports_beside_the_sampling_and_its_pair_is_sampled_first(tmp_path):
    (tmp_path / "bug.py").write_text(PRIMITIVE_BUG.replace("float=False", "float='off'"))
    proc = dpaudit("check", tmp_path / "bug.py", "--json", tmp_path / "r.json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    rec = json.loads((tmp_path / "r.json").read_text())["results"][0]
    stage = rec["replay"]
    assert stage["kind"] == "replay" and stage["verdict"] == "refuted"
    assert stage["findings"][0]["kind"] == "sensitivity_exceeded"
    assert stage["findings"][0]["site"]["line"] == 12
    # the sampling confirms it: true ε = 2 against the claimed 1
    assert rec["verdict"] == "refuted" and rec["decided_by"] == "logic"
    assert rec["epsilon_lower_bound"] > 1.0
    assert "replay: declared sensitivity exceeded at bug.py:12" in proc.stdout
    off = dpaudit("check", tmp_path / "bug.py", "--no-replay", "--json", tmp_path / "n.json")
    assert off.returncode == 1
    plain = json.loads((tmp_path / "n.json").read_text())["results"][0]
    assert "replay" not in plain and "--no-replay" in plain["reproduce"]


@pytest.mark.slow
def test_a_violation_the_sampling_cannot_see_still_refutes_decided_by_the_replay(tmp_path):
    # 0.5% over the declared sensitivity: true ε = 1.005 against the claimed 1, far below what
    # 10^5 samples resolve (the sampled audit, α = 0.05 at this fixed seed, does not refute)
    (tmp_path / "bug.py").write_text(PRIMITIVE_BUG.replace("2.0 * float", "1.005 * float")
                                     .replace("float=False", "float='off'"))
    proc = dpaudit("check", tmp_path / "bug.py", "--samples", "100000", "--json", tmp_path / "r.json",
                   "--sarif", tmp_path / "r.sarif", "--junit", tmp_path / "r.xml")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    rec = json.loads((tmp_path / "r.json").read_text())["results"][0]
    assert rec["verdict"] == "refuted" and rec["decided_by"] == "replay"
    assert rec["findings"]["logic"]["verdict"] == "not_refuted" and rec["epsilon_lower_bound"] < 1.0
    line = proc.stdout.splitlines()[0]
    assert "REFUTED (replay: a declared sensitivity exceeded; the sampling is NOT REFUTED" in line
    assert "declared sensitivity exceeded at bug.py:12" in line and "[p =" not in line
    sarif = json.loads((tmp_path / "r.sarif").read_text())["runs"][0]["results"]
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in sarif] \
        == [("DPA006", 12)]
    junit = (tmp_path / "r.xml").read_text()
    assert "bug.py:total [replay]" in junit and junit.count("<failure") == 1


FORGER = """
import numpy as np
import dpaudit
import dpaudit.replay.audit as audit_module

def forged(f, **options):          # the audited code rewrites dpaudit's engine in the child
    return {"kind": "replay", "verdict": "not_refuted",
            "findings": [{"kind": "made_up", "message": "\\x1b[2Jtrust me"}]}

audit_module.replay_record = forged

@dpaudit.mechanism(epsilon=1.0, domain=(0, 1), size=5, float="off")
def total(data, rng):
    return float(np.clip(data, 0, 1).sum()) + rng.laplace(scale=1.0)
"""


@pytest.mark.slow
def test_a_forged_replay_record_from_the_child_is_the_mechanisms_error_and_the_sampling_is_kept(tmp_path):
    (tmp_path / "forger.py").write_text(FORGER)
    proc = dpaudit("check", tmp_path / "forger.py", "--samples", "20000", "--json", tmp_path / "r.json")
    rec = json.loads((tmp_path / "r.json").read_text())["results"][0]
    assert rec["replay"]["verdict"] == "error" and "replay record dpaudit refused" in rec["replay"]["error"]
    assert "\x1b" not in proc.stdout + json.dumps(rec)
    assert rec["verdict"] == "error" and rec["samples"] > 0 and proc.returncode == 6
    assert "the sampling alone: NOT REFUTED" in rec["error"] and "refused" in proc.stdout


def test_an_integer_past_the_double_range_is_replayed_not_an_internal_error(tmp_path):
    # ints beyond the double's range are outputs like any other (categories); the replay laid
    # them out as floats and stopped with an internal OverflowError blamed on no one
    (tmp_path / "huge.py").write_text(
        "import dpaudit\n\n"
        "@dpaudit.mechanism(epsilon=1.0, neighbours='add-remove', domain=(0, 1), size=3)\n"
        "def mech(data, rng):\n"
        "    return 10**400 + int(rng.integers(0, 3))\n", encoding="utf-8")
    proc = in_process("check", "huge.py", "--replay", "--in-process", cwd=tmp_path)
    assert proc.returncode == 0 and "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    assert proc.stdout.startswith("huge.py:mech: NOT REFUTED") and "OverflowError" not in proc.stdout


@pytest.mark.slow
def test_a_replay_cut_by_the_time_limit_reruns_with_it(tmp_path):
    # the line of a replay the time limit stopped had no --timeout: rerun, it tried every pair
    (tmp_path / "slow.py").write_text(
        "import time\nimport dpaudit\n\n"
        "@dpaudit.mechanism(epsilon=1.0, neighbours='add-remove', domain=(0, 1), size=3)\n"
        "def mech(data, rng):\n"
        "    time.sleep(0.05)\n"
        "    return float(sum(data)) + rng.laplace(0, 1.0)\n", encoding="utf-8")
    proc = in_process("check", "slow.py", "--replay", "--timeout", "3", "--in-process", cwd=tmp_path)
    assert "the time limit was reached after" in proc.stdout, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1].endswith("--seed=20261122 --timeout=3")
