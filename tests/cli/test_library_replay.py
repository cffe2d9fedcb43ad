"""``dpaudit check 'lib:diffprivlib:…' --replay``: a diffprivlib target audited by record and
replay with no code of the user's (dpaudit/commands/library_check.py, dpaudit/replay/libraries.py).

The record is the ``"replay"`` kind that ``dpaudit check FILE.py --replay`` writes; the library
form needs no ``--in-process`` (library code is trusted and runs in process; the file form still
needs it); the call site named is diffprivlib's own line that called the mechanism, since the
target has no user code; the exit codes are those of any target. Deterministic: the replay draws
from a generator seeded by ``--seed`` and its verdicts are not statistical.
"""

import json
import os

import pytest
from cli_in_process import dpaudit as in_process, dpaudit_process

pytest.importorskip("diffprivlib")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SUM = "lib:diffprivlib:tools.sum(epsilon=1, bounds=(0, 1))"
MEAN = "lib:diffprivlib:tools.mean(epsilon=1, bounds=(0, 1))"


def dpaudit(*args, cwd=ROOT):
    proc = in_process(*args, cwd=cwd)  # the command's entry point in this process
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    return proc


@pytest.mark.slow
def test_a_diffprivlib_target_is_audited_by_replay_and_names_the_mechanism_call(tmp_path):
    # tools.sum clamps its output to [lower·n, upper·n]: under add-remove n is data, and the
    # replay sees the mechanism's declared bounds follow it
    proc = dpaudit("check", SUM, "--neighbours", "add-remove", "--replay", "--seed", "7",
                   "--json", tmp_path / "r.json", "--sarif", tmp_path / "r.sarif")
    assert proc.returncode == 0, proc.stdout + proc.stderr  # INCONCLUSIVE exits 0 ...
    (rec,) = json.loads((tmp_path / "r.json").read_text())["results"]
    assert rec["kind"] == "replay" and rec["verdict"] == "inconclusive"
    assert rec["target"].startswith("diffprivlib ") and rec["target"].endswith(SUM.split(":", 2)[2])
    assert rec["library"]["name"] == "diffprivlib" and rec["libraries"] == ["diffprivlib"]
    finding = next(f for f in rec["findings"] if f["kind"] == "data_dependent_noise_scale")
    site = finding["site"]
    assert site["path"].replace(os.sep, "/").endswith("diffprivlib/tools/utils.py")
    assert site["function"] == "_sum" and "randomise" in site["code"]
    assert rec["location"]["line"] == site["line"]
    sarif = json.loads((tmp_path / "r.sarif").read_text())["runs"][0]["results"][0]
    assert sarif["locations"][0]["physicalLocation"]["region"]["startLine"] == site["line"]
    assert f"reproduce: dpaudit check '{SUM}' --replay --neighbours=add-remove --seed=7" in proc.stdout
    # ... and 2 with --fail-on-inconclusive, as for any target
    strict = dpaudit("check", SUM, "--neighbours", "add-remove", "--replay", "--seed", "7",
                     "--fail-on-inconclusive", "--quiet")
    assert strict.returncode == 2, strict.stdout + strict.stderr


@pytest.mark.slow
def test_a_correct_diffprivlib_target_has_no_finding_and_exits_0(tmp_path):
    proc = dpaudit("check", MEAN, "--replay", "--seed", "7", "--json", tmp_path / "r.json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (rec,) = json.loads((tmp_path / "r.json").read_text())["results"]
    assert rec["kind"] == "replay" and rec["verdict"] == "not_refuted"
    assert not [f for f in rec["findings"] if f["severity"] in ("violation", "finding", "limit")]
    assert 0 < rec["calls"] <= 200 and rec["isolation"] == "none (in process)"
    assert "no finding at the noise calls" in proc.stdout


def test_replay_refusals_for_library_targets_are_one_line_and_exit_3(tmp_path):
    alone = dpaudit_process("check", MEAN, "--nonfinite", cwd=ROOT)  # in a fresh process
    assert alone.returncode == 3 and "--nonfinite needs --replay" in alone.stderr
    assert len(alone.stderr.strip().splitlines()) == 1
    (tmp_path / "targets.py").write_text("")
    untrusted = dpaudit("check", "lib:targets.py", "--replay", cwd=tmp_path)
    assert untrusted.returncode == 3 and "--in-process" in untrusted.stderr
    assert len(untrusted.stderr.strip().splitlines()) == 1
