"""``dpaudit check`` end to end: verdicts, exit codes, one-line errors, reports. The command runs
through its entry point in the test's process (``cli_in_process``; the target still runs in its
sandbox child); the tests of the process itself (a target's prints, a stop, the files left behind)
start ``python -m dpaudit``.

Every bad input gets one clear line, the right exit code, no traceback, and (when a
report was asked for) a report that records the ERROR. Audits are kept tiny (``--samples``).
"""

import json
import os
import shlex
import signal
import subprocess
import sys
import textwrap
import time
import xml.etree.ElementTree as ET

import pytest
from cli_in_process import dpaudit as in_process

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SMALL = ["--samples", "20000"]
TINY = ["--samples", "2000"]

BAD = """
import os, sys, time
import numpy as np
import dpaudit

def raises(data, rng):
    raise ZeroDivisionError("division by zero")

def hangs(data, rng):
    time.sleep(1000)

def hogs_memory(data, rng):
    return float(np.ones(2 ** 27).sum())

def hard_exit(data, rng):
    os._exit(7)

calls = 0

def changes_type(data, rng):
    global calls
    calls += 1
    return "oops" if calls > 300 else float(data.sum() + rng.laplace())

def chatty(data, rng, size=None):
    print("MECHANISM SAYS HELLO")
    return np.round(data.sum() + rng.laplace(scale=2.0, size=size), 3)  # on a decimal grid: no float porosity

async def async_def(data, rng):
    return float(len(data)) * 100

def yields(data, rng):
    yield float(len(data)) * 100

def slow(data, rng):
    if not os.path.exists(os.environ["STARTED_MARKER"]):
        open(os.environ["STARTED_MARKER"], "w").close()
    time.sleep(0.002)
    return float(data.sum() + rng.laplace())
"""


def dpaudit(*args, cwd=ROOT, env=None):
    proc = in_process(*args, cwd=cwd, env=env)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    return proc


