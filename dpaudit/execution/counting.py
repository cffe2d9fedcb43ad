"""Counting an event where the samples are drawn: workers return counts, not outputs.

Once the validation event S is fixed, the estimators only need, per batch, how many outputs were
drawn and how many fell in S (and, for the paired bound of :mod:`dpaudit.estimators.bounds`, how
many rows of the two batches of one seed fell in S together). :func:`count_unit` draws a
:class:`CountUnit` (one batch, or the two batches of a pair on one seed), encodes and validates the
outputs, and returns a :class:`UnitCounts` of a few integers, plus the first ``keep`` encoded
outputs of each batch when the report's plots ask for them (a bounded sample).

An executor may offer ``count(spec, encoder, event, units, keep) -> list[UnitCounts]`` and run
:func:`count_unit` next to the samples (the Dask executor does: the network carries bytes per
batch, and the parent's memory does not grow with the budget). :func:`count_units` uses it when it
exists and otherwise draws through ``executor.run`` and counts here; both give the same integers,
because the batches and their seeds are the same (:func:`dpaudit.execution.base.plan_batches`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np

from dpaudit.errors import MechanismError
from dpaudit.execution.base import BatchTask
from dpaudit.rng import generator

__all__ = ["CountUnit", "UnitCounts", "count_unit", "count_units", "counts_of", "reply", "unwrap"]


@dataclass(frozen=True, slots=True)
class CountUnit:
    """Batches counted together: one batch, or (``paired``) batch i of D and of D′ on one seed,
    whose rows are compared one to one."""

    tasks: tuple
    paired: bool = False


@dataclass(frozen=True, slots=True)
class UnitCounts:
    """``n[j]`` outputs drawn by batch j of the unit, ``inside[j]`` of them in the event; ``joint``
    rows in the event in both batches (paired units, else None); ``kept[j]`` the first encoded
    outputs of batch j (empty unless asked for)."""

    n: tuple
    inside: tuple
    joint: Optional[int] = None
    kept: tuple = ()


def counts_of(encoded: Sequence[np.ndarray], event: Any, paired: bool, keep: int) -> UnitCounts:
    """The counts of a unit's encoded batches (the one place the event is applied)."""
    masks = [np.asarray(event.contains(y), dtype=bool) for y in encoded]
    joint = int(np.count_nonzero(masks[0] & masks[1])) if paired else None
    kept = tuple(y[:keep] for y in encoded) if keep > 0 else ()
    return UnitCounts(tuple(int(y.shape[0]) for y in encoded), tuple(int(np.count_nonzero(m)) for m in masks),
                      joint, kept)


def count_unit(spec: Any, encoder: Any, event: Any, unit: CountUnit, keep: int = 0) -> UnitCounts:
    """Draw the unit's batches (``spec.call_batch`` on each task's data, seed and count, exactly as
    every executor does), encode and validate them, and count the event."""
    encoded = []
    for t in unit.tasks:
        data = np.asarray(t.data, dtype=float)
        raw = spec.call_batch(data, generator(t.seed), t.n)
        encoded.append(encoder.encode(raw, data))
    return counts_of(encoded, event, unit.paired, keep)


def count_units(executor: Any, spec: Any, encoder: Any, event: Any, units: Sequence[CountUnit],
                keep: int = 0) -> list[UnitCounts]:
    """:class:`UnitCounts` of every unit, in order: counted by the executor where the samples are
    when it can (``executor.count``), else drawn through ``executor.run`` and counted here.
    A misbehaving mechanism raises :class:`~dpaudit.errors.MechanismError`."""
    units = list(units)
    counter = getattr(executor, "count", None)
    if callable(counter):
        return list(counter(spec, encoder, event, units, keep))
    tasks: list[BatchTask] = [t for u in units for t in u.tasks]
    raws = executor.run(spec, tasks)
    out, i = [], 0
    for u in units:
        k = len(u.tasks)
        encoded = [encoder.encode(raw, np.asarray(t.data)) for raw, t in zip(raws[i:i + k], u.tasks)]
        out.append(counts_of(encoded, event, u.paired, keep))
        i += k
    return out


def reply(fn: Any, *args: Any) -> tuple:
    """``("ok", fn(*args))``, or a mechanism failure as plain values ``("error", cause, dataset)``
    (an exception with several arguments does not survive pickling intact)."""
    try:
        return ("ok", fn(*args))
    except MechanismError as exc:
        return ("error", exc.cause, exc.dataset)


def unwrap(answer: tuple) -> Any:
    """The value of a :func:`reply`, or the :class:`MechanismError` it carries, raised here."""
    if answer[0] == "error":
        raise MechanismError(answer[1], answer[2])
    return answer[1]
