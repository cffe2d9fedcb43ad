"""A mechanism of 1 s a call, as a user meets it: ``dpaudit check`` prints how long the audit would
take (and what would shorten it) within 15 s of starting, and with ``--timeout 20`` it ends
INCONCLUSIVE with that hint, not an ERROR blamed on the mechanism (exit 0: inconclusive is not a
failure unless --fail-on-inconclusive). (A second a call, not the 5 s of a real slow mechanism:
the estimate and the limit are the same code paths, at a quarter of the test's time.)"""

import json
import os
import re
import subprocess
import sys
import time

import pytest

SLOW = """
import time
import dpaudit

@dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0, 1), size=5)
def slow_sum(data, rng):
    time.sleep(5)
    return float(data.sum() + rng.laplace(scale=1.0))
"""


@pytest.mark.slow
def test_an_estimate_first_and_an_inconclusive_with_the_hint_at_the_time_limit(tmp_path):
    (tmp_path / "slow.py").write_text(SLOW.replace("time.sleep(5)", "time.sleep(1)"))
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "dpaudit", "check", "slow.py", "--timeout", "20",
                             "--json", "r.json"], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ, CI="1"))
    first = proc.stdout.readline()
    seen_after = time.monotonic() - started
    rest, err = proc.communicate(timeout=180)
    # 400,200 calls of 1 s (and the call's own round trip, well under 0.4 s even on a loaded machine)
    assert re.search(r"estimate: about [56] days for 400,200 calls \(200 of them the replay stage, first\)",
                     first) and "--samples" in first, first + rest + err
    assert seen_after < 15.0, seen_after
    assert proc.returncode == 0 and "Traceback" not in err, err
    line = next(l for l in rest.splitlines() if l.startswith("slow.py:slow_sum:"))
    assert "INCONCLUSIVE" in line and "time limit of 20 s was reached" in line and "--samples" in line
    rec = json.loads((tmp_path / "r.json").read_text())["results"][0]
    assert rec["verdict"] == "inconclusive" and rec["error"] is None
    assert rec["findings"]["logic"]["verdict"] == "inconclusive"


#: what a run may take beyond --timeout: writing the reports, the process's exit and a call under
#: way when the time is up (whichever is larger: 4 s, or one call). 2 s was too little on 2 cores
#: at load 17 (17.8 s for --timeout 15: a fraction of a core does the last steps); the overrun this
#: test caught, the stages that ignored the limit, took the same run to 21 s
GRACE = 4.0


@pytest.mark.slow
def test_every_stage_keeps_to_the_time_limit(tmp_path):
    """A mechanism of 0.2 s a call under ``--timeout 15``: the set-up, the fresh-process check's
    first calls, the replay stage, the sampled audit's own checks before it samples, the sampling,
    and the wait for the fresh-process check at the end all count against the limit, so the whole
    run, from the interpreter's start, ends within 15 s and the grace, INCONCLUSIVE, every report
    written, and the note names the limit as the user gave it."""
    (tmp_path / "slow.py").write_text(SLOW.replace("time.sleep(5)", "time.sleep(0.2)"))
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "dpaudit", "check", "slow.py", "--timeout", "15",
                           "--json", "r.json", "--markdown", "r.md", "--quiet"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, env=dict(os.environ, CI="1"))
    took = time.monotonic() - started
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stdout + done.stderr
    assert took <= 15 + max(GRACE, 0.2), (took, done.stdout)
    rec = json.loads((tmp_path / "r.json").read_text())["results"][0]
    assert rec["verdict"] == "inconclusive" and rec["error"] is None, rec
    assert "time limit of 15 s was reached" in done.stdout, done.stdout
    assert (tmp_path / "r.md").read_text().strip()


def test_the_estimate_says_how_long_and_what_would_shorten_it():
    import io

    import dpaudit
    from dpaudit.auditor import duration, estimate_event
    from dpaudit.progress import Progress

    ns = {}
    exec(SLOW.replace("time.sleep(5)", "pass"), ns)
    spec = dpaudit.MechanismSpec.from_function(ns["slow_sum"])
    event = estimate_event(spec, 5.0, 400_000)
    assert duration(event["estimated_seconds"]) == "23 days"
    assert "--samples" in event["hint"] and "batch form" in event["hint"] and "--executor" in event["hint"]
    assert estimate_event(spec, 1e-5, 400_000)["hint"] is None  # 4 s: nothing to say
    out = io.StringIO()
    shown = Progress(stream=io.StringIO(), out=out, enabled=False)
    shown.start("slow.py")
    shown(event)
    assert out.getvalue().startswith("slow.py: estimate: about 23 days for 400,000 calls at 5 s per call")
    quiet = io.StringIO()
    Progress(stream=io.StringIO(), out=quiet, enabled=False, quiet=True)(event)
    assert quiet.getvalue() == ""


