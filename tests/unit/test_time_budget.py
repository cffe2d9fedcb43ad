"""Audits that finish within the time asked: the default budget sized to the time per call, the
in-process time limit (between calls of a one-call form and of a library's calls), and the
advice a slow call is given."""

import sys
import time

import numpy as np
import pytest

import dpaudit
from dpaudit.auditing.estimate import (POLARS_RELEASE_ADVICE, SLOW_CALL_ADVICE, estimate_event,
                                       releases_polars_query)
from dpaudit.auditor import FIT_SHARE, _fitted_budget, fitted_note  # private: the budget rule itself, at set timings
from dpaudit.errors import TimeLimitReached
from dpaudit.execution.base import InProcessExecutor, check_time_limit, plan_batches, time_limit
from dpaudit.execution.fork import ForkExecutor, fork_unsafe
from dpaudit.spec import MechanismSpec


# -- the budget sized to the time per call ---------------------------------------------------------

def _estimate(per_call, budget=400_000):
    return {"seconds_per_call": per_call, "estimated_seconds": per_call * budget, "calls": budget}


def test_a_default_budget_that_does_not_fit_is_sized_to_the_time_left():
    fitted = _fitted_budget(400_000, None, _estimate(0.001), 60.0)
    # 0.5 · 60 s / 1 ms = 30,000 calls, in thousands
    assert fitted["budget"] == int(FIT_SHARE * 60.0 / 0.001) // 1000 * 1000 == 30_000
    assert fitted["default"] == 400_000 and fitted["seconds_per_call"] == 0.001
    note = fitted_note(fitted, 60.0)
    assert note.startswith("budget reduced to 30,000 calls to fit the time limit of 60 s")
    assert "400,000" in note and "--samples" in note


@pytest.mark.parametrize("given, estimate, left", [
    (400_000, _estimate(0.001), 60.0),   # a budget the user gave is kept (INCONCLUSIVE at the limit)
    (None, _estimate(0.001), None),       # no time limit
    (None, None, 60.0),                   # no timing (the mechanism failed its probe)
    (None, _estimate(1e-5), 60.0),        # fits: 4 s of calls
    (None, _estimate(0.2), 15.0),         # 45 calls fit: too few for an audit (< 1,000)
])
def test_the_budget_is_kept_otherwise(given, estimate, left):
    assert _fitted_budget(400_000, given, estimate, left) is None


def _timed(seconds):
    """A call of ``seconds`` (or a little more) that waits rather than spins: the time limit and
    the fitted budget are wall-clock time, and a waiting call leaves the cores to the rest of the
    suite (the busy loop it replaced cost a core for the whole audit: 6 CPU s)."""
    def slow(data, rng):
        time.sleep(seconds)
        return float(np.sum(data) + rng.laplace(scale=1.0))
    return slow


@pytest.mark.slow
def test_a_one_ms_call_gets_a_verdict_within_the_time_limit():
    """1 ms a call in process at timeout=20: the default 400,000 calls (7 minutes) cannot fit, the
    audit runs on a fitted budget and ends within the limit (10%, and a second for a call and
    the result's own work on a loaded machine) with a verdict, the record saying how the budget
    was chosen, the reproduce line carrying it. (20 s, not less: on a machine shared by many
    processes a 1 ms call took up to 4 ms, and a fit below 1,000 calls is not made.)"""
    spec = MechanismSpec.from_function(_timed(0.001), epsilon=1.0, size=5, domain=(0.0, 1.0),
                                       neighbours="add-remove")
    import dpaudit.auditing.looks  # noqa: F401 - imported before audit() starts its clock

    started = time.monotonic()
    result = dpaudit.audit(spec, timeout=20.0, seed=7, executor=InProcessExecutor())
    took = time.monotonic() - started
    assert took <= 20.0 * 1.1 + 1.0, took
    details = result.to_record()["details"]
    assert result.verdict.value != "inconclusive", details.get("note")
    fitted = details["budget_fitted"]
    assert 1_000 <= fitted["budget"] < 400_000 and result.samples <= fitted["budget"]
    assert details["note"].startswith(f"budget reduced to {fitted['budget']:,} calls")
    assert f"samples={fitted['budget']}" in result.reproduce


QUARTER_MS = """
import time
import dpaudit

@dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0, 1), size=5)
def halved(data, rng):
    time.sleep(0.00025)  # waits, not spins: wall-clock time as a busy call, without its CPU
    return float(data.sum() + rng.laplace(scale=0.5))
"""