def dpaudit_process(*args, cwd=ROOT, env=None):
    full_env = dict(os.environ, CI="1", **(env or {}))
    proc = subprocess.run([sys.executable, "-m", "dpaudit", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, env=full_env, timeout=120)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    return proc


def one_error_line(proc) -> str:
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("dpaudit: error: ")
    return lines[0]


@pytest.fixture(scope="module")
def bad(tmp_path_factory):
    path = tmp_path_factory.mktemp("check") / "bad.py"
    path.write_text(textwrap.dedent(BAD))
    return str(path)


def write(tmp_path, name, body):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return str(path)


def records(path, seed=True):
    run = json.loads(open(path).read())
    assert run["format_version"] and (run["seed"] is not None or not seed)
    return run["results"]


# -- verdicts ----------------------------------------------------------------------------------

@pytest.mark.slow
def test_two_targets_correct_and_buggy_with_every_report(tmp_path):
    files = {k: tmp_path / f"r.{k}" for k in ("json", "html", "junit", "sarif")}
    # ε = 2 leaves the correct (1-DP) example headroom, so that its verdict does not hang on the
    # α = 5% chance of refuting a claim that holds with equality; buggy_mean's true ε is 10
    proc = dpaudit("check", "examples/laplace_sum.py", "examples/buggy_mean.py", "--epsilon", "2",
                   *SMALL, *[a for k, f in files.items() for a in (f"--{k}", f)])
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the worst verdict: refuted
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("examples/laplace_sum.py:noisy_sum: NOT REFUTED — ε = 2")
    # decided by the replay stage: the release is the noised mean, whose exact loss is ε = 10
    assert lines[1].startswith("examples/buggy_mean.py:buggy_mean: REFUTED (replay: an exact privacy loss")
    reproduce = [ln for ln in lines if ln.startswith("reproduce: ")]
    assert reproduce[0].startswith("reproduce: dpaudit check examples/laplace_sum.py:noisy_sum "
                                   "--epsilon=2 ") and len(reproduce) == 2
    good, buggy = records(files["json"])
    assert good["verdict"] == "not_refuted" and good["samples"] > 0
    assert good["location"] == {"path": "examples/laplace_sum.py", "line": 13}  # the decorator
    assert buggy["verdict"] == "refuted" and buggy["epsilon_lower_bound"] > 2.0
    assert all(f.stat().st_size > 0 for f in files.values())
    sarif = json.loads(files["sarif"].read_text())
    # one result per refuted finding: buggy_mean's exact loss found by the replay stage (DPA023, at
    # the noise call), its logic and its float64 (a float64 mean + Laplace)
    assert sorted(r["ruleId"] for r in sarif["runs"][0]["results"]) == ["DPA023", "dpaudit/float64",
                                                                         "dpaudit/logic"]
    junit = files["junit"].read_text()
    # two findings per target, and the replay stage's case beside them
    assert junit.count("<testcase") == 6 and junit.count(" [replay]") == 2
    # each finding's case has its own evidence: the float64 case carried the replay's exact loss
    cases = {c.get("name"): c for c in ET.fromstring(junit).iter("testcase")}
    float_case = cases["examples/buggy_mean.py:buggy_mean [float64]"].find("failure")
    assert "exact privacy loss" not in float_case.get("message") and "ε = 10" not in float_case.get("message")
    assert "porosity" in float_case.get("message")
    # the printed command (as a shell reads it: the comment that says why its confidence is not
    # the run's left out) reruns to the same bound; --exit-zero keeps the verdict but exits 0
    command = shlex.split(reproduce[1], comments=True)[2:]
    assert "# --confidence: this target's share of the run's 0.95 over 2 targets" in reproduce[1]
    rerun = dpaudit(*command, "--exit-zero", "--json", tmp_path / "again.json")
    assert rerun.returncode == 0 and "REFUTED" in rerun.stdout
    assert records(tmp_path / "again.json")[0]["epsilon_lower_bound"] == buggy["epsilon_lower_bound"]


@pytest.mark.slow
def test_leaves_nothing_in_the_working_directory(tmp_path):
    """hypothesis caches what it learns under the current directory even with no example
    database; a CLI run sends that to the user's cache instead of their repository."""
    env = {k: v for k, v in os.environ.items() if k != "HYPOTHESIS_STORAGE_DIRECTORY"}
    env.update(CI="1", XDG_CACHE_HOME=str(tmp_path / "cache"))
    work = tmp_path / "work"
    work.mkdir()
    proc = subprocess.run([sys.executable, "-m", "dpaudit", "check",
                           os.path.join(ROOT, "examples", "laplace_sum.py"), "--epsilon", "2"],
                          cwd=work, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert list(work.iterdir()) == []
    assert "NOT REFUTED" in proc.stdout  # the audit, its pair search included, did run
    # what hypothesis stores (it collects nothing from the source while dpaudit searches:
    # dpaudit.search.seeded) goes to the user's cache, never to the working folder
    stored = tmp_path / "cache" / "dpaudit" / "hypothesis"
    assert not stored.exists() or stored.is_dir()


@pytest.mark.slow
def test_undeclared_mechanism_takes_its_claim_from_flags_and_negative_domains(tmp_path):
    proc = dpaudit("check", "examples/third_party_count.py", "--epsilon", "1", "--domain",
                   "-1:1", *SMALL)  # its true ε is 0.5: headroom, as above
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "NOT REFUTED" in proc.stdout and "--domain=-1:1" in proc.stdout


@pytest.mark.slow
def test_missing_claim_says_which_flag_to_add(tmp_path):
    out = tmp_path / "r.json"
    proc = dpaudit("check", "examples/third_party_count.py", "--json", out)
    assert proc.returncode == 3
    assert "add --epsilon E" in one_error_line(proc)
    assert records(out)[0]["verdict"] == "error"


# -- bad files and flags: exit 3, one line, a report that records the ERROR -----------------------

@pytest.mark.parametrize("name,body,target_suffix,expected", [
    case if case[0] in ("missing.py", "syntax.py") else pytest.param(*case, marks=pytest.mark.slow) for case in [
    ("missing.py", None, "", "missing.py: no such file"),
    ("syntax.py", "def mechanism(data, rng):\n    return (\n", "", "syntax error"),
    ("imports.py", "import no_such_module_xyz\n", "",
     "importing it raised ModuleNotFoundError: No module named 'no_such_module_xyz'"),
    ("empty.py", "def helper(x):\n    return x\n", "", "no mechanism found"),
    ("spec.py", "import dpaudit\nmechanism = dpaudit.MechanismSpec.from_function(lambda d, r: 0.0, epsilon=1.0)\n",
     ":mechanism", "'mechanism' is a MechanismSpec, not a function: audit it with dpaudit.audit(mechanism)"),
    ("two.py", "import dpaudit\n@dpaudit.mechanism(epsilon=1)\ndef a(d, r):\n    return 0.0\n"
               "@dpaudit.mechanism(epsilon=1)\ndef b(d, r):\n    return 0.0\n", "",
     "2 decorated mechanisms (a, b)"),
    ("plain.py", "def mechanism(d, r):\n    return 0.0\n", ":nope", "no function named 'nope'"),
]])
def test_bad_files(tmp_path, name, body, target_suffix, expected):
    path = tmp_path / name
    if body is not None:
        path.write_text(body)
    out = tmp_path / "r.json"
    proc = dpaudit("check", f"{path}{target_suffix}", "--epsilon", "1", "--json", out)
    assert proc.returncode == 3
    assert expected in one_error_line(proc)
    (rec,) = records(out)
    assert rec["verdict"] == "error" and expected in rec["error"]


@pytest.mark.parametrize("flags,expected", [
    (["--epsilon", "0"], "--epsilon must be a finite number > 0"),
    (["--epsilon", "x"], "--epsilon must be a number, got 'x'"),
    (["--delta", "1"], "--delta must be a number in [0, 1)"),
    (["--domain=5:-5"], "--domain must be LO:HI with finite LO < HI"),
    (["--samples", "lots"], "--samples must be an integer >= 1000"),
    (["--no-such-flag"], "unrecognized arguments: --no-such-flag"),
])
def test_bad_flags(tmp_path, flags, expected):
    out = tmp_path / "r.json"
    proc = dpaudit("check", "examples/laplace_sum.py", *flags, "--json", out)
    assert proc.returncode == 3
    assert expected in one_error_line(proc)
    if "--no-such-flag" not in flags:  # argparse failed: no report flags were read
        assert records(out, seed=False)[0]["verdict"] == "error"


# -- misbehaving mechanisms: an ERROR verdict, exit 6, the cause and the dataset ------------------

@pytest.mark.slow
@pytest.mark.parametrize("function,flags,cause", [
    ("raises", [], "raised ZeroDivisionError: division by zero"),
    pytest.param("hangs", ["--call-timeout", "0.5"], "hung: one call ran longer than the per-call limit",
                 marks=pytest.mark.slow),
    pytest.param("hogs_memory", ["--memory", "512M"], "exceeded the memory cap of 512 MiB", marks=pytest.mark.slow),
    pytest.param("hard_exit", [], "exited with status 7", marks=pytest.mark.slow),
    # its 301st call changes type: the outputs stop following the seed, seen at the audit's
    # checkpoints (spread over the run) before the sampling reaches the changed type
    pytest.param("changes_type", ["--no-replay"], "outputs depend on more than the data and the rng",
                 marks=pytest.mark.slow),
    # each call's coroutine or generator object is a new category: a total leak passed as noise
    pytest.param("async_def", [], "returned a coroutine (an async def: wrap it in a plain def", marks=pytest.mark.slow),
    pytest.param("yields", [], "returned a generator (it yields: return the output instead)", marks=pytest.mark.slow),
])
def test_misbehaving_mechanism_is_an_error_verdict(tmp_path, bad, function, flags, cause):
    out = tmp_path / "r.json"
    proc = dpaudit("check", f"{bad}:{function}", "--epsilon", "1", *TINY, *flags, "--json", out)
    assert proc.returncode == 6, proc.stdout + proc.stderr
    summary = proc.stdout.splitlines()[0]
    assert ": ERROR" in summary and cause in summary
    (rec,) = records(out)
    assert rec["verdict"] == "error" and cause in rec["error"] and "dataset" in rec["error"]


@pytest.mark.slow
def test_a_hang_at_the_first_call_is_met_once(tmp_path, bad):
    """The fresh-process check's first call meets the hang, and that is the verdict: the replay
    stage and the audit make no call to meet it again (each stage used to: a per-call limit and
    a child's restart apiece, 15 s in all at --call-timeout 0.5)."""
    out = tmp_path / "r.json"
    proc = dpaudit("check", f"{bad}:hangs", "--epsilon", "1", *TINY, "--call-timeout", "0.5",
                   "--json", out)
    (rec,) = records(out)
    assert proc.returncode == 6 and "hung: one call ran longer" in rec["error"], rec["error"]
    assert "replay" not in rec and rec["samples"] == 0, rec.get("replay")
    # its time is the check's, the hang included (it read 1.8e-05 s: the audit's own, after it)
    assert rec["elapsed_s"] >= 0.5, rec["elapsed_s"]


@pytest.mark.slow
def test_prints_do_not_reach_our_output(bad, tmp_path):
    proc = dpaudit_process("check", f"{bad}:chatty", "--epsilon", "1", *TINY)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "HELLO" not in proc.stdout + proc.stderr
    assert "NOT REFUTED" in proc.stdout


@pytest.mark.slow
def test_interrupt_writes_what_was_done(bad, tmp_path):
    out = tmp_path / "r.json"
    cmd = [sys.executable, "-m", "dpaudit", "check", f"{bad}:slow", "--epsilon", "1",
           "--samples", "10000000", "--json", str(out),
           "--isolation=process", "--pass-env=STARTED_MARKER"]  # the marker is written outside
    marker = tmp_path / "started"
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=dict(os.environ, CI="1", STARTED_MARKER=str(marker)))
    deadline = time.monotonic() + 60
    while not marker.exists() and time.monotonic() < deadline:  # the audit is under way
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert "Traceback" not in stdout + stderr
    assert proc.returncode == 7 and stderr.strip().splitlines()[-1] == "dpaudit: interrupted"
    (rec,) = records(out)
    assert rec["verdict"] == "interrupted" and "interrupted" in rec["error"]


@pytest.mark.slow
def test_non_finite_outputs_are_refuted_and_a_constant_nan_is_not(tmp_path):
    # α = 5% for each verdict; the refuted rows' true ε is infinite (NaN or inf on one side only)
    out = tmp_path / "r.json"
    targets = [f"examples/non_finite.py:{m}" for m in ("mean", "overflows", "always_nan")]
    # the sampling decides all three (the replay stage only adds notes, and without it the same
    # draws give the same verdicts and bounds): --no-replay spares its sandbox child, 2.6 CPU s
    proc = dpaudit("check", *targets, "--samples", "50000", "--seed", "3", "--no-replay", "--json", out)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = {ln.split(":")[1]: ln for ln in proc.stdout.splitlines() if ln.startswith("examples/")}
    for name in ("mean", "overflows"):
        # the counterexample's own note (the float64 finding may say "non-finite output" too)
        assert " REFUTED " in lines[name] and "(non-finite output: NaN or ±inf in " in lines[name], lines[name]
    assert "D = []" in lines["mean"] or "D′ = []" in lines["mean"]
    assert " NOT REFUTED " in lines["always_nan"]
    recs = records(out)
    assert [r["verdict"] for r in recs] == ["refuted", "refuted", "not_refuted"]
    # an event that holds every output on both sides has its rates, not porosity's explanation
    nan_event = recs[2]["findings"]["float"]["counterexample"]["event"]["text"]
    assert "100.00% of the outputs on D, 100.00% on D′" in nan_event and "porosity" not in nan_event, nan_event


@pytest.mark.slow
def test_text_no_encoding_takes_is_escaped_and_every_report_written(tmp_path):
    """A lone surrogate (a message or category built from undecodable bytes) cannot be encoded:
    it made dpaudit exit 4 with no report, or print nothing at all (read as a closed stdout)."""
    mech = write(tmp_path, "surr.py", '''
        def raises(data, rng):
            raise ValueError("bad \\ud800 value")

        def category(data, rng):
            return "\\ud800" if len(data) > 2 else "a"
        ''')
    files = {k: tmp_path / f"r.{k}" for k in ("json", "html", "junit", "sarif", "markdown")}
    flags = [a for k, f in files.items() for a in (f"--{k}", f)]
    proc = dpaudit("check", f"{mech}:raises", "--epsilon", "1", *TINY, *flags)
    assert proc.returncode == 6, proc.stdout + proc.stderr
    assert "mechanism raised ValueError: bad \\ud800 value" in proc.stdout
    assert all(f.stat().st_size > 0 for f in files.values())
    assert "bad \\ud800 value" in records(files["json"])[0]["error"]
    proc = dpaudit("check", f"{mech}:category", "--epsilon", "1", *SMALL, *flags)
    assert proc.returncode == 1 and "REFUTED" in proc.stdout, proc.stdout + proc.stderr
    assert records(files["json"])[0]["verdict"] == "refuted"


def test_a_report_path_that_cannot_be_written_stops_the_run_before_any_audit(tmp_path):
    """It used to fail after the whole audit, and lose every report after it in the list."""
    proc = dpaudit("check", "examples/laplace_sum.py", *SMALL, "--json", tmp_path,
                   "--html", tmp_path / "r.html")
    assert proc.returncode == 3 and proc.stdout == ""
    assert one_error_line(proc) == f"dpaudit: error: cannot write the json report to {tmp_path}: is a folder"


@pytest.mark.slow
def test_a_pyproject_that_weakens_the_sandbox_is_said_on_stderr(tmp_path):
    """The nearest pyproject.toml is often the audited project's own: its authors can set it."""
    (tmp_path / "pyproject.toml").write_text('[tool.dpaudit]\nisolation = "none"\n')
    example = os.path.join(ROOT, "examples", "laplace_sum.py")
    # what is said on stderr is the subject, not the audit: the replay stage's child is spared
    quick = [*TINY, "--no-replay"]
    proc = dpaudit("check", example, *quick, "--trust-config", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stderr.startswith("dpaudit: note: isolation = 'none' from pyproject.toml: ")
    proc = dpaudit("check", example, *quick, "--trust-config", "--isolation", "strict", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr == ""
    # sandbox limits given for a run without the sandbox are said not to apply
    proc = dpaudit("check", example, *quick, "--in-process", "--call-timeout", "3", cwd=tmp_path)
    assert proc.returncode == 0 and \
        "dpaudit: note: --call-timeout is a sandbox limit: it does not apply in process" in proc.stderr


def test_the_function_name_the_sandbox_reports_is_checked():
    """The child runs the audited code: a name it reports is taken only as asked for, or as a
    dotted identifier (a forged 'mechanism ' dodged the project's claim for FILE:mechanism)."""
    from dpaudit.pipeline.target import function_named as _function_named  #: the check on the child's reported name
    from dpaudit.errors import LoadError

    assert _function_named({"function": "mechanism"}, None) == "mechanism"
    assert _function_named({"function": "Cls.method"}, None) == "Cls.method"
    assert _function_named({"function": "f"}, "f") == "f"
    for forged, asked in (("mechanism ", None), ("f: NOT REFUTED\nx", None), (None, None), ("g", "f")):
        with pytest.raises(LoadError, match="tampered with dpaudit in the sandbox"):
            _function_named({"function": forged}, asked)