WARM_UP = """
import time
import dpaudit

_first = [True]

@dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0, 1), size=5)
def warms_up(data, rng):
    if _first[0]:  # the first call in each process is slow (a lazy import, a cache filled)
        _first[0] = False
        time.sleep(0.3)
    return float(data.sum() + rng.laplace(scale=1.0))
"""


def test_a_slow_first_call_alone_does_not_time_the_audit(tmp_path):
    """A first call of 0.3 s, then calls of microseconds: the check times a second, warm call and
    takes the faster, so it neither prints an estimate of hours nor cuts the budget for it (a
    single stalled first call on a loaded machine did both)."""
    from cli_in_process import dpaudit  # the command's entry point in this process

    (tmp_path / "warm.py").write_text(WARM_UP)
    done = dpaudit("check", "warm.py", "--samples", "20000", "--float", "off", "--json", "r.json",
                   cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "estimate:" not in done.stdout + done.stderr, done.stdout + done.stderr
    rec = json.loads((tmp_path / "r.json").read_text())["results"][0]
    assert rec["verdict"] == "not_refuted" and rec["samples"] >= 10_000, rec["samples"]


STUCK = """
import time
import dpaudit

@dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0.0, 1.0), size=10)
def stuck(data, rng):
    while len(data) == 3:    # a loop that never ends on some datasets (it sleeps: no CPU spent)
        time.sleep(0.05)
    return int(rng.integers(0, 2))
"""


@pytest.mark.slow
def test_a_call_stuck_at_a_time_limit_below_the_per_call_limit_is_named(tmp_path):
    """Under --timeout 8 (below the 30 s per-call limit) a mechanism that never returns on one
    dataset ended INCONCLUSIVE saying only "time limit reached", and its reproduce line, without
    --timeout, would run the whole budget. Now the line says a call looked stuck, and the
    reproduce line carries the limit that cut the run short."""
    (tmp_path / "stuck.py").write_text(STUCK)
    proc = subprocess.run([sys.executable, "-m", "dpaudit", "check", "stuck.py", "--timeout", "8"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, CI="1"))
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    line = next(l for l in proc.stdout.splitlines() if l.startswith("stuck.py:stuck:"))
    assert "INCONCLUSIVE" in line and "without returning" in line and "may never return" in line, line
    assert re.search(r"--timeout=8$", proc.stdout.splitlines()[-1]), proc.stdout


LEAKY = """
import dpaudit

@dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0.0, 1.0), size=10)
def leaky(data, rng, size=None):
    return data.sum() * 3.0 + rng.laplace(scale=1.0, size=size)   # sensitivity 3, noise for 1
"""


@pytest.mark.slow
def test_an_early_look_under_a_time_limit_has_time_for_its_fixed_costs(tmp_path):
    """Each early look had the share of the time left in proportion to its samples: under
    --timeout 40 the first look of a 4,000,000 budget had 0.05 s, less than the sandbox's round
    trips and the search, and was cut short; a leak refuted in 2 s ended '— cut short by the time
    limit'. An early look now has at least a tenth of the time left. At --timeout 60 the old
    share is 0.075 s (it fails the same way); the budget is given, not fitted to the time limit:
    at 40 a loaded CI machine measured calls slow enough to fit it down to 2,986,400, and its
    first looks did not refute."""
    (tmp_path / "leaky.py").write_text(LEAKY)
    proc = subprocess.run([sys.executable, "-m", "dpaudit", "check", "leaky.py", "--timeout", "60",
                           "--samples", "4000000",
                           "--json", "r.json"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, env=dict(os.environ, CI="1"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    rec = json.loads((tmp_path / "r.json").read_text())["results"][0]
    assert rec["details"]["timed_out"] is False and "cut short" not in proc.stdout, proc.stdout
    looks = rec["details"]["early_stop"]
    assert looks["stopped_early"] and looks["stopped_at_look"] <= 2, looks