@pytest.mark.slow
def test_the_check_line_says_the_budget_was_reduced_and_reruns_it(tmp_path):
    """``dpaudit check`` of a 0.25 ms call (its noise scale halved: 2-DP, claimed 1) at
    ``--timeout 20``: the sandboxed audit ends with a verdict within the limit, its line says
    the budget was reduced, and its reproduce line names the fitted budget. (A quarter of a
    millisecond, not 1 ms: the sandboxed checks before the sampling take several seconds on a
    machine running twice as many workers as cores, and a 1 ms call then left a fit below the
    1,000 calls dpaudit makes at least; at 0.25 ms the fit is about 30,000 calls, 8,000 at four
    times slower. The call sleeps rather than spins, so it takes a little more, about 0.37 ms and
    a fit of about 22,000 calls, and no CPU.)"""
    import json

    from cli_in_process import dpaudit  # the command's entry point in this process

    (tmp_path / "m.py").write_text(QUARTER_MS)
    started = time.monotonic()
    done = dpaudit("check", "m.py", "--timeout", "20", "--json", "r.json", cwd=tmp_path)
    took = time.monotonic() - started
    assert "Traceback" not in done.stderr, done.stderr
    assert took <= 20 * 1.1, (took, done.stdout)  # 10%
    rec = json.loads((tmp_path / "r.json").read_text())["results"][0]
    fitted = rec["details"]["budget_fitted"]
    assert rec["verdict"] != "inconclusive" and 1_000 <= fitted["budget"] < 400_000, done.stdout
    line = next(l for l in done.stdout.splitlines() if l.startswith("m.py:halved:"))
    assert f"budget reduced to {fitted['budget']:,} calls to fit the time limit of 20 s" in line
    assert f"--samples={fitted['budget']}" in rec["reproduce"]


@pytest.mark.slow
def test_with_neither_samples_nor_timeout_a_slow_default_budget_is_sized_to_the_default(tmp_path,
                                                                                       monkeypatch):
    """A 50 ms call (an OpenDP Polars plan) made the default 400,000 calls an audit of hours: no
    verdict at dpaudit's defaults. With neither ``--samples`` nor ``--timeout`` the default budget
    is sized to :data:`dpaudit.auditor.DEFAULT_FIT_SECONDS` as a time limit would size it, and no
    deadline is set (here the default is made 20 s to keep the test short)."""
    import json

    import dpaudit.auditor
    from cli_in_process import dpaudit as check  # the command's entry point in this process

    monkeypatch.setattr(dpaudit.auditor, "DEFAULT_FIT_SECONDS", 20.0)
    (tmp_path / "m.py").write_text(QUARTER_MS)
    done = check("check", "m.py", "--json", "r.json", cwd=tmp_path)
    assert "Traceback" not in done.stderr, done.stderr
    rec = json.loads((tmp_path / "r.json").read_text())["results"][0]
    fitted = rec["details"]["budget_fitted"]
    assert rec["verdict"] != "inconclusive" and 1_000 <= fitted["budget"] < 400_000, done.stdout
    assert fitted["by_default"] and not rec["details"].get("timed_out")
    line = next(l for l in done.stdout.splitlines() if l.startswith("m.py:halved:"))
    assert (f"budget reduced to {fitted['budget']:,} calls to fit dpaudit check's default of 20 s "
            f"with neither --samples nor --timeout") in line
    assert f"--samples={fitted['budget']}" in rec["reproduce"] and "--timeout" not in rec["reproduce"]


# -- the in-process time limit -------------------------------------------------------------------

def test_in_process_pieces_give_the_outputs_of_the_whole_batch():
    """Under a time limit a one-call form runs in pieces on the batch's one generator: the same
    outputs as without one (same seed, same samples)."""
    spec = MechanismSpec.from_function(lambda data, rng: float(data.sum() + rng.laplace()),
                                       epsilon=1.0, size=3)
    tasks = plan_batches(np.full(3, 0.5), np.random.SeedSequence(11), 5_000, 2_000)
    plain = InProcessExecutor().run(spec, tasks)
    with time_limit(time.monotonic() + 600.0, 600.0):
        pieces = InProcessExecutor().run(spec, tasks)
    assert [list(p) for p in pieces] == [list(p) for p in plain]


def test_an_in_process_batch_stops_at_the_limit_within_a_call():
    calls = []

    def slow(data, rng):
        calls.append(1)
        time.sleep(0.02)
        return float(rng.random())

    spec = MechanismSpec.from_function(slow, epsilon=1.0, size=3)
    tasks = plan_batches(np.zeros(3), np.random.SeedSequence(1), 2_000, 2_000)  # 40 s of calls
    started = time.monotonic()
    with pytest.raises(TimeLimitReached, match="total time limit of 0.3 s"):
        with time_limit(started + 0.3, 0.3):
            InProcessExecutor().run(spec, tasks)
    took = time.monotonic() - started
    assert took <= 0.3 * 1.1 + 0.02 + 0.05, took  # 10%, one call, and a scheduling slice
    assert len(calls) < 100


