"""``dpaudit check`` stops on a SIGTERM whose interrupt was swallowed, and on one that lands while
the fresh-process check's extra child starts: exit 4, every report written, nothing left running
and nothing left in the sandbox's private-folder root.

In CI, ``test_signals_stop_write_reports_and_leave_nothing[SIGTERM]`` once waited 30 s in vain:
the SIGTERM landed while dpaudit imported ``numpy.random._generator`` (warming the auditor's
imports while the sandbox child boots), whose Cython init registers its memoryview types with
``collections.abc.Sequence`` and ignores any failure. The KeyboardInterrupt raised by the handler
vanished there, later signals are ignored by design, and the audit ran on to ``--timeout``. Raised
in a weakref callback of the import system instead, it was lost too, and Python printed its
``Exception ignored in ...`` traceback. Here
dpaudit runs under a small bootstrap that puts the signal at a chosen point (no sleeps): the
run must end long before its ``--timeout=600``.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from .test_hostile import (ROOT, SLOW, arena, check_reports, report_flags,  # noqa: F401 - arena: a fixture
                           reports, wait_until_no_tagged)

#: runs dpaudit's command line after installing the hook named by argv[1]
BOOT = """
import os, signal, sys
import dpaudit.execution.honesty as honesty
from dpaudit.execution import process

def swallowed():
    try:  # the handler raises KeyboardInterrupt before raise_signal returns; it is swallowed,
        signal.raise_signal(signal.SIGTERM)  # as numpy.random's Cython init swallows it
    except KeyboardInterrupt:
        pass

hook = sys.argv.pop(1)
if hook == "swallowed-at-start":  # right after StopOnSignals is installed: before the child boots
    installed = process.StopOnSignals.__init__
    def init(self):
        installed(self)
        swallowed()
    process.StopOnSignals.__init__ = init
elif hook == "lost-in-a-finalizer":  # raised in a __del__ (CI: an import lock's weakref callback)
    class Finalized:
        def __del__(self):
            signal.raise_signal(signal.SIGTERM)
    installed = process.StopOnSignals.__init__
    def init(self):
        installed(self)
        Finalized()  # collected at once: "Exception ignored in ..." unless dpaudit quiets it
    process.StopOnSignals.__init__ = init
elif hook == "swallowed-as-extra-child-spawns":  # while the fresh-process check's extra child starts
    spawn = honesty.FreshProcesses.spawn
    def spawn_then_signal(self):
        spawn(self)
        swallowed()
    honesty.FreshProcesses.spawn = spawn_then_signal
elif hook == "as-extra-child-runs":  # a real SIGTERM from the fresh-process thread, as its first batch starts
    in_batches = honesty._in_batches
    def signal_then_run(*args):
        os.kill(os.getpid(), signal.SIGTERM)
        return in_batches(*args)
    honesty._in_batches = signal_then_run
else:
    raise SystemExit(f"unknown hook {hook}")
from dpaudit.cli import main
main(sys.argv[1:])
"""


@pytest.mark.parametrize("hook", [
    "swallowed-at-start",
    pytest.param("lost-in-a-finalizer", marks=pytest.mark.slow),
    pytest.param("swallowed-as-extra-child-spawns", marks=pytest.mark.slow),
    pytest.param("as-extra-child-runs", marks=pytest.mark.slow),
])
def test_a_sigterm_stops_the_run_wherever_it_lands(arena, hook):
    path = arena["tmp"] / "mech" / "slow.py"
    path.parent.mkdir(exist_ok=True)
    path.write_text(SLOW)
    paths = reports(arena["tmp"])
    cmd = [sys.executable, "-c", BOOT, hook, "check", f"{path}:f", "--epsilon=1",
           "--samples=4000000", "--call-timeout=5", "--pass-env=DPAUDIT_HOSTILE_TAG",
           "--timeout=600", *report_flags(paths)]
    proc = subprocess.Popen(cmd, env=dict(os.environ, PYTHONPATH=str(ROOT)), cwd=arena["work"],
                            start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out, err = proc.communicate(timeout=120)  # a lost stop runs for the whole --timeout
    finally:
        if proc.poll() is None:  # the test failed half-way: leave nothing running
            os.killpg(proc.pid, 9)
            proc.wait()
    text = (out + err).decode()
    assert proc.returncode == 7, text
    assert "Traceback" not in text and text.strip().splitlines()[-1] == "dpaudit: interrupted"
    rec = check_reports(paths)
    assert rec["verdict"] == "interrupted" and "interrupted (SIGTERM)" in rec["error"]
    assert not wait_until_no_tagged(arena["tag"])
