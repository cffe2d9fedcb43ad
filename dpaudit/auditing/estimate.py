"""How long an audit will take, told before it starts: a timed probe of the mechanism and the
``"estimate"`` progress event (:func:`dpaudit.audit` reports it; ``dpaudit check`` prints it when an
audit would take a minute or more, with what would shorten one of more than ten minutes).
"""

from __future__ import annotations

import time
from typing import Any, Callable, Optional

import numpy as np

from dpaudit.errors import MechanismError
from dpaudit.spec import CallForm, MechanismSpec

__all__ = ["probe_estimate", "estimate_event", "duration", "LONG_AUDIT", "ESTIMATE_BATCH"]

#: an audit estimated to take longer than this (seconds) says what would shorten it
LONG_AUDIT = 600.0
#: the first timing probe of a batch form: one batch of this many outputs
ESTIMATE_BATCH = 1000
#: the seed word of the timing probe (outside the budget, on a seed of its own)
_ESTIMATE_WORD = 0xE57_1A7E


def probe_estimate(spec: MechanismSpec, executor: Any, seed: int, budget: int,
              progress: Optional[Callable[[dict], None]],
              context: Any = None) -> Optional[dict]:
    """Time the mechanism before sampling: one call, or one batch of 1,000 for a batch form (then
    larger batches while the probe is short and its estimate long: the round trip to a sandbox
    and a first call's warm-up must not make a fast mechanism look slow; a first probe that is
    long is made once more, warm, so a child's start is not timed), on a mid-domain dataset
    and a seed of its own, outside the budget; reports the ``"estimate"``
    progress event (:func:`estimate_event`) and returns it; None when the mechanism fails (the
    audit reports it). A command that timed the mechanism already (``dpaudit check`` times the
    first call of its fresh-process check, and reported the estimate) hands the time in as
    ``context.seconds_per_call``: no probe then, and no second report."""
    from dpaudit.execution.base import BatchTask

    workers = max(1, int(getattr(executor, "workers", 1) or 1))
    if context is not None and context.seconds_per_call is not None:
        return estimate_event(spec, context.seconds_per_call, budget, workers)
    data = tuple([0.5 * (spec.domain.lo + spec.domain.hi)] * max(1, int(spec.size)))
    seq = np.random.SeedSequence([int(seed), _ESTIMATE_WORD])
    per_call = None
    n = ESTIMATE_BATCH if spec.call_form is CallForm.BATCH else 1
    warm = False
    while True:
        started = time.monotonic()
        try:
            executor.run(spec, [BatchTask(data, seq, n)])
        except MechanismError:
            return None
        took = time.monotonic() - started
        per_call = took / n
        if not warm and took > 0.05 and per_call * budget / workers >= 60.0:
            # the first probe may have paid a fresh sandbox child's start (one restarted after
            # a failure, as the replay stage's): the same probe again, warm, is the one timed
            warm = True
            continue
        warm = True
        # refine while the estimate would be shown (a minute or more) and the probe was short
        # enough to be mostly overhead (a round trip, a first call's warm-up): 20 times as many
        # calls, at most about a second of them
        if per_call * budget / workers < 60.0 or took > 0.05 or n >= budget:
            break
        n = int(min(budget, 20 * n, max(n + 1, 1.0 / max(per_call, 1e-9))))
    info = estimate_event(spec, per_call, budget, workers)
    if progress is not None:
        progress(dict(info))
    return info


def estimate_event(spec: MechanismSpec, per_call: float, budget: int, workers: int = 1) -> dict:
    """The ``"estimate"`` progress event: ``seconds_per_call``, ``estimated_seconds`` (the budget
    times the time per call, over the executor's workers), ``calls`` and ``hint``, what would
    shorten an audit longer than :data:`LONG_AUDIT` seconds."""
    total = per_call * budget / max(1, workers)
    hint = None
    if total > LONG_AUDIT:
        ways = [f"--samples N (a budget below {budget:,} calls: fewer samples, a weaker bound)"]
        if spec.call_form is not CallForm.BATCH:
            ways.append("a batch form f(data, rng, size=None) returning size releases at once")
        ways.append("--executor to spread the calls over more cores or machines")
        hint = "to shorten it, give " + "; or ".join(ways)
    return {"phase": "estimate", "samples": 0, "budget": budget, "seconds_per_call": per_call,
            "estimated_seconds": total, "calls": budget, "hint": hint}


def duration(seconds: float) -> str:
    """``seconds`` in words a person reads: ``"40 s"``, ``"12 minutes"``, ``"3.2 hours"``,
    ``"23 days"``."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} minutes"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} hours"
    return f"{seconds / 86400:.0f} days"
