"""``dpaudit train-audit``: a file defining a one-run audit, its line, exit code and reports."""

import json

from dpaudit.cli import run
from dpaudit.exitcodes import ExitCode

SPEC = """
from dpaudit.reference.dpsgd import one_run_spec
spec = one_run_spec({bug!r}, m=400)
"""


def test_a_refuted_training_claim_exits_1_and_renders_in_every_format(tmp_path, capsys):
    f = tmp_path / "train.py"
    f.write_text(SPEC.format(bug="mean-noise"))
    out = {k: tmp_path / f"r.{k}" for k in ("json", "html", "markdown", "junit", "sarif")}
    code = run(["train-audit", str(f), "--seed", "3"] + [a for k, p in out.items() for a in (f"--{k}", str(p))])
    line = capsys.readouterr().out
    assert code == ExitCode.REFUTED, line
    assert "REFUTED" in line and "ceiling" not in line.split("—")[0] and "every guess right" in line
    assert "reproduce: dpaudit train-audit" in line
    rec = json.loads(out["json"].read_text())["results"][0]
    assert rec["kind"] == "one-run" and rec["verdict"] == "refuted"
    assert rec["epsilon_lower_bound"] > rec["claim"]["epsilon"]
    assert "DPA030" in out["sarif"].read_text()
    assert "failure" in out["junit"].read_text()
    assert "one-run" in out["markdown"].read_text() and "Steinke" in out["html"].read_text()


def test_a_file_without_a_spec_is_a_load_error(tmp_path, capsys):
    f = tmp_path / "empty.py"
    f.write_text("x = 1\n")
    assert run(["train-audit", str(f)]) == ExitCode.USAGE_ERROR
    assert "OneRunSpec" in capsys.readouterr().err
