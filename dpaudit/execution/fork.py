"""A fork-based multi-core :class:`~dpaudit.execution.base.Executor` for slow mechanisms without a batch form.

The work is already cut by :func:`dpaudit.execution.base.plan_batches` into batches whose boundaries and
seeds depend only on the sample count, never on the number of workers; this executor only spreads
those batches over processes and returns their outputs in task order. So the outputs, and every
result computed from them, are identical for 1, 2 or 16 workers.

Workers are forked (``multiprocessing`` "fork" context) after the spec is stored in a module
global, so the mechanism is inherited rather than pickled (closures and lambdas work); outputs
come back pickled. A mechanism failure in a worker comes back as ``(cause, dataset)`` and is raised
here as :class:`~dpaudit.errors.MechanismError`. The pool lives until :meth:`ForkExecutor.close`
(or the end of a ``with`` block) and is rebuilt when another spec is run.

**Signals.** A worker starts with the default SIGTERM and SIGHUP and ignores SIGINT, whatever
handlers the parent had installed (``dpaudit check`` turns SIGTERM into KeyboardInterrupt): Ctrl-C
reaches the parent alone, which stops the pool, and :meth:`ForkExecutor.close`'s ``terminate()``
kills a worker at once. An inherited handler turned that SIGTERM into an exception inside the
worker, which could print a traceback and leave the pool's queue lock held (a hang in ``close``).

Use it for trusted code in process; untrusted code goes through ``dpaudit check``'s sandbox.
On platforms without ``fork`` it runs the batches in process, and so it does while a library
of :data:`FORK_UNSAFE` is loaded in this process: Polars runs a thread pool whose locks a forked
child inherits held, so a worker that calls Polars waits forever (an OpenDP Polars mechanism
audited ``--in-process`` hung past its ``--timeout``; Polars' own documentation asks for
``spawn`` instead of ``fork``), and python-dp's generator buffer is copied into every child,
which then draw the same noise.

**Time limit.** Under :func:`dpaudit.execution.base.time_limit` the parent waits for each answer
until the deadline at most, then stops the workers and raises
:class:`~dpaudit.errors.TimeLimitReached` (the workers themselves forget the limit: a pool may
outlive the audit that started it).

**Counts where the samples are.** Once the event is fixed, :meth:`ForkExecutor.count` runs
:func:`dpaudit.execution.counting.count_unit` in the workers, which return a few integers per batch
instead of the outputs (the parent neither receives nor holds them). The encoder and event travel
pickled, once per call; if they cannot be pickled the outputs come back and are counted here.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import TimeoutError as FuturesTimeout  # TimeoutError from 3.11 on
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Iterator, Optional, Sequence

import numpy as np

from dpaudit.errors import InvalidArgument, MechanismError, TimeLimitReached
from dpaudit.execution.blas import cap_worker
from dpaudit.rng import generator
from dpaudit.execution.base import (BatchTask, InProcessExecutor, check_time_limit,
                                    forget_time_limit, time_limit_in_force)
from dpaudit.execution.counting import CountUnit, UnitCounts, count_unit, reply, unwrap
from dpaudit.execution.process import worker_signals
from dpaudit.spec import MechanismSpec

__all__ = ["ForkExecutor", "default_workers", "FORK_UNSAFE", "fork_unsafe"]

#: modules that make ``fork`` unsafe once loaded (module docstring): Polars' threads, and
#: python-dp's generator, whose buffer a forked child copies (two workers drew the same noise)
FORK_UNSAFE = ("polars", "pydp")


def fork_unsafe() -> Optional[str]:
    """The first module of :data:`FORK_UNSAFE` loaded in this process, or None."""
    return next((name for name in FORK_UNSAFE if name in sys.modules), None)

_SPEC: Optional[MechanismSpec] = None  # the spec the forked workers inherit


def default_workers() -> int:
    """The CPUs this process may use (``os.sched_getaffinity`` where available)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - macOS, Windows
        return max(1, os.cpu_count() or 1)


