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


def test_two_specs_and_an_imported_helper_ask_which_one(tmp_path, capsys):
    # the shipped example defines spec and buggy with dpaudit's imported one_run_spec helper: the
    # loader called that helper with its defaults and audited neither (a hurried user's probe)
    f = tmp_path / "two.py"
    f.write_text("from dpaudit.reference.dpsgd import one_run_spec\n"
                 "spec = one_run_spec(None, m=1000)\nbuggy = one_run_spec('mean-noise', m=1000)\n")
    assert run(["train-audit", str(f)]) == ExitCode.USAGE_ERROR
    err = capsys.readouterr().err
    assert "2 OneRunSpec values (buggy, spec)" in err and f"{f}:NAME" in err
    # a one_run_spec() the file defines itself is still the default
    f.write_text(f.read_text() + "def one_run_spec():\n    return buggy\n")
    from dpaudit.commands.train_audit import load_spec

    assert load_spec(str(f)).name == "dpsgd-logreg[mean-noise, dirac]"  # the one it returns
