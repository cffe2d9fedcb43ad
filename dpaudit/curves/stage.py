"""The curve audit in the check pipeline (:mod:`dpaudit.pipeline`): the engine of a target whose
claim is a privacy curve (``--rho``, ``--mu``, or a decorator's ``rho=``/``mu=``/``renyi=``/
``profile=``; an OpenDP measurement whose map is ρ-zCDP), audited by
:func:`dpaudit.curves.curve_audit` on the run's executor (the sandbox child, or Dask, or this
process), within what is left of ``--timeout`` (:meth:`~dpaudit.pipeline.stages.Run.left`:
it stops drawing when that is spent, before the sandbox's own limit, TIMEOUT_GRACE later, would
stop the child).

It is the worked example of adding an engine (docs/ARCHITECTURE.md, "To add X"): this module,
plus one line in :data:`dpaudit.pipeline.plan.ENGINES`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CurveAudit"]


class CurveAudit:
    """The engine for a claim stated as a curve: ``wanted`` when the target states one."""

    name = "curve"

    @classmethod
    def wanted(cls, settings: Any, target: Any) -> bool:
        return bool(target.curve)

    def flags(self, run: Any) -> list[str]:
        from dpaudit.reproduce import number

        curve = run.target.curve
        stated = [f"--{k}={number(v)}" for k, v in curve.items() if k in ("rho", "mu")]
        return [*stated, *run.target.claim_flags(run.spec, point=False)]

    def run(self, run: Any) -> None:
        from dataclasses import replace

        from dpaudit.curves import curve_audit
        from dpaudit.report.model import location
        from dpaudit.reproduce import check_line

        run.begin("curve")
        s, target = run.settings, run.target
        curve = {k: v for k, v in target.curve.items() if k != "library"}
        fitted = _fitted(run)
        samples = s.samples if fitted is None else fitted["budget"]
        result = curve_audit(run.spec, **curve, samples=samples, confidence=run.confidence,
                             seed=s.seed, executor=target.executor or run.cluster,
                             early_stop=s.early_stop, timeout=run.left(), stated_timeout=s.timeout)
        if fitted is not None:  # said after the verdict, as the sampled audit says it
            from dpaudit.auditor import fitted_note

            note = fitted_note(fitted, None)
            said = result.details.note
            result = replace(result, details=replace(result.details,
                                                     note=f"{said}; {note}" if said else note))
        # what the pipeline knows, built into the result: its record is never patched
        run.outcomes[self.name] = replace(
            result, reproduce=check_line(target.name, self.flags(run), seed=s.seed,
                                         samples=samples, confidence=run.confidence,
                                         in_process=target.in_process_flag,
                                         early_stop=s.early_stop, settings=s),
            isolation=target.isolation,
            location=location(run.spec.source) if run.spec.source else None)


def _fitted(run: Any) -> Any:
    """The default budget sized to :data:`dpaudit.auditor.DEFAULT_FIT_SECONDS` when neither
    ``--samples`` nor ``--timeout`` is given and it would take longer (a zCDP curve of an OpenDP
    sum with Gaussian noise ran past 5 minutes at defaults), from a timing probe outside the
    budget (:func:`dpaudit.auditing.estimate.probe_estimate`; its estimate line is shown); None
    otherwise, or when the probe fails (the audit meets the failure itself)."""
    from dpaudit.auditing.estimate import probe_estimate
    from dpaudit.auditor import default_fit, with_fit_hint
    from dpaudit.curves.audit import DEFAULT_SAMPLES_BATCH, DEFAULT_SAMPLES_LOOP
    from dpaudit.errors import MechanismError
    from dpaudit.execution.base import InProcessExecutor
    from dpaudit.spec import CallForm

    s, spec = run.settings, run.spec
    if not s.sizes_by_default:
        return None
    budget = DEFAULT_SAMPLES_BATCH if spec.call_form is CallForm.BATCH else DEFAULT_SAMPLES_LOOP
    executor = run.target.executor or run.cluster or InProcessExecutor()
    try:
        estimate = probe_estimate(spec, executor, s.seed, budget, None)
    except MechanismError:
        return None
    fitted = default_fit(budget, estimate)
    if fitted is not None:
        fitted["by_default"] = True
        run.progress(with_fit_hint(estimate, fitted))
    return fitted
