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

from dataclasses import dataclass
from typing import Any, Iterator, Protocol, Sequence, runtime_checkable

import numpy as np

from dpaudit.rng import generator
from dpaudit.spec import MechanismSpec

__all__ = ["BATCH_SIZE", "BatchTask", "Executor", "InProcessExecutor", "iter_batches", "plan_batches"]

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


class InProcessExecutor:
    """Run every batch here, one after another (trusted code; the default for reference mechanisms)."""

    def run(self, spec: MechanismSpec, tasks: Sequence[BatchTask]) -> list[Any]:
        return [spec.call_batch(np.asarray(t.data, dtype=float), generator(t.seed), t.n) for t in tasks]