def _init_worker() -> None:
    """Pool initializer: default signal dispositions (module docstring), one BLAS thread, no
    time limit of the parent's (the parent enforces it), and global random streams of its own
    (:func:`_fresh_global_streams`)."""
    worker_signals()
    cap_worker()
    forget_time_limit()
    _fresh_global_streams()


def _fresh_global_streams() -> None:
    """Reseed numpy's legacy global state and the ``random`` module from the OS in a forked
    worker. Code that draws from them (a library may: diffprivlib without ``random_state``
    draws from ``np.random``'s global state) would otherwise draw in every worker the stream
    the parent had at the fork: 8 batches of 1,000 ``np.random.standard_normal`` calls over two
    workers gave 5,000 distinct values of 8,000, and repeated outputs are not the independent
    samples every bound assumes. Such a run is not reproducible from its seed either way."""
    import random

    np.random.seed(None)
    random.seed()


def _work(task: BatchTask) -> tuple:
    spec = _SPEC
    try:
        out = spec.call_batch(np.asarray(task.data, dtype=float), generator(task.seed), task.n)
    except MechanismError as exc:
        return ("error", exc.cause, exc.dataset)
    if isinstance(out, np.ndarray):
        return ("ok", out)
    return ("ok", list(out))


def _data_of(task: BatchTask) -> np.ndarray:
    return np.asarray(task.data, dtype=float)


def _work_twice(task: BatchTask) -> tuple:
    first, second = _work(task), _work(task)
    for answer in (first, second):
        if answer[0] == "error":
            return answer
    return ("ok", (first[1], second[1]))


_COUNTER: dict = {}  # pickled (encoder, event) -> objects, per worker process


def _count_work(job: tuple) -> tuple:
    payload, units, keep = job
    what = _COUNTER.get(payload)
    if what is None:
        _COUNTER.clear()
        what = _COUNTER[payload] = pickle.loads(payload)
    encoder, event = what
    return reply(lambda: [count_unit(_SPEC, encoder, event, u, keep) for u in units])


#: Draws per task of :meth:`ForkExecutor.count` (several units each: the per-task cost of the
#: pool is paid per ~10⁶ samples, not per batch).
COUNT_TASK_SAMPLES = 1_000_000