def _slow_opendp_target():
    """An OpenDP sum with Laplace noise whose every call takes 20 ms, as a library target."""
    dp = pytest.importorskip("opendp.prelude")
    from dpaudit.adapters import opendp as adapter

    dp.enable_features("contrib", "honest-but-curious")
    space = dp.vector_domain(dp.atom_domain(bounds=(0.0, 1.0))), dp.symmetric_distance()
    inner = space >> dp.t.then_sum() >> dp.m.then_laplace(scale=1.0)

    def slow(x):
        time.sleep(0.02)
        return inner(x)

    return adapter.target(dp.m.make_user_measurement(*space, dp.max_divergence(), slow,
                                                     lambda d_in: inner.map(d_in)))


@pytest.mark.slow
def test_an_opendp_library_batch_stops_at_the_limit_within_a_call():
    """A library target's batch form is a loop over the library's calls (composed 1,000 at a
    time without a limit): under one, chunks start at one call, so a slow measurement is cut."""
    spec = _slow_opendp_target()
    data = np.full(spec.size, 0.5)
    assert len(spec.call_batch(data, np.random.default_rng(0), 3)) == 3
    started = time.monotonic()
    with pytest.raises(TimeLimitReached):
        with time_limit(started + 0.3, 0.3):
            spec.call_batch(data, np.random.default_rng(0), 50_000)  # 1,000 s of calls
    took = time.monotonic() - started
    assert took <= 0.3 * 1.1 + 0.02 + 0.05, took


@pytest.mark.slow
def test_an_in_process_audit_of_a_slow_opendp_target_keeps_to_its_timeout():
    """A library target of 20 ms a call audited in process at timeout=3: the probe, the checks
    before the sampling and the looks all stop at the limit (10%, and one call); before, one
    probe of 1,000 calls alone took 22 s."""
    spec = _slow_opendp_target()
    import dpaudit.auditing.looks  # noqa: F401 - imported before audit() starts its clock

    started = time.monotonic()
    result = dpaudit.audit(spec, timeout=3.0, seed=5, executor=InProcessExecutor())
    took = time.monotonic() - started
    assert took <= 3.0 * 1.1 + 0.02 + 0.3, took  # 10%, one call, the result's own work
    assert result.verdict.value == "inconclusive" and result.error is None
    assert "time limit of 3 s" in result.to_record()["details"]["note"]


@pytest.mark.slow
def test_a_diffprivlib_library_batch_stops_at_the_limit():
    pytest.importorskip("diffprivlib")
    from dpaudit.adapters import diffprivlib as adapter

    spec = adapter.target("mechanisms.Laplace", epsilon=1.0, sensitivity=1.0)
    data = np.full(spec.size, 0.5)
    with pytest.raises(TimeLimitReached):
        with time_limit(time.monotonic() - 1.0, 1.0):  # spent already: not one call is made
            spec.call_batch(data, np.random.default_rng(0), 50_000)
    assert len(spec.call_batch(data, np.random.default_rng(0), 5)) == 5  # no limit: no check


def _counting_slow(data, rng):
    time.sleep(0.05)
    return float(rng.random())


def test_a_fork_pool_stops_at_the_limit(fork_pool_here):
    spec = MechanismSpec.from_function(_counting_slow, epsilon=1.0, size=3)
    tasks = plan_batches(np.zeros(3), np.random.SeedSequence(2), 4_000, 2_000)  # 100 s a worker
    with ForkExecutor(workers=2) as pool:
        started = time.monotonic()
        with pytest.raises(TimeLimitReached):
            with time_limit(started + 0.5, 0.5):
                pool.run(spec, tasks)
        took = time.monotonic() - started
    assert took <= 0.5 * 1.1 + 0.05 + 0.5, took  # 10%, one call, stopping the workers


def _checks_the_limit(data, rng):
    check_time_limit()  # as a library adapter does between the library's calls
    return float(rng.random())


def test_fork_workers_forget_the_limit_of_the_audit_that_started_them(fork_pool_here):
    """A pool forked under one audit's limit serves a later audit without one: its workers do
    not carry the old deadline (the parent enforces a limit)."""
    spec = MechanismSpec.from_function(_checks_the_limit, epsilon=1.0, size=3)
    tasks = plan_batches(np.zeros(3), np.random.SeedSequence(3), 4, 2)
    with ForkExecutor(workers=2) as pool:
        with time_limit(time.monotonic() + 0.3, 0.3):
            first = pool.run(spec, tasks)
        time.sleep(0.4)
        assert pool.run(spec, tasks) == first  # the same seeds, no TimeLimitReached


