"""``dpaudit check`` on a claim stated as a privacy curve (docs/curves.md): the decorator's
``mu=`` / ``rho=`` or ``--mu`` / ``--rho`` route the target to the curve audit, sandboxed, with a
reproduce line that reruns it. α: the refuted mechanism is 2-GDP against a 1-GDP claim (refuted
far beyond the 5% at 20,000 samples in every seed tried); the correct one is exactly 1-GDP and
NOT REFUTED with probability ≥ 0.95 by design (fixed seed, no retry)."""

import json
import textwrap

import pytest
from cli_in_process import dpaudit as in_process, dpaudit_process

pytestmark = pytest.mark.statistical

MECH = textwrap.dedent("""
    import dpaudit

    @dpaudit.mechanism(mu=1.0, neighbours="linf", domain=(0, 1), size=1)
    def too_little_noise(data, rng, size=None):
        return data[0] + rng.normal(0.0, 0.5, size=size)

    @dpaudit.mechanism(rho=0.5, neighbours="linf", domain=(0, 1), size=1)
    def gaussian(data, rng, size=None):
        return data[0] + rng.normal(0.0, 1.0, size=size)
""")


def dpaudit(*args, cwd):
    proc = in_process(*args, cwd=cwd)  # the command's entry point in this process
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    return proc


@pytest.mark.slow
def test_a_declared_curve_is_audited_over_the_curve_and_reruns(tmp_path):
    (tmp_path / "m.py").write_text(MECH)
    proc = dpaudit("check", "m.py:too_little_noise", "--samples", "20000", "--json", "r.json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    rec = json.loads((tmp_path / "r.json").read_text())["results"][0]
    assert rec["kind"] == "curve" and rec["verdict"] == "refuted" and rec["mu_lower_bound"] > 1.0
    assert rec["reproduce"].startswith("dpaudit check m.py:too_little_noise --mu=1 ")
    again = dpaudit(*rec["reproduce"].split()[1:], "--json", "again.json", cwd=tmp_path)
    assert json.loads((tmp_path / "again.json").read_text())["results"][0]["mu_lower_bound"] == \
        rec["mu_lower_bound"]
    assert again.returncode == 1


def test_flags_state_the_curve_and_a_point_claim_with_it_is_refused(tmp_path):
    (tmp_path / "m.py").write_text(MECH)
    ok = dpaudit("check", "m.py:gaussian", "--samples", "20000", "--json", "r.json", cwd=tmp_path)
    assert ok.returncode == 0 and "0.5-zCDP" in ok.stdout, ok.stdout + ok.stderr
    proc = dpaudit_process("check", "m.py:gaussian", "--mu", "1", "--epsilon", "1", cwd=tmp_path)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 3 and len(lines) == 1 and "state two claims" in lines[0]


@pytest.mark.slow
def test_no_early_stop_reaches_the_curve_audit(tmp_path):
    """``--no-early-stop`` spends the whole budget at once in a curve audit too: no looks are
    recorded (``details["sequential"]``), every sample is drawn, and the reproduce line says so;
    without it the same check records its looks and stops at the first that refutes."""
    (tmp_path / "m.py").write_text(MECH)
    args = ("check", "m.py:too_little_noise", "--samples", "50000", "--quiet")
    early = dpaudit(*args, "--json", "early.json", cwd=tmp_path)
    assert early.returncode == 1, early.stdout + early.stderr
    rec = json.loads((tmp_path / "early.json").read_text())["results"][0]
    assert rec["details"]["sequential"]["stopped_early"] and rec["samples"] < 50000
    whole = dpaudit(*args, "--no-early-stop", "--json", "whole.json", cwd=tmp_path)
    assert whole.returncode == 1, whole.stdout + whole.stderr
    rec = json.loads((tmp_path / "whole.json").read_text())["results"][0]
    assert rec["kind"] == "curve" and rec["verdict"] == "refuted"
    assert "sequential" not in rec["details"], rec["details"]["sequential"]
    assert rec["samples"] >= 0.99 * 50000  # the whole budget (pairs drawn in equal halves)
    assert "--no-early-stop" in rec["reproduce"].split()


@pytest.mark.slow
def test_with_neither_samples_nor_timeout_a_slow_curve_audit_is_sized_to_the_default(tmp_path, monkeypatch):
    # a zCDP curve of an OpenDP sum with Gaussian noise ran past 5 minutes at defaults: the curve
    # audit had no sizing of its default budget; here the default is made 20 s to keep it short
    from dpaudit import auditor

    monkeypatch.setattr(auditor, "DEFAULT_FIT_SECONDS", 20.0)
    (tmp_path / "slow.py").write_text(textwrap.dedent("""
        import time
        import dpaudit

        @dpaudit.mechanism(mu=1.0, neighbours="linf", domain=(0, 1), size=1)
        def slow(data, rng):
            time.sleep(0.002)
            return float(data[0]) + rng.normal(0.0, 1.0)
    """))
    proc = dpaudit("check", "slow.py", "--in-process", "--json", "r.json", cwd=tmp_path)
    rec = json.loads((tmp_path / "r.json").read_text())["results"][0]
    assert rec["kind"] == "curve" and rec["verdict"] in ("not_refuted", "refuted"), proc.stdout
    assert 1_000 <= rec["samples"] <= 10_000 and "--samples=" in rec["reproduce"]
    assert "to fit dpaudit check's default of 20 s with neither --samples nor --timeout" in proc.stdout
    assert "the audit is sized to" in proc.stdout  # the estimate line says so first
