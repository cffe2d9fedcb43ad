"""Shared test configuration.

Hypothesis runs derandomised in CI (fixed seed, no example database, no deadline), so a green run
is a green run; ``HYPOTHESIS_PROFILE=thorough`` searches much longer for local and nightly runs.
A run without headless Chromium ends by saying plainly that the browser report test did not run.
"""

import os
import shutil

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "thorough",
    max_examples=5_000,
    derandomize=False,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# A shell with RUST_BACKTRACE=1 (common on a Rust developer's machine) makes every refusal of a Rust
# library (OpenDP) capture a backtrace: 0.1 s each instead of 0.4 ms, read once per process, so
# whichever test first met a refusal decided it for the rest of the worker. dpaudit's sweep sets
# the same before it imports the library (dpaudit/sweep/opendp.py, prelude).
os.environ.setdefault("RUST_LIB_BACKTRACE", "0")

# A shell with PYTHONDONTWRITEBYTECODE set (container images often set it) makes every process
# compile what it imports from source, every time: each xdist worker rewrote and compiled the whole
# of dpaudit and the tests at collection (9.4 CPU s, 4.0 with the caches), and every `dpaudit
# check` subprocess and sandbox child compiled dpaudit again. The suite cost 642 CPU s instead of
# 548 (353 s against 304 s on 2 cores: benchmarks/results/test_suite_times.md). So the suite writes
# its caches as Python does by default, into __pycache__ folders that git ignores; the workers and
# every process they start inherit this. Tests that need a process without caches set it themselves.
if os.environ.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
    import sys

    sys.dont_write_bytecode = False
# The sandbox children run `python -B` (they write no bytecode) and import dpaudit's modules
# without pytest's rewriting, so on a fresh clone each of them compiled those modules from source
# until some other process happened to write their caches. The first process of the run (xdist's
# controller) compiles them once; up to date, this only reads their times.
if "PYTEST_XDIST_WORKER" not in os.environ:
    import compileall
    from pathlib import Path

    compileall.compile_dir(str(Path(__file__).resolve().parent.parent / "dpaudit"), quiet=2)


BROWSERS = ("chromium", "chromium-browser", "google-chrome", "headless_shell")


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """Say plainly, at the end of the run, when the browser report test was skipped."""
    skipped = [r for r in terminalreporter.stats.get("skipped", []) if "test_report_browser" in r.nodeid]
    if skipped and not any(shutil.which(b) for b in BROWSERS):
        terminalreporter.write_line(
            f"NOT RUN: {len(skipped)} browser report test(s) (tests/cli/test_report_browser.py): no headless "
            "Chromium here. Install the Debian 'chromium' package (.ci/run does, as root with apt-get).",
            yellow=True, bold=True)


import pytest  # noqa: E402


def pytest_xdist_auto_num_workers(config):
    """``-n auto`` (README.md, .ci/run): one worker more than there are cores. About a tenth of
    the suite's wall time is tests that mostly wait (hang cases, time limits, the slow-first-calls
    regression); the extra worker runs another test meanwhile. On 2 cores, 3 workers and 4 gave
    the same wall time (514 s) and 3 the least CPU (benchmarks/results/test_suite_times.md); the
    suite also holds at 4 workers on 2 cores. ``PYTEST_XDIST_AUTO_NUM_WORKERS`` still decides
    where it is set."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # pytest-xdist's own hook reads it
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return cores + 1


@pytest.fixture
def fork_pool_here(monkeypatch):
    """Tests of the fork pool itself. A test module that imports ``opendp.prelude`` loads Polars
    into the whole xdist worker, and with Polars loaded no pool is forked
    (:data:`dpaudit.execution.fork.FORK_UNSAFE`): the pool's tests then ran in process and
    failed (or an ``os._exit`` ended the worker). Their workers run numpy mechanisms only and
    never touch Polars' locks, so the pool is allowed here; the policy has its own test
    (``test_no_pool_is_forked_while_polars_is_loaded``)."""
    import multiprocessing

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork on this platform")
    monkeypatch.setattr("dpaudit.execution.fork.FORK_UNSAFE", ())
