"""A stop asked for by SIGTERM (SIGHUP, Ctrl-C) is not lost when the KeyboardInterrupt that
:class:`~dpaudit.execution.process.StopOnSignals` raises is swallowed on the way.

The handler raises the interrupt wherever the main thread is and ignores every later signal. In
CI a SIGTERM landed while ``dpaudit check`` imported ``numpy.random._generator`` (it warms the
auditor's imports while the sandbox child boots): that Cython module registers its memoryview
types with ``collections.abc.Sequence`` and ignores any failure, so the interrupt vanished, and
the audit ran on to its ``--timeout``. The sandbox's wait for a reply and the progress callback
now raise the interrupt again (:func:`dpaudit.execution.sandbox.stop_received`).

Each test swallows the interrupt itself, as that import did: no timing is involved.
"""

import os
import signal
import textwrap

import numpy as np
import pytest

from dpaudit.execution.base import plan_batches
from dpaudit.execution.process import StopOnSignals
from dpaudit.execution.sandbox import SandboxExecutor, stop_received
from dpaudit.loader import load_mechanism
from dpaudit.progress import Progress
from dpaudit.rng import root_sequence
from dpaudit.spec import MechanismSpec

MECHANISM = """
def f(data, rng):
    return float(data.sum() + rng.laplace())
"""


@pytest.fixture
def stop():
    """StopOnSignals installed, and a SIGTERM whose interrupt was swallowed."""
    installed = StopOnSignals()
    try:
        try:
            signal.raise_signal(signal.SIGTERM)  # the handler runs before this returns
        except KeyboardInterrupt:
            pass  # swallowed, as code that ignores every exception does
        assert installed.received == "SIGTERM"
        yield installed
    finally:
        installed.restore()


def test_no_stop_without_the_handler_or_a_signal():
    assert stop_received() is None
    installed = StopOnSignals()
    try:
        assert stop_received() is None
    finally:
        installed.restore()


def test_a_swallowed_interrupt_is_still_a_stop_until_the_handlers_are_restored(stop):
    assert stop_received() == "SIGTERM"
    signal.raise_signal(signal.SIGTERM)  # a second signal is ignored, as before
    stop.restore()
    assert stop_received() is None


def test_the_sandbox_raises_the_swallowed_interrupt_again(tmp_path, stop):
    path = tmp_path / "mech.py"
    path.write_text(textwrap.dedent(MECHANISM))
    spec = MechanismSpec.from_function(load_mechanism(str(path), "f").func, epsilon=1.0)
    work = plan_batches(np.array([0.0, 1.0]), root_sequence(3), 10, 10)
    with SandboxExecutor(str(path), "f", call_timeout=5.0) as ex:
        ex.spawn()
        workdir, pid = ex._workdir, ex.pid
        with pytest.raises(KeyboardInterrupt, match="SIGTERM"):
            ex.run(spec, work)  # the child's start, then every batch, waits in _receive
    assert not os.path.exists(workdir)  # closing stopped the child and removed its folder
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_the_progress_callback_raises_the_swallowed_interrupt_again(stop):
    progress = Progress(enabled=False, quiet=True)
    with pytest.raises(KeyboardInterrupt, match="SIGTERM"):
        progress({"phase": "validate", "samples": 10})
