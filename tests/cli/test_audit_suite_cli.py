"""``dpaudit audit`` and ``dpaudit list`` on throw-away audit folders: selection, reports, exit codes."""

import json
import os
import subprocess
import sys
import textwrap

import pytest
from cli_in_process import dpaudit as in_process, dpaudit_process

from dpaudit.results import Verdict
from dpaudit.suite import AuditKind, audit_seed, formal, load_audits, run_one, sampled, seed_claim
from dpaudit.reference.claims.types import ClaimEvidence, SeedClaim
from dpaudit.reference.seed_claim_record import paper_name

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SEED_CLAIM_FILE = textwrap.dedent('''\
    """A toy seed claim."""
    from dpaudit.results import Verdict
    from dpaudit.suite import seed_claim
    from dpaudit.reference.claims.types import ClaimEvidence, SeedClaim

    def _false():
        return ClaimEvidence(Verdict.REFUTED, 2.0, 1.0, "sums to 2", {"mass": 2.0})

    AUDITS = [seed_claim("toy/mass", SeedClaim("T-mass", "001", "Chen, Pal and Golubchik (2016) eq (0)", "it sums to 1",
                                               Verdict.REFUTED, "docs/math.md#oblivious-noise", ("E0",), _false))]
''')

CRASHY = textwrap.dedent('''\
    from dpaudit.suite import sampled

    def broken_factory():
        raise RuntimeError("cannot build <the> mechanism")

    AUDITS = [
        sampled("ctrl.crashes", broken_factory, expected="error", description="must error"),
        sampled("ref.errs", broken_factory, description="expected not refuted, but errors"),
    ]
''')
ONLY_CONTROL = CRASHY.replace('    sampled("ref.errs", broken_factory, description="expected not refuted, but errors"),\n', "")


NO_BYTECODE = {"PYTHONDONTWRITEBYTECODE": "1"}


def dpaudit(*args, cwd):
    return in_process(*args, cwd=cwd)  # the command's entry point in this process


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "audits").mkdir()
    (tmp_path / "audits" / "crashy.py").write_text(CRASHY)
    return tmp_path


@pytest.mark.slow
def test_mismatch_exits_1_and_writes_the_report(folder):
    out = dpaudit("audit", "--out", "rep", "--junit", "rep/junit.xml", cwd=folder)
    assert out.returncode == 1, out.stderr
    assert "ok   ctrl.crashes  ERROR  error: RuntimeError" in out.stdout
    assert "FAIL ref.errs  ERROR  (expected NOT REFUTED)" in out.stdout
    assert "2 audits, 1 as expected, 1 not as expected" in out.stdout
    assert "reproduce: dpaudit audit audits/crashy.py --id ref.errs --seed 20261122" in out.stdout
    run = json.loads((folder / "rep" / "results.json").read_text())
    assert [(r["id"], r["kind"], r["verdict"], r["expected"]) for r in run["results"]] == [
        ("ctrl.crashes", "audit", "error", "error"), ("ref.errs", "audit", "error", "not_refuted")]
    assert run["results"][0]["error"] == "RuntimeError: cannot build <the> mechanism"
    assert run["results"][0]["location"]["path"] == "audits/crashy.py"
    assert run["seed"] == 20261122 and run["summary"]["mismatches"] == 1
    html = (folder / "rep" / "index.html").read_text()
    assert "cannot build &lt;the&gt; mechanism" in html and "1 MISMATCHED" in html
    assert (folder / "rep" / "junit.xml").exists()
    assert dpaudit("audit", "--out", "rep", "--exit-zero", cwd=folder).returncode == 0


@pytest.mark.slow
def test_all_as_expected_exits_0_and_reruns_one_audit_without_touching_reports(folder):
    (folder / "audits" / "crashy.py").write_text(ONLY_CONTROL)
    out = dpaudit("audit", cwd=folder)
    assert out.returncode == 0, out.stdout + out.stderr
    assert (folder / "reports" / "index.html").exists() and (folder / "reports" / "results.json").exists()
    before = (folder / "reports" / "results.json").read_text()
    out = dpaudit("audit", "--id", "ctrl.crashes", "--seed", "5", cwd=folder)
    assert out.returncode == 0 and (folder / "reports" / "results.json").read_text() == before
    assert "wrote" not in out.stdout


@pytest.mark.parametrize("args, code, message", [
    (["--id", "nope"], 5, "no audit with id 'nope'"),
    (["missing/"], 3, "missing/: no such file or folder"),
    (["--seed", "x"], 3, "--seed must be an integer"),
])
def test_bad_selection_is_one_line(folder, args, code, message):
    out = dpaudit("audit", *args, cwd=folder)
    assert out.returncode == code
    assert message in out.stderr and len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr


