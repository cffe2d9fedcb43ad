"""The sampling contract: batches of mechanism calls, each with its own spawned seed.

Work is cut into :class:`BatchTask` s whose boundaries depend only on the requested count (never on
the number of workers), and each batch gets a child of the audit's ``SeedSequence``. Any
:class:`Executor` (in process, a process pool, or the sandbox of ``dpaudit check``) therefore
returns exactly the same outputs for the same seed.

An executor runs ``spec.call_batch(data, generator(task.seed), task.n)`` for every task and returns
the raw outputs in task order, or raises :class:`~dpaudit.errors.MechanismError` naming the cause
and the dataset. Validation of the outputs (NaN, type and length changes) happens afterwards, in
the parent process.
"""

from __future__ import annotations

import contextvars
import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator, Optional, Protocol, Sequence, runtime_checkable

import numpy as np

from dpaudit.errors import TimeLimitReached
from dpaudit.rng import generator
from dpaudit.spec import CallForm, MechanismSpec

__all__ = ["BATCH_SIZE", "BatchTask", "Executor", "InProcessExecutor", "iter_batches", "plan_batches",
           "time_limit", "check_time_limit", "time_limit_in_force", "forget_time_limit"]

#: Samples per batch: big enough to amortise a batch call, small enough to spread over cores.
BATCH_SIZE = 50_000


@dataclass(frozen=True, slots=True)
class BatchTask:
    """Run the mechanism ``n`` times on ``data`` with a generator on ``seed``."""

    data: tuple
    seed: np.random.SeedSequence
    n: int


def plan_batches(data: Any, seed: np.random.SeedSequence, n: int,
                 batch_size: int = BATCH_SIZE) -> list[BatchTask]:
    """Split ``n`` draws on ``data`` into batches of ``batch_size`` (the last may be shorter); batch
    k uses the k-th child of ``seed``. Depends only on (seed, n, batch_size): reproducible."""
    return list(iter_batches(data, seed, n, batch_size))


#: Seeds spawned at a time by :func:`iter_batches`.
SPAWN_WINDOW = 1024


def iter_batches(data: Any, seed: np.random.SeedSequence, n: int,
                 batch_size: int = BATCH_SIZE) -> Iterator[BatchTask]:
    """The batches of :func:`plan_batches`, made as they are consumed: ``seed.spawn`` in windows
    gives the same children as one ``spawn`` (child k has spawn key ``(..., k)``), so a budget of
    10⁹ draws does not hold 20,000 seeds in memory at once."""
    n = int(n)
    if n <= 0:
        return
    full, rest = divmod(n, batch_size)
    total = full + (1 if rest else 0)
    d = tuple(float(x) for x in np.asarray(data, dtype=float).reshape(-1))
    done = 0
    while done < total:
        for child in seed.spawn(min(SPAWN_WINDOW, total - done)):
            yield BatchTask(d, child, batch_size if done < full else rest)
            done += 1


@runtime_checkable
class Executor(Protocol):
    """Runs batches of a mechanism; returns one raw output sequence per task, in order.

    ``run`` is the whole contract (:class:`InProcessExecutor`, :class:`~dpaudit.execution.fork.ForkExecutor`,
    :class:`~dpaudit.execution.sandbox.SandboxExecutor`, :class:`~dpaudit.execution.dask.DaskExecutor`).
    Two methods are optional and looked up by name: ``run_twice(spec, task)``, one worker drawing
    a task twice in turn (a pool, for the rerun check, :func:`dpaudit.reproduce.reruns_alike`),
    and ``close()``, for an executor that holds processes."""

    def run(self, spec: MechanismSpec, tasks: Sequence[BatchTask]) -> list[Any]:
        ...


# -- the run's time limit, in this process ---------------------------------------------------------

#: (deadline on ``time.monotonic()``, the limit as the user gave it) of the audit under way here
_LIMIT: contextvars.ContextVar[Optional[tuple[float, Optional[float]]]] = \
    contextvars.ContextVar("dpaudit_time_limit", default=None)


@contextmanager
def time_limit(deadline: Optional[float], stated: Optional[float] = None) -> Iterator[None]:
    """While the block runs, mechanism calls made in this process stop at ``deadline``
    (:func:`check_time_limit`): :class:`InProcessExecutor` between calls of a one-call form,
    the library adapters between their library calls (:mod:`dpaudit.adapters`). A sandbox child
    has its own limit (the parent ends it); this is the in-process one, so that ``--timeout``
    holds there too, within one call. ``stated`` is the limit as the user gave it (messages)."""
    token = _LIMIT.set(None if deadline is None else (float(deadline), stated))
    try:
        yield
    finally:
        _LIMIT.reset(token)


def forget_time_limit() -> None:
    """No :func:`time_limit` in this process from now on (a forked worker: the parent that forked
    it keeps the limit, and ends the worker when it is reached)."""
    _LIMIT.set(None)


def time_limit_in_force() -> Optional[float]:
    """The deadline (``time.monotonic()``) of the :func:`time_limit` block under way, or None."""
    limit = _LIMIT.get()
    return None if limit is None else limit[0]


