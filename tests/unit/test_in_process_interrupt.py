"""A call that never returns, in dpaudit's own process: the time limit interrupts it.

A sandbox child has its parent to end it; in process (``dpaudit.check``, ``dpaudit.audit``, the
pytest fixture, ``dpaudit check --in-process``) the limit was checked between calls only, so a
batch form that slept forever kept ``timeout=5`` waiting forever, and ``dpaudit.check`` did not pass
its ``timeout`` on at all.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time

import pytest

from dpaudit.errors import TimeLimitReached
from dpaudit.execution.base import INTERRUPT_GRACE, interrupt_at

HANGS = textwrap.dedent("""\
    import sys, time
    import dpaudit

    @dpaudit.mechanism(epsilon=1.0, domain=(0, 1), size=10)
    def hangs(data, rng, size=None):
        time.sleep(1000)

    api = getattr(dpaudit, sys.argv[1])
    t = time.monotonic()
    r = api(hangs, samples=20000, timeout=2)
    print(r.verdict.value, round(time.monotonic() - t, 1))
    """)


@pytest.mark.slow
@pytest.mark.parametrize("api", ["check", "audit"])
def test_a_batch_that_never_returns_is_inconclusive_at_the_time_limit(api, tmp_path):
    (tmp_path / "hangs.py").write_text(HANGS)
    done = subprocess.run([sys.executable, "hangs.py", api], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    verdict, took = done.stdout.split() if done.returncode == 0 else ("(failed)", "inf")
    assert verdict == "inconclusive", done.stdout + done.stderr[-2000:]
    # the limit, the grace before the interruption, the set-up: far from the 1000 s of the sleep
    assert float(took) < 2 + 2 * INTERRUPT_GRACE + 10, took


def test_a_call_past_the_deadline_is_interrupted_and_the_handler_restored():
    before = signal.getsignal(signal.SIGALRM)
    t = time.monotonic()
    with pytest.raises(TimeLimitReached) as caught:
        with interrupt_at(time.monotonic() + 0.05, 7.0, [1.0]):
            time.sleep(30)
    assert time.monotonic() - t < 5
    assert caught.value.dpaudit_interrupt and "time limit of 7 s" in str(caught.value)
    assert "without returning when the time limit interrupted it" in caught.value.stalled
    assert signal.getsignal(signal.SIGALRM) is before and signal.getitimer(signal.ITIMER_REAL)[0] == 0


def test_another_timer_of_the_process_is_left_alone():
    """pytest-timeout's, or the user's: the block then runs as it is."""
    fired = []
    previous = signal.signal(signal.SIGALRM, lambda *a: fired.append(True))
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        with interrupt_at(time.monotonic() - 1.0):  # already past: would fire at once
            time.sleep(0.5)
        assert fired == [True]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