@pytest.mark.slow
def test_duplicate_ids_broken_files_and_empty_folders(folder):
    """In fresh processes: audits/copy.py is rewritten between two runs (a process keeps a file
    it has imported)."""
    (folder / "audits" / "copy.py").write_text(CRASHY)
    out = dpaudit_process("audit", cwd=folder, env=NO_BYTECODE)
    assert out.returncode == 3 and "audit id 'ctrl.crashes' is also defined in audits/copy.py" in out.stderr
    (folder / "audits" / "copy.py").write_text("AUDITS = 3\n")
    out = dpaudit_process("audit", "audits/copy.py", cwd=folder, env=NO_BYTECODE)
    assert out.returncode == 3 and "define AUDITS = [...]" in out.stderr
    (folder / "empty").mkdir()
    assert dpaudit_process("audit", "empty", cwd=folder, env=NO_BYTECODE).returncode == 5


@pytest.mark.slow
def test_list_shows_audits_mechanisms_and_claims(folder):
    (folder / "audits" / "toy_seed.py").write_text(SEED_CLAIM_FILE)
    out = dpaudit("list", cwd=folder)
    assert out.returncode == 0
    assert "ctrl.crashes" in out.stdout and "expected ERROR" in out.stdout
    assert any(line.split()[:4] == ["toy/mass", "seed", "claim", "expected"] and "REFUTED" in line
               for line in out.stdout.splitlines())
    assert "Reference mechanisms" in out.stdout and "Formal claims" in out.stdout


def test_definitions_are_validated():
    with pytest.raises(ValueError, match="id must be"):
        sampled("Bad Id", lambda: None)
    with pytest.raises(ValueError, match="expected must be one of"):
        sampled("a", lambda: None, expected="pass")
    with pytest.raises(ValueError, match="can never prove"):
        sampled("a", lambda: None, expected="proved")
    f = formal("f.claim", "l1-helly-2d")
    assert f.kind is AuditKind.FORMAL and f.expected.value == "proved" and f.line > 0


def test_audit_seeds_depend_on_root_and_id_only(folder):
    assert audit_seed(1, "a") == audit_seed(1, "a") != audit_seed(1, "b") != audit_seed(2, "b")
    assert 0 <= audit_seed(20261122, "x") < 2 ** 63
    audits = load_audits([str(folder / "audits")])
    a, b = run_one(audits[0], 3), run_one(audits[0], 3)
    a.pop("elapsed_s"), b.pop("elapsed_s")
    assert a == b and a["seed"] == audit_seed(3, "ctrl.crashes")


@pytest.mark.slow
def test_an_audit_whose_process_dies_is_an_error_record(folder):
    (folder / "audits" / "crashy.py").write_text(textwrap.dedent('''\
        import os
        from dpaudit.suite import sampled

        def dies():
            os._exit(7)

        AUDITS = [sampled("ctrl.dies", dies, expected="error")]
    '''))
    out = dpaudit("audit", "--out", "rep", cwd=folder)
    assert out.returncode == 0, out.stdout + out.stderr
    rec = json.loads((folder / "rep" / "results.json").read_text())["results"][0]
    assert rec["verdict"] == "error" and "died (exit code 7)" in rec["error"]


def _claim(verdict, check, id="T-1"):
    return SeedClaim(id, "004", "eq 9.9", "a <b> statement", verdict, "docs/math.md#quantile-utility", ("E29",), check)


def test_seed_claim_definitions():
    """The expected verdict is the recorded one; a seed claim is never expected PROVED."""
    refuted = _claim(Verdict.REFUTED, lambda: None)
    a = seed_claim("seed004/t-1", refuted)
    assert a.kind is AuditKind.SEED_CLAIM and AuditKind("seed-claim") is a.kind
    assert a.expected is Verdict.REFUTED and a.is_control and a.line > 0
    assert seed_claim("s/x", refuted, expected="not_refuted").expected is Verdict.NOT_REFUTED
    with pytest.raises(ValueError, match="can never be proved"):
        seed_claim("s/x", refuted, expected="proved")
    with pytest.raises(ValueError, match="give expected="):
        seed_claim("s/x", lambda: refuted)
    assert seed_claim("s/x", lambda: refuted, expected="refuted").expected is Verdict.REFUTED
    with pytest.raises(ValueError, match="id must be"):
        seed_claim("seed001/S1-eq6", refuted)


def test_a_seed_claim_audit_runs_its_check_and_keeps_its_evidence(monkeypatch):
    monkeypatch.chdir(ROOT)
    audits = load_audits(["audits/seed_claims.py"], ids=["seed001/s001-eq7-density", "seed003/s003-range-le-2sens"])
    recs = [run_one(a, 11) for a in audits]
    for rec, verdict in zip(recs, ("refuted", "not_refuted")):
        assert rec["kind"] == "seed-claim" and rec["verdict"] == rec["expected"] == rec["recorded_verdict"] == verdict
        assert rec["reproduce"] == f"dpaudit audit audits/seed_claims.py --id {rec['id']} --seed 11"
        assert rec["recheck"].startswith("python -c") and rec["target"] in rec["recheck"]
        assert rec["location"]["path"].startswith("mechanisms/claims/") and rec["location"]["line"] > 1
        assert rec["group"].startswith("audits/seed_claims.py: ")
    assert recs[0]["seed_paper"] == "001" and recs[0]["errata"] == ["E9"] and recs[0]["counterexample"]["mass"] > 100