def check_time_limit(data: Any = None) -> None:
    """Raise :class:`~dpaudit.errors.TimeLimitReached` (the user's limit, not the mechanism's
    fault: the audit keeps what it validated and is INCONCLUSIVE without it) once the deadline
    of the :func:`time_limit` block under way has passed; nothing without one."""
    limit = _LIMIT.get()
    if limit is not None and time.monotonic() >= limit[0]:
        raise _reached(limit[1], data)


def _reached(stated: Optional[float], data: Any) -> TimeLimitReached:
    """The :class:`~dpaudit.errors.TimeLimitReached` of the limit ``stated`` (as the user gave
    it; None: not said) met while the mechanism ran on ``data``."""
    said = "the total time limit" if stated is None else f"the total time limit of {stated:g} s"
    return TimeLimitReached(f"exceeded {said}", None if data is None else np.asarray(data, dtype=float))


#: under a time limit, a one-call form runs in pieces of about this many seconds (the limit is
#: checked between pieces)
PIECE_SECONDS = 0.05
#: a call of the mechanism still running this long after the deadline is interrupted (in this
#: process: :func:`interrupt_at`), and again every this many seconds until it returns
INTERRUPT_GRACE = 0.5


#: whether :func:`interrupt_at` arms its timer in this process (:func:`no_interrupts`)
_INTERRUPTS = [True]


def no_interrupts() -> None:
    """:func:`interrupt_at` stands aside in this process from now on: a sandbox child, whose
    parent ends a call that never returns and says how long it had run."""
    _INTERRUPTS[0] = False


@contextmanager
def interrupt_at(deadline: Optional[float], stated: Optional[float] = None,
                 data: Any = None) -> Iterator[None]:
    """While the block runs (one call of the mechanism in this process), raise
    :class:`~dpaudit.errors.TimeLimitReached` in it once ``deadline`` has passed by
    :data:`INTERRUPT_GRACE`, and again every :data:`INTERRUPT_GRACE` s should the code swallow it:
    checks between calls cannot stop a call that never returns (``time.sleep(1000)``, a loop that
    waits forever), and a sandbox child has its parent to end it, this process has none. By
    ``SIGALRM`` (``setitimer``), so on the main thread of a POSIX process only, and never while
    another timer of the process is armed (``pytest-timeout``'s, the user's): there the block runs
    as it is. The exception carries ``dpaudit_interrupt`` (not the mechanism's failure) and
    ``stalled``, how long the call had run."""
    if deadline is None or not _INTERRUPTS[0] or not hasattr(signal, "setitimer") \
            or threading.current_thread() is not threading.main_thread() \
            or signal.getitimer(signal.ITIMER_REAL)[0] > 0:
        yield
        return
    began = time.monotonic()

    def interrupt(signum: int, frame: Any) -> None:
        ran = time.monotonic() - began
        exc = _reached(stated, data)
        exc.stalled = (f"one call had run {ran:.3g} s without returning when the time limit "
                       f"interrupted it, so it may never return")
        exc.dpaudit_interrupt = True  # type: ignore[attr-defined]
        raise exc

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, max(deadline - began, 0.0) + INTERRUPT_GRACE,
                         INTERRUPT_GRACE)
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0.0)
        signal.signal(signal.SIGALRM, previous if previous is not None else signal.SIG_DFL)


class InProcessExecutor:
    """Run every batch here, one after another (trusted code; the default for reference mechanisms).

    Under a :func:`time_limit`, the limit is checked before each batch and, for a one-call form
    (no batch form: ``spec.call_batch`` is a loop of calls), within the batch: the loop runs in
    pieces of one call, then of as many as take about :data:`PIECE_SECONDS`, all on the batch's
    one generator, so the outputs are those of the whole batch drawn at once (the same calls on
    the same stream, in order) and a limit is overrun by at most one call."""

    def run(self, spec: MechanismSpec, tasks: Sequence[BatchTask]) -> list[Any]:
        if _LIMIT.get() is None:
            return [spec.call_batch(np.asarray(t.data, dtype=float), generator(t.seed), t.n)
                    for t in tasks]
        return [self._limited(spec, t) for t in tasks]

    @staticmethod
    def _limited(spec: MechanismSpec, task: BatchTask) -> Any:
        data = np.asarray(task.data, dtype=float)
        check_time_limit(data)
        rng = generator(task.seed)
        deadline, stated = _LIMIT.get() or (None, None)
        if spec.call_form is CallForm.BATCH:
            with interrupt_at(deadline, stated, data):  # a batch that never returns
                return spec.call_batch(data, rng, task.n)
        out: list = []
        piece = 1
        while len(out) < task.n:
            k = min(piece, task.n - len(out))
            started = time.monotonic()
            with interrupt_at(deadline, stated, data):  # a call that never returns
                out.extend(spec.call_batch(data, rng, k))
            took = time.monotonic() - started
            check_time_limit(data)
            piece = max(1, min(4 * k, int(k * PIECE_SECONDS / took) if took > 0 else 4 * k))
        return out