def test_no_pool_is_forked_while_polars_is_loaded(monkeypatch):
    """Polars' thread pool makes a forked worker that calls it wait forever: with Polars loaded,
    the batches run in process (the same outputs)."""
    import types

    spec = MechanismSpec.from_function(lambda data, rng: float(rng.random()), epsilon=1.0, size=3)
    tasks = plan_batches(np.zeros(3), np.random.SeedSequence(4), 10, 5)
    expected = InProcessExecutor().run(spec, tasks)
    monkeypatch.setitem(sys.modules, "polars", types.ModuleType("polars"))
    assert fork_unsafe() == "polars" and not ForkExecutor.available()
    with ForkExecutor(workers=2) as pool:
        assert pool.run(spec, tasks) == expected and pool._pool is None


# -- the advice a slow call is given ---------------------------------------------------------------

RELEASED = """
import polars as pl
import opendp.prelude as dp

def f(data):
    q = dp.Context.compositor(data=pl.LazyFrame({"x": list(data)}), privacy_unit=None,
                              privacy_loss=None).query().select(pl.len().dp.noise())
    return q.release().collect().item()
"""
RESOLVED = RELEASED.replace("q.release().collect()", "q.resolve()(pl.LazyFrame()).collect()")
NO_POLARS = """
import opendp.prelude as dp
m = dp.m.make_laplace(dp.atom_domain(T=float), dp.absolute_distance(T=float), scale=1.0)
def f(data):
    return m(float(data.sum()))
"""

#: OpenDP's getting-started Context on a list: its release is a number, and the advice to
#: ``.collect()`` a resolved Polars plan would fail
CONTEXT_ON_A_LIST = """
import opendp.prelude as dp

def f(data):
    context = dp.Context.compositor(data=list(data), privacy_unit=dp.unit_of(contributions=1),
                                    privacy_loss=dp.loss_of(epsilon=1.0), split_evenly_over=1)
    return context.query().clamp((0.0, 1.0)).sum().laplace().release()
"""


@pytest.mark.parametrize("text, expected", [
    (RELEASED, True),
    (RESOLVED, False),                               # the fast form: no release per call
    (NO_POLARS, False),                               # OpenDP without its Polars API
    (CONTEXT_ON_A_LIST, False),                       # a Context query releasing a number
    (RELEASED.replace("import opendp.prelude as dp\n", ""), False),  # no OpenDP
    ("def f(:\n", False),                             # not Python
])
def test_an_opendp_polars_release_is_recognised_from_the_source(tmp_path, text, expected):
    path = tmp_path / "m.py"
    path.write_text(text)
    assert releases_polars_query(str(path)) is expected
    assert releases_polars_query(str(tmp_path / "absent.py")) is False


def test_a_slow_call_is_told_where_its_time_goes(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(RELEASED)
    spec = MechanismSpec.from_function(lambda data: 0.0, epsilon=1.0, size=3)
    polars = spec.__class__(**{**{f: getattr(spec, f) for f in spec.__dataclass_fields__},
                               "source": (str(path), 5)})
    hint = estimate_event(polars, 4.5, 400_000)["hint"]
    assert hint.startswith(POLARS_RELEASE_ADVICE)
    assert "m = query.resolve()" in hint and "--samples" in hint
    assert estimate_event(spec, 0.5, 400_000)["hint"].startswith(SLOW_CALL_ADVICE)
    assert SLOW_CALL_ADVICE not in estimate_event(spec, 0.005, 400_000)["hint"]  # not slow a call
    assert estimate_event(spec, 1e-5, 400_000)["hint"] is None  # 4 s: nothing to say


def test_an_audit_that_cannot_fit_even_its_smallest_run_stops_at_once():
    # 20 ms a call under a 12 s limit: the smallest audit (1,000 calls filling half the time)
    # needs about 40 s, more than twice the time left: INCONCLUSIVE after the probe and the
    # rerun check (a few seconds), not at the limit, with what would help
    from dpaudit.auditor import _cannot_fit  # private: the rule, at set timings

    assert _cannot_fit(None, _estimate(0.02), 12.0) is not None
    assert _cannot_fit(None, _estimate(0.02), 25.0) is None        # 40 s ≤ 2 × 25 s: try
    assert _cannot_fit(1_000, _estimate(0.02), 12.0) is None       # a budget given runs to the limit
    assert _cannot_fit(None, None, 12.0) is None and _cannot_fit(None, _estimate(0.02), None) is None
    slow = dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0, 1), size=5)(_timed(0.02))
    t0 = time.monotonic()
    r = dpaudit.audit(slow, timeout=12, seed=1, executor=InProcessExecutor())
    took = time.monotonic() - t0
    assert r.verdict.value == "inconclusive" and took < 9, (took, r)
    assert "stopped before sampling" in r.details["note"] and "smallest audit" in r.details["note"]