def test_a_seed_claim_that_errs_or_disagrees_is_reported_not_raised():
    def boom():
        raise ZeroDivisionError("division by zero")

    err = run_one(seed_claim("t/err", _claim(Verdict.REFUTED, boom)), 1)
    assert err["verdict"] == "error" and err["expected"] == "refuted" and err["kind"] == "seed-claim"
    assert err["error"] == "ZeroDivisionError: division by zero" and err["target"] == "T-1"
    assert err["location"]["path"].endswith("test_audit_suite_cli.py")   # where the audit is defined
    held = _claim(Verdict.REFUTED, lambda: ClaimEvidence(Verdict.NOT_REFUTED, 0.5, 1.0, "held"))
    rec = run_one(seed_claim("t/held", held), 1)
    assert rec["verdict"] == "not_refuted" != rec["expected"] and rec["agrees"] is False
    bad = run_one(seed_claim("t/bad", lambda: 42, expected="refuted"), 1)
    assert bad["verdict"] == "error" and "seed claim must be a claim with evaluate()" in bad["error"]


def test_every_seed_claim_is_a_suite_audit_with_a_stable_id():
    from dpaudit.reference.claims import all_claims

    audits = load_audits([os.path.join(ROOT, "audits", "seed_claims.py")])
    claims = all_claims()
    assert [a.id for a in audits] == [f"seed{c.seed}/{c.id}" for c in claims] and len(audits) >= 39
    assert [a.expected for a in audits] == [c.verdict for c in claims]
    assert {a.kind for a in audits} == {AuditKind.SEED_CLAIM}
    assert {"seed001/s001-eq6-density", "seed001/s001-eq18", "seed004/s004-thm3-eq22-as-written"} <= {a.id for a in audits}
    assert all(a.description.startswith(f"{paper_name(c.seed)} {c.source}: ") for a, c in zip(audits, claims))


@pytest.mark.slow
def test_a_signal_keeps_what_finished_writes_the_reports_and_stops_every_process(tmp_path):
    """SIGTERM (or Ctrl-C) during ``dpaudit audit``: it used to die (SIGTERM, no report) or exit
    with no report (Ctrl-C), leaving the hung audit's process and its fork pool behind."""
    import signal
    import time

    marker = tmp_path / "started"
    (tmp_path / "hang_suite.py").write_text(textwrap.dedent(f'''\
        import os, time, dpaudit
        from dpaudit.suite import sampled

        @dpaudit.mechanism(epsilon=1.0)
        def good(data, rng, size=None):
            return rng.laplace(size=size)

        @dpaudit.mechanism(epsilon=1.0)
        def hangs(data, rng):  # loop form: a fork pool of workers, all stuck
            if not os.path.exists({str(marker)!r}):
                open({str(marker)!r}, "w").write(str(os.getpgid(0)))
            time.sleep(1000)

        AUDITS = [sampled("t/good", good, samples=2000), sampled("t/hangs", hangs, samples=2000)]
        '''))
    proc = subprocess.Popen([sys.executable, "-m", "dpaudit", "audit", "hang_suite.py", "--out", "out"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, DPAUDIT_JOBS="1"))  # t/good ends before t/hangs starts
    deadline = time.monotonic() + 60
    while not (marker.exists() and marker.read_text()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert marker.exists(), "the hanging audit never started"
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 7, out + err
    assert "interrupted (SIGTERM) after 1 of 2 audits; wrote json: out/results.json" in err
    assert "Traceback" not in out + err
    records = {r["id"]: r for r in json.loads((tmp_path / "out" / "results.json").read_text())["results"]}
    assert records["t/good"]["verdict"] == "not_refuted"
    assert records["t/hangs"]["verdict"] == "interrupted"
    assert records["t/hangs"]["error"].startswith("interrupted (SIGTERM) before the audit finished")
    group, gone = int(marker.read_text()), False
    deadline = time.monotonic() + 10  # killed with the run; reaped by init a moment later
    while not gone and time.monotonic() < deadline:
        try:
            os.killpg(group, 0)
            time.sleep(0.1)
        except ProcessLookupError:
            gone = True
    assert gone, "the hung audit's process group outlived dpaudit"


def test_no_match_exits_5_and_a_listing_exits_0_anywhere(tmp_path):
    # the exit-code table: 5 for no audit or claim matched (they exited 3); `list` outside a
    # folder with ./audits printed its listing and exited 5 with nothing on stderr
    out = dpaudit("audit", "--id", "nope", cwd=ROOT)
    assert out.returncode == 5 and "no audit with id 'nope'" in out.stderr
    out = dpaudit("verify", "--claim", "nope", cwd=tmp_path)
    assert out.returncode == 5 and "unknown claim 'nope'" in out.stderr
    out = dpaudit("list", cwd=tmp_path)
    assert out.returncode == 0 and "(none found in ./audits)" in out.stdout