class ForkExecutor:
    """Run batches on ``workers`` forked processes (default: all usable CPUs)."""

    def __init__(self, workers: Optional[int] = None) -> None:
        if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                    or workers < 1):
            raise InvalidArgument.bad("workers", workers, "None or an integer >= 1")
        self.workers = default_workers() if workers is None else workers
        self._pool = None
        self._spec: Optional[MechanismSpec] = None

    @staticmethod
    def available() -> bool:
        """Whether batches are forked: the platform has ``fork`` and no module of
        :data:`FORK_UNSAFE` is loaded here (else they run in process)."""
        return "fork" in multiprocessing.get_all_start_methods() and fork_unsafe() is None

    def _ensure_pool(self, spec: MechanismSpec):
        global _SPEC
        if self._pool is not None and self._spec is spec:
            return self._pool
        self.close()
        _SPEC = spec
        self._spec = spec
        self._pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("fork"),
                                         initializer=_init_worker)
        return self._pool

    def _answers(self, spec: MechanismSpec, work: Any, jobs: list, data_of: Any) -> Iterator[Any]:
        """The workers' answers to ``jobs``, in order. A worker that dies without answering
        (``os._exit``, a signal, a crash in native code) breaks the pool: that is a
        :class:`MechanismError` naming the dataset of the first job left unanswered, and the pool
        is rebuilt on the next call (``multiprocessing.Pool`` instead waited forever for it)."""
        pool = self._ensure_pool(spec)
        futures = [pool.submit(work, job) for job in jobs]
        deadline = time_limit_in_force()
        try:
            for job, future in zip(jobs, futures):
                try:
                    yield future.result(None if deadline is None
                                        else max(0.0, deadline - time.monotonic()))
                except FuturesTimeout:  # the time limit: the workers stop, their batches are lost
                    self.close()
                    check_time_limit(data_of(job))
                    raise TimeLimitReached("exceeded the total time limit", data_of(job)) from None
                except BrokenProcessPool:
                    self.close()
                    raise MechanismError("exited without an answer (os._exit, a signal or a crash "
                                         "in native code ended its process)", data_of(job)) from None
        finally:
            for future in futures:
                future.cancel()

    def run_twice(self, spec: MechanismSpec, task: BatchTask) -> tuple[Any, Any]:
        """``task`` drawn twice, one draw after the other in one worker (the rerun check,
        :func:`dpaudit.reproduce.reruns_alike`): two workers forked from one parent would start from
        one copy of any global generator and agree, and drawing in this process would let a
        mechanism that ends its process (``os._exit``) end dpaudit's."""
        if self.workers == 1 or not self.available():
            return tuple(InProcessExecutor().run(spec, [task]) + InProcessExecutor().run(spec, [task]))
        (answer,) = self._answers(spec, _work_twice, [task], _data_of)
        if answer[0] == "error":
            raise MechanismError(answer[1], answer[2])
        return answer[1]

    def run(self, spec: MechanismSpec, tasks: Sequence[BatchTask]) -> list[Any]:
        tasks = list(tasks)
        if self.workers == 1 or not tasks or not self.available():
            return InProcessExecutor().run(spec, tasks)
        out = []
        for answer in self._answers(spec, _work, tasks, _data_of):
            if answer[0] == "error":
                raise MechanismError(answer[1], answer[2])
            out.append(answer[1])
        return out

    def count(self, spec: MechanismSpec, encoder: Any, event: Any, units: Sequence[CountUnit],
              keep: int = 0) -> list[UnitCounts]:
        """Counts of ``event`` on every unit, computed in the workers (the same integers as
        counting the outputs here: same batches, same seeds)."""
        units = list(units)
        try:
            payload = pickle.dumps((encoder, event))
        except (pickle.PicklingError, TypeError, AttributeError):
            payload = None
        if self.workers == 1 or len(units) <= 1 or not self.available() or payload is None:
            from dpaudit.execution.counting import count_units

            if payload is None and self.workers > 1 and self.available():
                return count_units(_Drawer(self), spec, encoder, event, units, keep)
            # in process: drawn through InProcessExecutor (its time limit), counted here
            return count_units(InProcessExecutor(), spec, encoder, event, units, keep)
        jobs, cur, n = [], [], 0
        for u in units:
            cur.append(u)
            n += sum(t.n for t in u.tasks)
            if n >= COUNT_TASK_SAMPLES:
                jobs.append((payload, cur, keep))
                cur, n = [], 0
        if cur:
            jobs.append((payload, cur, keep))
        return [c for answer in self._answers(spec, _count_work, jobs, lambda job: _data_of(job[1][0].tasks[0]))
                for c in unwrap(answer)]

    def close(self) -> None:
        """Stop the workers (idempotent)."""
        global _SPEC
        if self._pool is not None:
            pool, self._pool = self._pool, None
            processes = list((getattr(pool, "_processes", None) or {}).values())
            pool.shutdown(wait=False, cancel_futures=True)
            for proc in processes:  # a call still running (a hung mechanism) is not waited for
                proc.terminate()
            for proc in processes:
                # SIGTERM can reach a worker before its initializer reset the parent's handler,
                # or leave it waiting on a queue lock a killed sibling held: a worker not gone
                # within 5 s is killed (close() once waited for it forever, and a test run hung)
                proc.join(timeout=5.0)
                if proc.is_alive():
                    proc.kill()
                    proc.join()
        if _SPEC is self._spec:
            _SPEC = None
        self._spec = None

    def __enter__(self) -> "ForkExecutor":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:  # pragma: no cover - best effort
        try:
            self.close()
        except Exception:
            pass


class _Drawer:
    """A fork executor seen without its ``count`` (outputs drawn in the workers, counted here)."""

    def __init__(self, inner: ForkExecutor) -> None:
        self.run = inner.run
