"""A Dask (``distributed``) :class:`~dpaudit.execution.base.Executor`: audits on a cluster.

::

    from distributed import Client
    from dpaudit.execution.dask import DaskExecutor

    dpaudit.audit(spec, samples=10**9, executor=DaskExecutor(Client("tcp://scheduler:8786")))
    dpaudit check mech.py --in-process --executor dask            # a LocalCluster on this host
    dpaudit check mech.py --in-process --executor tcp://HOST:8786 # an existing scheduler

The batches are the ones of :func:`dpaudit.execution.base.plan_batches`: their boundaries and
seeds depend only on the sample count, so the outputs, the counts and every bound are the same
as in process, in a fork pool or in the sandbox, with any number of workers. Several batches
travel in one Dask task (a call's draws spread over :data:`TASKS_PER_THREAD` tasks per worker
thread, at most :data:`TASK_SAMPLES` draws each), so the scheduler's per-task cost is paid per
million samples, not per batch.

**Worker settings.** A ``LocalCluster`` started by :meth:`DaskExecutor.local` runs its workers
without the statistical profiler, with the memory monitors at a slow tick, without the
``MALLOC_TRIM_THRESHOLD_`` that Dask sets by default (it fixes glibc's mmap threshold, so every
batch-sized array is mapped and faulted in afresh: 25% of a Laplace batch's time on the reference
machine), and with all tasks sent to the workers at once (``worker-saturation: inf``). Workers you
start yourself keep your settings: see docs/dask.md.

**Counts, not outputs.** Once an event is fixed (validation), :meth:`DaskExecutor.count` runs
:func:`dpaudit.execution.counting.count_unit` on the workers: each task returns a few integers per
batch, and the parent's memory does not grow with the budget. The selection phases, which need
outputs, draw bounded samples (:data:`dpaudit.auditing.sampler.SELECTION_BASE`) through
:meth:`DaskExecutor.run`.

**Trusted code only.** Workers import and call the mechanism directly (its module travels by value
with cloudpickle when it is not an installed package); there is no sandbox on a worker, so
``dpaudit check`` refuses ``--executor`` for a file unless ``--in-process`` says the code is
trusted (:func:`executor_from_option`).

**Faults.** A worker lost mid-audit has its tasks recomputed on another worker by the scheduler;
each task carries its own seeds, so the result does not change. Ctrl-C cancels the outstanding
futures before the interrupt goes on (``dpaudit check`` then writes its reports). A scheduler that
cannot be reached is a :class:`~dpaudit.errors.UsageError` (one line, exit 3).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import signal
import sys
import threading
from typing import Any, Iterator, Optional, Sequence

import numpy as np

from dpaudit.errors import InvalidArgument, UsageError
from dpaudit.execution.base import BatchTask
from dpaudit.execution.counting import CountUnit, UnitCounts, count_unit, reply, unwrap
from dpaudit.rng import generator

__all__ = ["DaskExecutor", "executor_from_option", "INSTALL_HINT", "TASK_SAMPLES"]

#: What to run when ``distributed`` is missing.
INSTALL_HINT = "the Dask executor needs the 'dask' extra: pip install 'dpaudit[dask]'"
#: Most draws per Dask task (several batches each; a batch of a loop-form mechanism is one task).
TASK_SAMPLES = 4_000_000
#: Fewest draws per Dask task when a call has enough (the scheduler's per-task cost stays small).
MIN_TASK_SAMPLES = 250_000
#: Dask tasks per worker thread in one call of :meth:`DaskExecutor.count`.
TASKS_PER_THREAD = 4
#: Dask settings of the workers of :meth:`DaskExecutor.local` (module docstring).
LOCAL_WORKER_CONFIG = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.worker.memory.monitor-interval": "5s",
    "distributed.admin.tick.interval": "1s",
    "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,
    "distributed.scheduler.worker-saturation": float("inf"),
}
#: Seconds to wait for a scheduler to answer.
CONNECT_TIMEOUT = 10.0


def _distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise UsageError(INSTALL_HINT) from None
    return distributed


# -- on the workers ------------------------------------------------------------------------------

_SPECS: dict = {}  # spec blob digest -> spec, per worker process


def _load(blob: bytes) -> Any:
    key = hashlib.sha256(blob).hexdigest()
    spec = _SPECS.get(key)
    if spec is None:
        import cloudpickle

        spec = _SPECS[key] = cloudpickle.loads(blob)
    return spec


def _run_chunk(blob: bytes, tasks: list) -> tuple:
    """Outputs of a chunk of batches (as every executor draws them)."""
    spec = _load(blob)
    return reply(lambda: [spec.call_batch(np.asarray(t.data, dtype=float), generator(t.seed), t.n)
                          for t in tasks])


def _count_chunk(blob: bytes, payload: bytes, units: list, keep: int) -> tuple:
    """Counts of a chunk of units: a few integers each (and ``keep`` outputs when asked)."""
    import cloudpickle

    spec = _load(blob)
    encoder, event = cloudpickle.loads(payload)
    return reply(lambda: [count_unit(spec, encoder, event, u, keep) for u in units])


# -- in the parent -------------------------------------------------------------------------------

def _by_value(spec: Any) -> None:
    """Send the mechanism's own module by value when workers cannot import it (a file given by
    path, a test module, ``__main__``): everything but installed dpaudit code."""
    import cloudpickle

    func = getattr(spec, "func", None)
    name = getattr(func, "__module__", None)
    module = sys.modules.get(name) if name else None
    if module is not None and not name.split(".")[0] == "dpaudit" and name != "__main__":
        try:
            cloudpickle.register_pickle_by_value(module)
        except ValueError:  # pragma: no cover - not a registrable module
            pass


def _chunks(items: Sequence, size_of: Any, target: int) -> list[list]:
    """Consecutive items grouped into chunks of about ``target`` draws (at least one item each)."""
    out: list[list] = []
    cur: list = []
    n = 0
    for it in items:
        if cur and n + size_of(it) > target:
            out.append(cur)
            cur, n = [], 0
        cur.append(it)
        n += size_of(it)
    if cur:
        out.append(cur)
    return out


class DaskExecutor:
    """Run batches on the workers of a ``distributed.Client`` (module docstring).

    ``client``: a connected client; ``task_samples``: draws per Dask task. Use
    :meth:`local` for a ``LocalCluster`` on this host and :meth:`connect` for a scheduler address;
    an executor built by them owns its cluster or client and :meth:`close` shuts it down.
    """

    def __init__(self, client: Any, *, task_samples: int = TASK_SAMPLES) -> None:
        distributed = _distributed()
        if not isinstance(client, distributed.Client):
            raise InvalidArgument.bad("client", client, "a distributed.Client")
        if isinstance(task_samples, bool) or not isinstance(task_samples, int) or task_samples < 1:
            raise InvalidArgument.bad("task_samples", task_samples, "an integer >= 1")
        self.client = client
        self.task_samples = task_samples
        self._owned: list = []
        self._blobs: dict = {}  # id(spec) -> (spec, blob future)

    # -- construction -----------------------------------------------------------------------------

    @classmethod
    def local(cls, workers: int = 2, *, processes: bool = True, threads_per_worker: int = 1,
              **kwargs: Any) -> "DaskExecutor":
        """An executor on a new ``LocalCluster`` of ``workers`` workers (closed with the executor)."""
        distributed = _distributed()
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise InvalidArgument.bad("workers", workers, "an integer >= 1")
        import dask

        with _workers_ignore_ctrl_c(), dask.config.set(LOCAL_WORKER_CONFIG):
            cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=threads_per_worker,
                                               processes=processes, dashboard_address=":0",
                                               silence_logs=logging.CRITICAL)
        client = distributed.Client(cluster)
        ex = cls(client, **kwargs)
        ex._owned = [client, cluster]
        return ex

    @classmethod
    def connect(cls, address: str, *, timeout: float = CONNECT_TIMEOUT, **kwargs: Any) -> "DaskExecutor":
        """An executor on the scheduler at ``address`` (``tcp://HOST:8786``); one-line
        :class:`UsageError` when it cannot be reached within ``timeout`` seconds."""
        distributed = _distributed()
        try:
            client = distributed.Client(address, timeout=timeout)
        except (OSError, TimeoutError, ValueError) as exc:
            raise UsageError(f"cannot reach the Dask scheduler at {address}: "
                             f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
        ex = cls(client, **kwargs)
        ex._owned = [client]
        return ex

    # -- the executor -----------------------------------------------------------------------------

    @property
    def threads(self) -> int:
        """Worker threads in the cluster now (at least 1)."""
        info = self.client.scheduler_info(n_workers=-1) if _takes_n_workers(self.client) \
            else self.client.scheduler_info()
        return max(1, sum(int(w.get("nthreads", 1)) for w in info.get("workers", {}).values()))

    @property
    def batches_per_call(self) -> int:
        """Batches the sampler should hand over per call: enough for every thread to hold
        :data:`TASKS_PER_THREAD` tasks of :attr:`task_samples` draws (of 50,000-draw batches)."""
        return TASKS_PER_THREAD * self.threads * max(1, self.task_samples // 50_000)

    def _target(self, draws: int) -> int:
        """Draws per task for a call of ``draws`` draws: spread over :data:`TASKS_PER_THREAD` tasks
        per thread, between :data:`MIN_TASK_SAMPLES` and :attr:`task_samples` (grouping only:
        the units, their seeds and their counts do not depend on it)."""
        spread = -(-draws // (TASKS_PER_THREAD * self.threads))
        return max(1, min(self.task_samples, max(MIN_TASK_SAMPLES, spread)))

    def _blob(self, spec: Any) -> Any:
        hit = self._blobs.get(id(spec))
        if hit is not None and hit[0] is spec:
            return hit[1]
        import cloudpickle

        _by_value(spec)
        blob = cloudpickle.dumps(spec)
        future = self.client.scatter(blob, broadcast=True, hash=True)
        self._blobs = {id(spec): (spec, future)}
        return future

    def _gather(self, futures: list) -> list:
        try:
            return self.client.gather(futures)
        except KeyboardInterrupt:
            self.client.cancel(futures)
            raise

    def run(self, spec: Any, tasks: Sequence[BatchTask]) -> list[Any]:
        """The outputs of every task, in order (the selection phases' bounded samples)."""
        tasks = list(tasks)
        if not tasks:
            return []
        blob = self._blob(spec)
        chunks = _chunks(tasks, lambda t: t.n, self._target(sum(t.n for t in tasks)))
        futures = [self.client.submit(_run_chunk, blob, c, pure=False) for c in chunks]
        return [out for answer in self._gather(futures) for out in unwrap(answer)]

    def count(self, spec: Any, encoder: Any, event: Any, units: Sequence[CountUnit],
              keep: int = 0) -> list[UnitCounts]:
        """Counts of ``event`` on every unit, computed on the workers (only integers come back,
        and the first ``keep`` outputs of each batch when asked for)."""
        import cloudpickle

        units = list(units)
        if not units:
            return []
        blob = self._blob(spec)
        payload = cloudpickle.dumps((encoder, event))
        size = lambda u: sum(t.n for t in u.tasks)  # noqa: E731
        chunks = _chunks(units, size, self._target(sum(size(u) for u in units)))
        futures = [self.client.submit(_count_chunk, blob, payload, c, keep, pure=False) for c in chunks]
        return [c for answer in self._gather(futures) for c in unwrap(answer)]

    def close(self) -> None:
        """Shut down the client and cluster this executor started (idempotent)."""
        self._blobs = {}
        owned, self._owned = self._owned, []
        for thing in owned:
            try:
                thing.close()
            except Exception:  # noqa: BLE001 - shutting down a cluster that is already gone
                pass

    def __enter__(self) -> "DaskExecutor":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


@contextlib.contextmanager
def _workers_ignore_ctrl_c() -> Iterator[None]:
    """Start worker processes with SIGINT ignored (a Python started with SIGINT ignored keeps it
    so): Ctrl-C at the terminal reaches the whole process group, and only this process should
    answer it, by cancelling the futures and writing the reports, not every worker with a traceback."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _takes_n_workers(client: Any) -> bool:
    import inspect

    try:
        return "n_workers" in inspect.signature(client.scheduler_info).parameters
    except (TypeError, ValueError):  # pragma: no cover
        return False


def executor_from_option(value: str, *, trusted: bool, workers: Optional[int] = None) -> DaskExecutor:
    """The executor of ``--executor VALUE``: ``dask`` (a LocalCluster of ``workers`` processes,
    default all usable CPUs) or a scheduler address ``tcp://HOST:PORT``. Untrusted code (no
    ``--in-process``) is refused: a Dask worker calls the mechanism without the sandbox."""
    if not trusted:
        raise UsageError(f"--executor {value} runs the mechanism in Dask workers without the sandbox; "
                         "add --in-process to confirm the code is trusted")
    if value == "dask":
        from dpaudit.execution.fork import default_workers

        return DaskExecutor.local(workers or default_workers())
    if "://" in value:
        return DaskExecutor.connect(value)
    raise UsageError(f"--executor must be 'dask' or a scheduler address such as tcp://HOST:8786, got {value!r}")
