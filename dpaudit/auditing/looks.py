"""The sampled audit run as a group-sequential test: complete audits at geometric looks, stopping
at the first that refutes the claim (the schedule and why its confidence holds:
:mod:`dpaudit.auditing.schedule`).

Every look is :func:`dpaudit.auditing.sampled.run` on its own seed, derived from the recorded root
seed and the look's number, so a run replays exactly from its seed; the final look runs on the
root seed itself, so an audit with no early look (a budget below 16·``min_look``) is the plain
audit, sample for sample.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Optional

import numpy as np

from dpaudit.auditing.schedule import Schedule, schedule
from dpaudit.auditing import sampled
from dpaudit.spec import MechanismSpec

__all__ = ["run", "look_seed"]

#: a fixed word that keeps the looks' seeds apart from any other use of the root seed
_LOOK_WORD = 0x5E0_1005


def look_seed(seed: int, j: int) -> int:
    """The seed of early look ``j`` (0-based) of a run with root ``seed``."""
    state = np.random.SeedSequence([int(seed), _LOOK_WORD, int(j)]).generate_state(1, np.uint64)
    return int(state[0] >> np.uint64(1))


def _offset(progress: Optional[Callable[[dict], None]], used: int, budget: int,
            look: int) -> Optional[Callable[[dict], None]]:
    if progress is None:
        return None

    def report(info: dict) -> None:
        info = dict(info)
        if info.get("phase") == "done" and look >= 0:
            return  # an early look that did not refute is not the end of the audit
        info["samples"] = used + int(info.get("samples") or 0)
        info["budget"] = budget
        progress(info)

    return report


def run(spec: MechanismSpec, executor: Any, *, budget: int, confidence: float, seed: int,
        timeout: Optional[float] = None, progress: Optional[Callable] = None,
        early_stop: bool = True, min_look: Optional[int] = None,
        plan: Optional[Schedule] = None) -> tuple[sampled.Outcome, Optional[dict]]:
    """Run the audit (module docstring); return the reported look's outcome (``samples`` counts
    every look) and the record of the stopping rule (None with ``early_stop=False`` or a budget
    too small for an early look: the plain audit at full budget and α)."""
    if plan is None and early_stop:
        plan = schedule(budget, confidence) if min_look is None else schedule(budget, confidence, min_look)
    if not early_stop or not plan.budgets:
        out = sampled.run(spec, executor, budget=budget, confidence=confidence, seed=seed,
                         timeout=timeout, progress=progress)
        return out, None
    deadline = None if timeout is None else time.monotonic() + timeout
    used = 0
    looks: list[dict] = []
    out = None
    for j, n in enumerate(plan.budgets):
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            break
        # an early look may take its share of the time left, in proportion to its samples
        share = None if left is None else left * n / max(1, budget - used)
        out = sampled.run(spec, executor, budget=n, confidence=plan.confidence(j),
                         seed=look_seed(seed, j), timeout=share,
                         progress=_offset(progress, used, budget, j))
        used += out.samples
        eps_lb = None if out.bound is None else out.bound.epsilon_lb
        looks.append({"look": j + 1, "budget": n, "samples": out.samples, "alpha": plan.alphas[j],
                      "epsilon_lb": eps_lb})
        if out.error is not None or (eps_lb is not None and eps_lb > spec.epsilon):
            out.samples = used
            return out, _record(plan, looks, stopped=j + 1, early=True)
    left = None if deadline is None else deadline - time.monotonic()
    if left is not None and left <= 0 and out is not None:
        out.samples = used
        out.timed_out = True
        return out, _record(plan, looks, stopped=len(looks), early=False)
    rest = budget - used
    out = sampled.run(spec, executor, budget=rest, confidence=plan.confidence(-1), seed=seed,
                     timeout=left, progress=_offset(progress, used, budget, -1))
    looks.append({"look": len(looks) + 1, "budget": rest, "samples": out.samples,
                  "alpha": plan.final_alpha,
                  "epsilon_lb": None if out.bound is None else out.bound.epsilon_lb})
    out.samples += used
    return out, _record(plan, looks, stopped=len(looks), early=False)


def _record(plan: Schedule, looks: list[dict], *, stopped: int, early: bool) -> dict:
    rec = plan.to_record()
    rec.update({"looks": looks, "stopped_at_look": stopped, "stopped_early": early})
    return rec
