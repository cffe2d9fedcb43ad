"""One check, from a target to its frozen result: open the target, plan, run the stages, decide.

``dpaudit check`` (file and library targets), :func:`dpaudit.check` and the pytest fixture all
come here: argv or keywords → :class:`~dpaudit.config.CheckSettings` → targets →
:func:`run_target` → :class:`~dpaudit.pipeline.result.CheckResult` → reports.
"""

from __future__ import annotations

import importlib
import time
from typing import Any, Callable, Optional

from dpaudit.pipeline.plan import plan_for
from dpaudit.pipeline.result import CheckResult, decide, failed
from dpaudit.pipeline.stages import Run, claim_of, family
from dpaudit.pipeline.target import open_file, open_function

__all__ = ["run_target", "run_opened", "library_runs", "warm_imports"]


def warm_imports() -> None:
    """Import what :func:`dpaudit.audit` imports lazily (scipy, hypothesis through the
    search engine) now, overlapping the sandbox child's start-up. Only a warm-up: never fails."""
    try:
        importlib.import_module("dpaudit.auditor")
        importlib.import_module("dpaudit.auditing.sampled")
    except ImportError:  # pragma: no cover - the auditor's layout changed; audit() imports it
        pass


def run_target(given: Any, settings: Any, progress: Callable[[dict], None],
               deadline: Optional[float] = None, cluster: Any = None,
               partial: Optional[dict] = None) -> CheckResult:
    """Check one target: a file target (``FILE.py[:FUNCTION]``; sandboxed unless
    ``settings.in_process``) or a function (in process). Load and claim errors propagate (usage
    errors); a misbehaving mechanism is an ERROR verdict. ``partial`` is filled as the check goes
    (the name, the claim, the stage under way, the stages finished), so that a stop by signal can
    write what was done."""
    partial = {} if partial is None else partial
    partial.update(under_way="set-up", stages=[])
    remaining = None if deadline is None else deadline - time.monotonic()
    if remaining is not None and remaining <= 0:
        return failed(str(given), f"not audited: the time limit of {settings.timeout:g} s was "
                      f"reached")
    if callable(given):
        target = open_function(given, settings)
    else:
        fresh = settings.sensitivity is None and settings.replay is None
        target = open_file(given, settings, remaining, fresh=fresh, warm=warm_imports)
    try:
        run = Run(target=target, settings=settings, progress=progress, deadline=deadline,
                  cluster=cluster, partial=partial, confidence=settings.target_confidence,
                  family=family(settings))
        return run_opened(run)
    finally:
        target.close()


def run_opened(run: Run) -> CheckResult:
    """Plan and run the stages of an opened target, then decide its verdict once."""
    target, settings = run.target, run.settings
    plan = plan_for(settings, target)
    engine = plan.engine
    if engine.name != "sensitivity":
        run.spec = target.spec(curve=engine.name == "curve")
        run.partial.update(name=target.name, claim=claim_of(run.spec))
    if engine.name == "sampling":
        import dpaudit.auditor

        run.outcomes["budget"] = settings.samples or dpaudit.auditor.default_samples(run.spec)
        if getattr(target, "keywords", None) is None or target.rerunnable:
            # known before any stage: a run stopped in the replay stage still says how to rerun it
            run.partial["reproduce"] = engine.reproduce(run)
    for stage in plan.stages:
        stage.run(run)
    return decide(run.outcomes, engine.name, settings, target.given, spec=run.spec,
                  stages=plan.names, library=target.library, computed=target.computed)


def library_runs(specs: list, settings: Any, progress: Any, flags: list[str],
                 in_process_for: Callable[[str], bool]) -> list[Run]:
    """One :class:`Run` per library spec (a ``lib:...`` target can give several), sharing the
    run's confidence among them (Bonferroni) and naming the claim flags the run gave."""
    from dpaudit.pipeline.target import LibraryTarget

    count = len(specs)
    confidence = settings.confidence if count < 2 else 1.0 - (1.0 - settings.confidence) / count
    deadline = None if settings.timeout is None else time.monotonic() + settings.timeout
    runs = []
    for name, spec in specs:
        if settings.float_policy is not None and hasattr(spec, "with_float_policy"):
            spec = spec.with_float_policy(settings.float_policy)  # the run's comes first
        library = getattr(spec, "library", None)
        target = LibraryTarget(given=name, name=name, path=None, isolation="none (in process)",
                               in_process_flag=in_process_for(name), given_flags=tuple(flags),
                               built=spec, library=dict(library) if library else None)
        runs.append(Run(target=target, settings=settings, progress=progress, deadline=deadline,
                        confidence=confidence, family=family(settings, count)))
    return runs
