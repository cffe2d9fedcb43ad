"""How long an audit will take, told before it starts: a timed probe of the mechanism and the
``"estimate"`` progress event (:func:`dpaudit.audit` reports it; ``dpaudit check`` prints it when an
audit would take a minute or more, with what would shorten one of more than ten minutes, and, for
a one-call form slower than :data:`SLOW_CALL`, where such a call's time often goes: work that does
not depend on the data rebuilt at each call, an OpenDP Polars query released (its plan compiled)
at each call above all, :func:`slow_call_advice`).
"""

from __future__ import annotations

import time
from typing import Any, Callable, Optional

import numpy as np

from dpaudit.spec import CallForm, MechanismSpec

__all__ = ["probe_estimate", "estimate_event", "duration", "LONG_AUDIT", "ESTIMATE_BATCH", "SLOW_CALL",
           "slow_call_advice", "releases_polars_query"]

#: an audit estimated to take longer than this (seconds) says what would shorten it
LONG_AUDIT = 600.0
#: the first timing probe of a batch form: one batch of this many outputs
ESTIMATE_BATCH = 1000
#: the seed word of the timing probe (outside the budget, on a seed of its own)
_ESTIMATE_WORD = 0xE57_1A7E


def probe_estimate(spec: MechanismSpec, executor: Any, seed: int, budget: int,
              progress: Optional[Callable[[dict], None]],
              context: Any = None) -> dict:
    """Time the mechanism before sampling: one call (a library target's too), or one batch of
    1,000 for a batch form (then larger batches while the probe is short and its estimate long:
    the round trip to a sandbox and a first call's warm-up must not make a fast mechanism look
    slow; a first probe that is long is made once more, warm, so a child's start is not timed),
    on a mid-domain dataset and a seed of its own, outside the budget; reports the
    ``"estimate"`` progress event (:func:`estimate_event`) and returns it. The mechanism's
    failure propagates (:class:`~dpaudit.errors.MechanismError`): the audit is its ERROR, with
    no more calls. A command that timed the mechanism already (``dpaudit check`` times the
    first call of its fresh-process check, and reported the estimate) hands the time in as
    ``context.seconds_per_call``: no probe then, and no second report."""
    from dpaudit.execution.base import BatchTask

    workers = max(1, int(getattr(executor, "workers", 1) or 1))
    if context is not None and context.seconds_per_call is not None:
        return estimate_event(spec, context.seconds_per_call, budget, workers)
    data = tuple([0.5 * (spec.domain.lo + spec.domain.hi)] * max(1, int(spec.size)))
    seq = np.random.SeedSequence([int(seed), _ESTIMATE_WORD])
    per_call = None
    # a library target's batch form is a loop over the library's calls (0.1 ms to seconds each):
    # timed from one call, as a one-call form is
    n = ESTIMATE_BATCH if spec.call_form is CallForm.BATCH and not getattr(spec, "library", None) else 1
    warm = False
    while True:
        started = time.monotonic()
        executor.run(spec, [BatchTask(data, seq, n)])
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
    shorten an audit longer than :data:`LONG_AUDIT` seconds (led, for a one-call form of at
    least :data:`SLOW_CALL` seconds a call, by :func:`slow_call_advice`)."""
    total = per_call * budget / max(1, workers)
    hint = None
    if total > LONG_AUDIT:
        ways = [f"--samples N (a budget below {budget:,} calls: fewer samples, a weaker bound)"]
        if spec.call_form is not CallForm.BATCH:
            ways.append("a batch form f(data, rng, size=None) returning size releases at once")
        ways.append("--executor to spread the calls over more cores or machines")
        hint = "to shorten it, give " + "; or ".join(ways)
        if per_call >= SLOW_CALL and spec.call_form is not CallForm.BATCH:
            hint = f"{slow_call_advice(spec)}; {hint}"
    return {"phase": "estimate", "samples": 0, "budget": budget, "seconds_per_call": per_call,
            "estimated_seconds": total, "calls": budget, "hint": hint}


#: a one-call form this slow (seconds a call) is told where a call's time often goes
SLOW_CALL = 0.01
#: what a slow call is told (:func:`slow_call_advice`)
SLOW_CALL_ADVICE = ("if each call builds something that does not depend on the data (a library's "
                    "measurement or query plan, a model, a table), build it once at import and "
                    "only invoke it in the function")
#: ... and a function that releases an OpenDP Polars query per call: OpenDP compiles the query's
#: plan (the whole measurement) at each ``release()``, 0.83 CPU-seconds, while invoking the
#: measurement once built takes 1.3 ms (benchmarks/results/call_overhead.json, ``polars``)
POLARS_RELEASE_ADVICE = ("the function calls .release() on an OpenDP Polars query, which compiles "
                         "the query's plan at every call: build the measurement once at import, "
                         "m = query.resolve(), and return m(data).collect() in the function (a "
                         "call then takes milliseconds)")


def slow_call_advice(spec: MechanismSpec) -> str:
    """What a slow one-call form is told: :data:`POLARS_RELEASE_ADVICE` when its file uses
    OpenDP's Polars API and calls ``.release()`` (:func:`releases_polars_query`), else
    :data:`SLOW_CALL_ADVICE`."""
    source = getattr(spec, "source", None)
    path = source[0] if isinstance(source, tuple) and source else None
    return POLARS_RELEASE_ADVICE if path and releases_polars_query(path) else SLOW_CALL_ADVICE


def releases_polars_query(path: str) -> bool:
    """Whether the Python file at ``path`` (its text, parsed here and never run) imports OpenDP
    and Polars, reaches OpenDP's Context API (``Context.compositor``/``.query()``) and calls
    ``.release()`` with no argument: a release of an OpenDP ``LazyFrameQuery``, made at each
    call when it is in the audited function. False when the file cannot be read or parsed."""
    import ast

    try:
        with open(path, "rb") as fh:
            text = fh.read(1 << 20)
        tree = ast.parse(text)
    except (OSError, SyntaxError, ValueError):
        return False
    imported: set = set()
    released = compositor = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            attr = node.func.attr
            if attr == "release" and not node.args and not node.keywords:
                released = True
            elif attr in ("compositor", "query"):
                compositor = True
    # a Context query on a list releases a number (no .collect()): Polars must be imported too
    return released and "opendp" in imported and "polars" in imported and compositor


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
