"""A stop by signal (SIGINT, SIGTERM) during ``dpaudit check`` writes every report with the target's
claim, the stages it finished and verdict INTERRUPTED, exits with its own code (7), and is never
the mechanism's ERROR (docs/cli.md#exit-codes). Not statistical: the stop comes once the sampling
is under way (a marker the mechanism writes after its 500th call: the replay stage spends at most
200)."""

import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import pytest

from dpaudit.exitcodes import ExitCode, epilog, exit_code

MECHANISM = '''import os
import numpy as np
import dpaudit

CALLS = [0]


@dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0.0, 1.0), size=10)
def noisy_sum(data, rng):
    CALLS[0] += 1
    if CALLS[0] == 500:
        open(os.environ["STARTED_MARKER"], "w").close()
    return float(np.clip(data, 0.0, 1.0).sum() + rng.laplace(scale=1.0))
'''


def _stopped(cmd, cwd, marker, sig, what):
    """Run ``cmd``, send ``sig`` once the mechanism wrote ``marker`` (``what`` is under way), and
    return the process with its output; the process group is killed if it outlives the test."""
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, CI="1", STARTED_MARKER=str(marker)), start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not marker.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert marker.exists(), f"{what} never started"
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc, out, err


@pytest.mark.slow
@pytest.mark.parametrize("sig, name", [(signal.SIGTERM, "SIGTERM"), (signal.SIGINT, "Ctrl-C")])
def test_a_stop_writes_every_report_with_the_claim_and_the_stages_finished(tmp_path, sig, name):
    (tmp_path / "mech.py").write_text(MECHANISM)
    marker = tmp_path / "started"
    paths = {fmt: tmp_path / f"r.{ext}" for fmt, ext in
             (("json", "json"), ("markdown", "md"), ("html", "html"), ("junit", "xml"), ("sarif", "sarif"))}
    cmd = [sys.executable, "-m", "dpaudit", "check", "mech.py", "--samples", "100000000", "--seed", "7",
           "--isolation=process", "--pass-env=STARTED_MARKER"]
    for fmt, path in paths.items():
        cmd += [f"--{fmt}", str(path)]
    proc, out, err = _stopped(cmd, tmp_path, marker, sig, "the sampling")
    assert proc.returncode == ExitCode.INTERRUPTED == 7, out + err
    assert "Traceback" not in out + err and err.strip().splitlines()[-1] == "dpaudit: interrupted"
    assert "mech.py:noisy_sum: INTERRUPTED" in out
    (rec,) = json.loads(paths["json"].read_text())["results"]
    assert rec["verdict"] == "interrupted" and f"interrupted ({name}) during the sampling" in rec["error"]
    assert rec["claim"] == {"epsilon": 1.0, "delta": 0.0, "neighbours": "add-remove", "domain": [0.0, 1.0],
                            "size": 10}
    assert rec["stages_finished"] and rec["stages_finished"][0].startswith("replay (")
    assert rec["replay"]["kind"] == "replay" and rec["replay"]["verdict"] != "error"
    assert "INTERRUPTED" in paths["markdown"].read_text() and "INTERRUPTED" in paths["html"].read_text()
    case = ET.parse(paths["junit"]).getroot().find(".//testcase")
    assert case.find("error") is not None and case.find("error").get("type") == "dpaudit.Interrupted"
    sarif = json.loads(paths["sarif"].read_text())
    assert sarif["version"] == "2.1.0" and sarif["runs"][0]["invocations"][0]["executionSuccessful"] is False
    assert "No violation" not in paths["markdown"].read_text()


def test_the_exit_code_of_an_interrupted_run_is_its_own():
    assert exit_code([{"verdict": "refuted"}, {"verdict": "interrupted"}]) is ExitCode.INTERRUPTED
    assert exit_code([{"verdict": "error"}, {"verdict": "interrupted"}]) is ExitCode.INTERRUPTED
    assert exit_code([{"verdict": "error"}]) is ExitCode.MECHANISM_ERROR
    assert "  7  interrupted" in epilog() and "interrupted" not in ExitCode.INTERNAL_ERROR.description


SLOW_REPLAY = MECHANISM.replace("        open(os.environ[\"STARTED_MARKER\"], \"w\").close()",
                                "        open(os.environ[\"STARTED_MARKER\"], \"w\").close()\n"
                                "    if CALLS[0] >= 2:\n        import time; time.sleep(0.05)") \
    .replace("CALLS[0] == 500", "CALLS[0] == 2")


@pytest.mark.slow
def test_a_stop_during_the_replay_stage_keeps_the_claim_and_the_rerun_line(tmp_path):
    (tmp_path / "mech.py").write_text(SLOW_REPLAY)
    marker = tmp_path / "started"
    cmd = [sys.executable, "-m", "dpaudit", "check", "mech.py", "--seed", "7", "--in-process",
           "--json", "r.json"]
    proc, out, err = _stopped(cmd, tmp_path, marker, signal.SIGINT, "the replay")
    assert proc.returncode == ExitCode.INTERRUPTED, out + err
    (rec,) = json.loads((tmp_path / "r.json").read_text())["results"]
    assert rec["verdict"] == "interrupted" and "during the replay" in rec["error"], rec["error"]
    # the line that reruns it names the claim, not just the command as typed
    assert rec["reproduce"].startswith("dpaudit check mech.py:noisy_sum --epsilon=1 --neighbours=add-remove")


@pytest.mark.slow
def test_a_stop_keeps_the_samples_drawn_and_the_early_looks_finished(tmp_path):
    # the record of a stop during the sampling had samples 0 and no bound, though early looks had
    # finished (each bound holds at its own α on its own samples) and thousands of calls were made
    # after the betting look (25,000 calls) and the sampled look after it (32,000)
    (tmp_path / "mech.py").write_text(MECHANISM.replace("CALLS[0] == 500", "CALLS[0] == 60_000"))
    marker = tmp_path / "started"
    cmd = [sys.executable, "-m", "dpaudit", "check", "mech.py", "--samples", "400000", "--seed", "7",
           "--float", "off", "--json", "r.json", "--isolation=process", "--pass-env=STARTED_MARKER"]
    proc, out, err = _stopped(cmd, tmp_path, marker, signal.SIGINT, "the sampling")
    assert proc.returncode == ExitCode.INTERRUPTED, out + err
    (rec,) = json.loads((tmp_path / "r.json").read_text())["results"]
    looks = rec["looks_finished"]
    assert rec["verdict"] == "interrupted" and rec["samples"] >= sum(x["samples"] for x in looks)
    assert [x["look"] for x in looks] == list(range(1, len(looks) + 1)) and len(looks) >= 2
    assert all(x["epsilon_lb"] is not None and x["alpha"] < 0.05 for x in looks)
    assert f"{rec['samples']:,} samples drawn, {len(looks)} early look(s) finished; the best: ε ≥ " in rec["error"]
    assert out.strip().splitlines()[-1] == f"reproduce: {rec['reproduce']}"


@pytest.mark.slow
def test_a_stop_during_a_library_targets_sampling_keeps_what_it_did(tmp_path):
    # a library target's stop printed no line and wrote samples 0, no claim, no finished look,
    # and a reproduce line without its settings: the file form kept them
    pytest.importorskip("diffprivlib")  # the library extra: not in the core install
    (tmp_path / "targets.py").write_text(
        "from dpaudit.adapters import diffprivlib\n\n"
        "mean = diffprivlib.target('tools.mean', epsilon=1, bounds=(0, 1))\n", encoding="utf-8")
    cmd = [sys.executable, "-m", "dpaudit", "check", "lib:targets.py", "--in-process", "--seed", "7",
           "--json", "r.json"]
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, CI="1"), start_new_session=True)
    try:
        time.sleep(12)  # the replay stage and the first looks (about 1 s each here)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == ExitCode.INTERRUPTED, out + err
    (rec,) = json.loads((tmp_path / "r.json").read_text())["results"]
    assert rec["verdict"] == "interrupted" and rec["claim"]["epsilon"] == 1.0, rec
    assert rec["samples"] > 0 and rec["stages_finished"], rec
    assert "targets.py:mean" in out and "INTERRUPTED" in out
    assert out.strip().splitlines()[-1] == f"reproduce: {rec['reproduce']}" and "--seed=7" in rec["reproduce"]


def test_an_interrupted_line_names_a_float64_bound_above_the_claim():
    # the line took each look's first question only: "the best: ε ≥ 0.9503" hid a float64 bound
    # of 3.76 at look 3, above the claimed 1, under the default float policy error
    from dpaudit.commands.check import interrupted_record

    looks = [{"look": 1, "samples": 1700, "alpha": 0.005, "epsilon_lb": 0.8,
              "questions": {"logic": 0.8, "float": 0.5}},
             {"look": 3, "samples": 31000, "alpha": 0.005, "epsilon_lb": 0.9503,
              "questions": {"logic": 0.9503, "float": 3.76}}]
    partial = {"stages": [], "under_way": "sampling", "claim": {"epsilon": 1.0},
               "sampling": {"samples": 63386, "looks": looks}}
    rec = interrupted_record("m.py", partial, "Ctrl-C", "dpaudit check m.py")
    assert "the best: ε ≥ 0.9503" in rec["error"]
    assert "look 3's float64 question is above the claim too (ε ≥ 3.76" in rec["error"]
    assert rec["samples"] == 63386 and rec["looks_finished"] == looks
