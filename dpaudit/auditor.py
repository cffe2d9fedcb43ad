"""The public audits: :func:`audit` (sampled, black-box) and :func:`exact_audit` (white-box).

``audit`` returns, at the stated confidence, a lower bound on the ε of the mechanism's worst
neighbouring pair it could find, and REFUTED when the bound exceeds the claim (docs/ARCHITECTURE.md#kinds-of-evidence; the
method is described in :mod:`dpaudit.auditing.sampled`). It never raises for a misbehaving
mechanism: a mechanism that raises, returns NaN or ±inf, or changes its output's type or length
gives an ERROR result naming the cause and the dataset. Invalid arguments raise
:class:`~dpaudit.errors.InvalidArgument` naming the argument and its value.

A result is built once, whole, by the function that knows it: its details are typed
(:class:`~dpaudit.results.SampledDetails`, :class:`~dpaudit.results.ExactDetails`,
:class:`~dpaudit.results.FailureDetails`, each field documented there), and what only the calling
command knows (its reproduce line, the targets sharing the confidence, where the function lives)
comes in as an :class:`~dpaudit.results.AuditContext`.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import Any, Callable, Mapping, Optional

import numpy as np

from dpaudit.claims import privacy_claim
from dpaudit.auditing.estimate import ESTIMATE_BATCH, duration, estimate_event, probe_estimate
from dpaudit.errors import InvalidArgument, MechanismError, TimeLimitReached, UsageError
from dpaudit.execution.base import Executor, InProcessExecutor
from dpaudit.results import (FLOAT, LOGIC, AuditContext, AuditResult, Counterexample, ExactDetails,
                             FailureDetails, Finding, Interval, MechanismFailure, SampledDetails,
                             MARGINAL_P, Strength, ValidatedEvent, ValidationCounts,
                             ValidationSamples, Verdict)
from dpaudit.spec import CallForm, Declaration, MechanismSpec, OutputKind
from dpaudit.validation import (MAX_SAMPLES, MIN_SAMPLES, check_callable, check_confidence,
                                check_count, check_executor, check_records, check_samples,
                                check_seconds, check_seed)

__all__ = ["audit", "exact_audit", "default_samples", "MIN_SAMPLES", "MAX_SAMPLES", "estimate_event",
           "duration", "ESTIMATE_BATCH"]

#: The default sample budgets (mechanism calls) with and without a batch form. The limits of a
#: budget given, :data:`MIN_SAMPLES` and :data:`MAX_SAMPLES`, are :mod:`dpaudit.validation`'s.
DEFAULT_SAMPLES_BATCH = 4_000_000
DEFAULT_SAMPLES_LOOP = 400_000


def default_samples(spec: MechanismSpec) -> int:
    """The budget used when ``samples`` is None: the loop-form budget for a library target too
    (:mod:`dpaudit.adapters`), whose batch form is a loop over the library's calls (0.1 to 1 ms
    each: the batch budget would be 7 to 70 minutes)."""
    if getattr(spec, "library", None):
        return DEFAULT_SAMPLES_LOOP
    return DEFAULT_SAMPLES_BATCH if spec.call_form is CallForm.BATCH else DEFAULT_SAMPLES_LOOP


# ---------------------------------------------------------------------------------- arguments

def _spec(mechanism: Any, overrides: dict) -> MechanismSpec:
    if isinstance(mechanism, MechanismSpec):
        if not overrides:
            return mechanism
        decl = Declaration.make(**overrides)
        spec = mechanism
        if decl.epsilon is not None or decl.delta is not None or \
                (decl.notion is not None and decl.notion.group > 1):
            stated = decl.notion.translate if decl.notion is not None else privacy_claim
            claim = stated(decl.epsilon if decl.epsilon is not None else spec.epsilon,
                           decl.delta if decl.delta is not None else spec.delta)
            spec = spec.with_claim(claim.epsilon, claim.delta)
        changes = {k: getattr(decl, k) for k in ("neighbours", "domain", "size", "log_prob",
                                                 "distribution", "output", "float_policy")
                   if getattr(decl, k) is not None}
        return replace(spec, **changes) if changes else spec
    if not callable(mechanism):
        raise InvalidArgument.bad("mechanism", mechanism, "a MechanismSpec or a callable")
    return MechanismSpec.from_function(mechanism, **overrides)


def _refuse_curve(spec: MechanismSpec, overrides: dict) -> None:
    """A library target whose claim is a curve (an OpenDP ρ-zCDP measurement with no δ given,
    :func:`dpaudit.adapters.opendp.target`) has no point claim to audit: its placeholder is never
    audited, the user is told what to do instead."""
    library = getattr(spec, "library", None)
    curve = library.get("curve") if isinstance(library, Mapping) else None
    if curve and overrides.get("epsilon") is None and overrides.get("delta") is None:
        (key, value), = dict(curve).items()
        raise UsageError(f"{spec.name}: the library states its claim as a curve ({key} = "
                         f"{value!r}): audit it with dpaudit.curve_audit(target), or give the "
                         f"adapter delta= to audit one (ε, δ) point of it")


# ---------------------------------------------------------------------------------- reproduce

def _reproduce(spec: MechanismSpec, samples: int, seed: int, exact: bool = False,
               own_randomness: bool = False, early_stop: bool = True,
               context: Optional[AuditContext] = None, fitted: bool = False,
               cut: bool = False) -> str:
    """The context's line when the calling command writes one, else a command line when the
    mechanism lives in a file, else a Python call (:func:`dpaudit.reproduce.for_spec`; the
    claim's floats round-trip exactly). A budget ``fitted`` to the time limit is passed to the
    context's line as ``samples`` (the command's own budget is the default it replaced); an audit
    the time limit ``cut`` short asks for the limit on the line too."""
    if context is not None and context.reproduce is not None:
        if cut:
            return context.reproduce(own_randomness, samples if fitted else None, True)
        if fitted:
            return context.reproduce(own_randomness, samples)
        return context.reproduce(own_randomness)
    from dpaudit.reproduce import for_spec

    return for_spec(spec, samples=samples, seed=seed, exact=exact, own_randomness=own_randomness,
                    early_stop=early_stop)


def _from_context(context: Optional[AuditContext]) -> dict:
    """The result fields that only the calling command knows."""
    if context is None:
        return {}
    return {"family": context.family, "origin": context.origin, "declared_by": context.declared_by}


# ---------------------------------------------------------------------------------- sampled

def _default_executor(spec: MechanismSpec) -> Optional[Executor]:
    from dpaudit.execution.fork import ForkExecutor, default_workers

    if spec.call_form is not CallForm.BATCH and default_workers() > 1 and ForkExecutor.available():
        return ForkExecutor()
    return None


def audit(mechanism: Any, *, samples: Optional[int] = None, confidence: float = 0.95,
          seed: Optional[int] = None, executor: Optional[Executor] = None,
          progress: Optional[Callable[[dict], None]] = None, timeout: Optional[float] = None,
          early_stop: bool = True, context: Optional[AuditContext] = None,
          **claim_overrides: Any) -> AuditResult:
    """Audit ``mechanism``'s privacy claim by sampling; return a frozen :class:`AuditResult`.

    ``mechanism`` is a :class:`MechanismSpec` or a (decorated) function; ``claim_overrides`` are
    the :func:`dpaudit.mechanism` keywords (epsilon, delta, neighbours, domain, size, output, …).
    ``samples`` is the total number of mechanism calls (default: 4·10⁶ with a batch form, 4·10⁵
    without; the rerun check, :func:`dpaudit.reproduce.reruns_alike`, adds 2·64 calls outside it,
    and the output-width probe, :meth:`dpaudit.auditing.sampler.Sampler.probe_width`, one per look);
    ``confidence`` is family-wise; ``seed`` (recorded) makes the run reproducible;
    ``executor`` runs the batches (default: in process, or all cores for a mechanism without a
    batch form); ``progress(dict)`` receives ``phase``, ``candidate``, ``samples``, ``budget``,
    ``estimate`` (best projected bound so far) and, once validated, ``epsilon_lb`` (and, as each
    early look finishes, phase ``look`` with its record line ``look_done``); ``timeout`` is a
    wall budget in seconds after which the best valid statement so far is returned (calls in
    process stop at it too, :func:`dpaudit.execution.base.time_limit`); with ``samples`` None, a
    default budget that would not fit in it at the measured time per call is reduced to one that
    does before any sample is drawn (:func:`_fitted_budget`; ``details["budget_fitted"]``).
    ``early_stop`` (default) runs the audit as a group-sequential test that stops at the first
    look refuting the claim, the confidence holding under that stopping rule
    (:mod:`dpaudit.auditing.schedule`; ``details["early_stop"]`` records the looks); False
    spends the whole budget at once, for the tightest bound. ``context`` is what a command that
    asks for the audit knows (:class:`~dpaudit.results.AuditContext`: its reproduce line, the
    targets sharing the confidence, where the function lives), built into the result.
    """
    spec, budget, confidence, seed, timeout = _arguments(mechanism, claim_overrides, samples,
                                                         confidence, seed, timeout, progress,
                                                         executor)
    from dpaudit.execution.base import time_limit
    from dpaudit.execution.blas import single_blas_thread

    # the record's time is the command's for the target, its steps before the audit included
    t0 = time.monotonic() if context is None or context.started is None else context.started
    # the checks before the sampling count against ``timeout`` too (a slow mechanism's rerun
    # check alone took 20 s): each gets a share of what is left, the sampling the rest
    deadline = None if timeout is None else time.monotonic() + timeout
    own = None
    if executor is None:
        own = _default_executor(spec)
        executor = own or InProcessExecutor()
    checked = fitted = reproducible = differ = None
    stated = timeout if context is None or context.time_limit is None else context.time_limit
    try:
        estimate, failed = _first_call(spec, executor, seed, budget, progress, context, deadline,
                                       stated)
        if failed is not None:  # the mechanism failed already: no more calls to fail again
            from dpaudit.auditing.sampled import Outcome

            return _sampled_result(spec, Outcome(error=failed), budget, confidence, seed,
                                   time.monotonic() - t0, early_stop=bool(early_stop),
                                   context=context, timeout=stated)
        # in process, calls stop at the deadline too (between calls of a one-call form or of a
        # library's; dpaudit.execution.base.time_limit): --timeout holds within one call
        with single_blas_thread(), time_limit(deadline, stated):
            reproducible = _reruns_alike(spec, executor, seed, estimate, _left(deadline))
            differ = _forms_differ(spec, executor, seed, budget, estimate, _left(deadline))
            if differ is None:
                by_default = deadline is None and context is not None and context.fit_within
                fitted = _fitted_budget(budget, samples, estimate,
                                        context.fit_within if by_default else _left(deadline))
                if fitted is not None:
                    budget = fitted["budget"]
                    fitted["by_default"] = bool(by_default)
                out, looks, checked = _sample(spec, executor, samples, budget, confidence, seed,
                                              reproducible, estimate, deadline, progress,
                                              bool(early_stop))
    finally:
        if own is not None:
            own.close()
    if differ is None and checked is not None and checked.message is not None:
        differ = (checked.message, checked.data)  # noise from elsewhere later in the run
    if differ is not None:
        return _forms_result(spec, differ, budget, confidence, seed, time.monotonic() - t0,
                             reproducible, bool(early_stop), context)
    return _sampled_result(spec, out, budget, confidence, seed, time.monotonic() - t0, reproducible,
                           looks, bool(early_stop), context, estimate=estimate, timeout=stated,
                           fitted=fitted)


def _arguments(mechanism: Any, claim_overrides: dict, samples: Optional[int], confidence: float,
               seed: Optional[int], timeout: Optional[float], progress: Any,
               executor: Any) -> tuple:
    """:func:`audit`'s arguments checked (one clear error for a bad one): ``(spec, budget,
    confidence, seed, timeout)``."""
    spec = _spec(mechanism, claim_overrides)
    _refuse_curve(spec, claim_overrides)
    budget = check_samples(samples) or default_samples(spec)
    check_callable("progress", progress)
    check_records(spec.size, spec.neighbours)
    check_executor(executor)
    return (spec, budget, check_confidence(confidence), check_seed(seed),
            check_seconds(timeout, "timeout"))


def _first_call(spec: MechanismSpec, executor: Executor, seed: int, budget: int,
                progress: Optional[Callable[[dict], None]], context: Optional[AuditContext],
                deadline: Optional[float], stated: Optional[float]) -> tuple:
    """``(estimate, failure)``: the timing probe (:func:`probe_estimate`) under the run's time
    limit, or the mechanism's failure in it, or the failure a command met before the audit
    (``context.failure``, with no call made here)."""
    from dpaudit.execution.base import time_limit
    from dpaudit.execution.blas import single_blas_thread

    if context is not None and context.failure is not None:
        return None, context.failure
    try:
        with single_blas_thread(), time_limit(deadline, stated):
            return probe_estimate(spec, executor, seed, budget, progress, context), None
    except MechanismError as exc:
        return None, exc


#: the share of the time left that each check before the sampling may take at most
_CHECK_SHARE = 0.2


def _left(deadline: Optional[float]) -> Optional[float]:
    return None if deadline is None else max(0.001, deadline - time.monotonic())


def _fitting(n: int, estimate: Optional[dict], left: Optional[float], least: int) -> int:
    """``n`` calls, or fewer (``least`` at most) when ``n`` would take more than
    :data:`_CHECK_SHARE` of the ``left`` seconds at the estimate's time per call."""
    if left is None or estimate is None or not estimate["seconds_per_call"] > 0:
        return n
    return int(min(n, max(least, _CHECK_SHARE * left / estimate["seconds_per_call"])))


#: the share of the time left for sampling that a budget sized to the time per call fills
#: (:func:`_fitted_budget`); the rest is dpaudit's own work between the draws (the search, the
#: race, counting the validation samples, the checkpoints' calls) and the estimate's error
FIT_SHARE = 0.5


def _fitted_budget(budget: int, given: Optional[int], estimate: Optional[dict],
                   left: Optional[float]) -> Optional[dict]:
    """The default budget sized to the time limit, or None when it is kept.

    When no budget was given (``given`` is None) and the estimate says the default budget would
    take more than :data:`FIT_SHARE` of the ``left`` seconds, the budget becomes
    n = ⌊FIT_SHARE · left / t⌋ calls (t the estimate's seconds per call over the executor's
    workers), rounded down to a multiple of 1,000: a budget the time limit can hold, so the audit
    ends with a verdict on what it could test (the NOT REFUTED line says what that budget could
    refute, :class:`dpaudit.estimators.limits.Limits`) rather than INCONCLUSIVE at the limit.
    It is chosen from the timing probe alone, before any sample of the audit is drawn, and the
    look schedule (:func:`dpaudit.auditing.schedule.schedule`) is that of the fitted budget,
    fixed in advance like any other: the outcomes choose nothing, so the family-wise confidence
    holds as for a budget the user gave. The reproduce line carries the fitted budget
    (``--samples n``), so the run reruns exactly from its seed whatever the machine's speed.
    A fit below :data:`dpaudit.validation.MIN_SAMPLES` calls is not made (an audit that small
    tells nothing): the audit runs to the limit and is INCONCLUSIVE with the estimate."""
    from dpaudit.validation import MIN_SAMPLES

    if given is not None or left is None or estimate is None:
        return None
    took = float(estimate.get("estimated_seconds") or 0.0)
    if not took > FIT_SHARE * left:
        return None
    n = int(budget * FIT_SHARE * left / took) // 1000 * 1000
    if n < MIN_SAMPLES or n >= budget:
        return None
    return {"default": int(budget), "budget": n, "seconds_per_call": estimate["seconds_per_call"],
            "seconds_left": round(float(left), 3), "estimated_seconds": took}


def _sample(spec: MechanismSpec, executor: Executor, samples: Optional[int], budget: int,
            confidence: float, seed: int, reproducible: Optional[bool], estimate: Optional[dict],
            deadline: Optional[float], progress: Optional[Callable], early_stop: bool) -> tuple:
    """``(outcome, looks record, checkpoints)`` of the sampled audit's looks
    (:func:`dpaudit.auditing.looks.run`), on independent workers and under the checkpoints; or,
    when even its smallest run cannot fit the time left (:func:`_cannot_fit`), an outcome cut by
    the time limit at once, with no sample drawn."""
    from dpaudit.auditing.looks import run as run_looks

    hopeless = _cannot_fit(samples, estimate, _left(deadline))
    if hopeless is not None:  # stop now, not at the limit (the note says why)
        from dpaudit.auditing.sampled import Outcome

        return Outcome(error=hopeless), None, None
    executor = _independent(executor, reproducible)
    checked = _checkpoints(spec, executor, seed, budget, reproducible, estimate, _left(deadline))
    out, looks = run_looks(spec, checked or executor, budget=budget, confidence=confidence,
                           seed=seed, timeout=_left(deadline), progress=progress,
                           early_stop=early_stop)
    return out, looks, checked


#: the smallest audit is given up before it starts when it needs more than this many times the
#: time left (at the time per call the probe measured, and the share of the time calls may fill)
HOPELESS = 2.0


def _cannot_fit(given: Optional[int], estimate: Optional[dict],
                left: Optional[float]) -> Optional[TimeLimitReached]:
    """A time limit reached before it is spent, or None: with no budget given, when even the
    smallest audit (:data:`dpaudit.validation.MIN_SAMPLES` calls, filling :data:`FIT_SHARE` of
    the time) needs more than :data:`HOPELESS` times the time left. An OpenDP Context query
    built in every call (0.7 s a call) spent a whole ``--timeout 300`` on an audit that needed 23
    minutes to decide anything, and ended INCONCLUSIVE with the advice it could have given at
    once. With ``--samples`` given, the audit runs to the limit and keeps what it validated."""
    from dpaudit.validation import MIN_SAMPLES

    if given is not None or left is None or estimate is None:
        return None
    per_call = float(estimate.get("seconds_per_call") or 0.0)
    if not per_call > 0 or MIN_SAMPLES * per_call / FIT_SHARE <= HOPELESS * left:
        return None
    cut = TimeLimitReached("could not finish even the smallest audit in the time left")
    cut.stalled = (f"stopped before sampling: at {per_call:.3g} s per call the smallest audit "
                   f"needs about {duration(MIN_SAMPLES * per_call / FIT_SHARE)}, more than "
                   f"{HOPELESS:g}× the {duration(left)} left")
    return cut


#: ``dpaudit check`` with neither ``--samples`` nor ``--timeout``: a default budget that would take
#: longer than this (seconds, at the measured time per call) is sized to it, as a time limit would
#: size it (:func:`_fitted_budget`), with no deadline set. A 50 ms call (an OpenDP Polars plan, a
#: query built per call) made the default 400,000 calls an audit of hours: no verdict at defaults
DEFAULT_FIT_SECONDS = 600.0


def default_fit(budget: int, estimate: Optional[dict]) -> Optional[dict]:
    """The default budget sized to :data:`DEFAULT_FIT_SECONDS` (:func:`_fitted_budget`) for an
    ``estimate`` event, or None when it fits: what a ``dpaudit check`` with neither
    ``--samples`` nor ``--timeout`` will draw (its estimate line says so before the audit)."""
    return _fitted_budget(budget, None, estimate, DEFAULT_FIT_SECONDS)


def with_fit_hint(event: dict, fitted: dict) -> dict:
    """The ``estimate`` event ``event`` saying first that a ``dpaudit check`` with neither
    ``--samples`` nor ``--timeout`` draws the ``fitted`` budget (:func:`default_fit`)."""
    said = (f"with neither --samples nor --timeout the audit is sized to about "
            f"{duration(DEFAULT_FIT_SECONDS)}, its calls to {FIT_SHARE:.0%} of that: "
            f"{fitted['budget']:,} calls")
    return {**event, "hint": f"{said}; {event['hint']}" if event.get("hint") else said}


def fitted_note(fitted: dict, timeout: Optional[float]) -> str:
    """What an audit on a fitted budget says after its verdict."""
    limit = "the time limit" if timeout is None else f"the time limit of {timeout:.3g} s"
    if fitted.get("by_default"):
        limit = (f"dpaudit check's default of {duration(fitted['seconds_left'])} with neither "
                 f"--samples nor --timeout")
    return (f"budget reduced to {fitted['budget']:,} calls to fit {limit} (the default "
            f"{fitted['default']:,} would take about {duration(fitted['estimated_seconds'])} at "
            f"{fitted['seconds_per_call']:.3g} s per call, more than the {FIT_SHARE:.0%} of the "
            f"time the calls may fill: the rest is the audit's own work); --samples N sets it"
            + (", --timeout S sizes it to S" if fitted.get("by_default") else ""))


def _reruns_alike(spec: MechanismSpec, executor: Executor, seed: int,
                  estimate: Optional[dict] = None, left: Optional[float] = None) -> Optional[bool]:
    """:func:`dpaudit.reproduce.reruns_alike` (the rerun check), None when the mechanism fails
    (the audit reports it). A slow mechanism is checked on fewer calls (at least 4, about 20 s of
    them), and on fewer still (at least 1) when 2·n calls would take more than a share of the
    ``left`` seconds."""
    from dpaudit.reproduce import RERUN_CHECK_CALLS, reruns_alike

    n = RERUN_CHECK_CALLS
    if estimate is not None and estimate["seconds_per_call"] > 0:
        n = int(min(n, max(4, 10.0 / estimate["seconds_per_call"])))
    n = _fitting(2 * n, estimate, left, 2) // 2  # two batches of n
    try:
        return reruns_alike(spec, executor, seed, n=n)
    except MechanismError:
        return None


def _checkpoints(spec: MechanismSpec, executor: Executor, seed: int, budget: int,
                 reproducible: Optional[bool], estimate: Optional[dict],
                 left: Optional[float] = None) -> Any:
    """The executor to sample with, wrapped in :class:`dpaudit.execution.honesty.Checkpoints`
    (the same calls on one seed drawn again at positions spread over the run) when the
    mechanism takes an rng and its outputs were a function of it at the start; else None. Its
    (CHECKPOINTS + 1)·n calls take a share of the ``left`` seconds at most (n ≥ 2)."""
    from dpaudit.execution.honesty import CHECKPOINT_CALLS, CHECKPOINTS, Checkpoints

    if reproducible is not True or spec.call_form is CallForm.DATA:
        return None
    n = CHECKPOINT_CALLS
    if estimate is not None and estimate["seconds_per_call"] > 0:
        n = int(min(n, max(2, 2.0 / estimate["seconds_per_call"])))
    n = _fitting((CHECKPOINTS + 1) * n, estimate, left, (CHECKPOINTS + 1) * 2) // (CHECKPOINTS + 1)
    try:
        return Checkpoints(executor, spec, seed, budget, n=n)
    except MechanismError:
        return None


def _forms_differ(spec: MechanismSpec, executor: Executor, seed: int, budget: int,
                  estimate: Optional[dict] = None, left: Optional[float] = None) -> Optional[tuple]:
    """:func:`dpaudit.execution.honesty.forms_differ`: whether the one-call form ``f(data, rng)``
    of a batch-form mechanism releases another law than the batch form the audit samples; None
    when it does not, or when the mechanism fails (the audit reports it). Its 2·n calls take a
    share of the ``left`` seconds at most (at the batch form's time per call, the one known)."""
    from dpaudit.execution.honesty import form_samples, forms_differ

    try:
        return forms_differ(spec, executor, seed, n=_fitting(2 * form_samples(budget), estimate,
                                                             left, 4) // 2)
    except MechanismError:
        return None


def _forms_result(spec: MechanismSpec, differ: tuple, budget: int, confidence: float, seed: int,
                  elapsed: float, reproducible: Optional[bool], early_stop: bool,
                  context: Optional[AuditContext] = None) -> AuditResult:
    """The ERROR of a batch form that is not the one-call form: the audit of the batch form would
    say nothing about the function users call."""
    message, data = differ
    return AuditResult(target=spec.name, claim=spec.claim, neighbours=spec.neighbours,
                       verdict=Verdict.ERROR, epsilon_lower_bound=None, delta_lower_bound=None,
                       counterexample=None, confidence=confidence, samples=0,
                       # an ERROR has no bound: no note that one "stays valid" on its rerun line
                       reproduce=_reproduce(spec, budget, seed, early_stop=early_stop,
                                            context=context),
                       elapsed_s=elapsed, error=message, seed=seed, reproducible=reproducible,
                       domain=spec.domain, size=spec.size,
                       details=FailureDetails(MechanismFailure(list(data))), **_from_context(context))


def _independent(executor: Executor, reproducible: Optional[bool]) -> Executor:
    """The executor to sample with. A mechanism that draws its own randomness (a global or
    library-internal generator, not the rng it is given) runs in one process, not a fork pool:
    forked workers start from copies of one generator state and draw the same numbers (python-dp
    repeated about 1% of its noise across two workers), so the samples would not be the
    independent draws every bound assumes. Other executors start their processes apart."""
    from dpaudit.execution.fork import ForkExecutor

    if reproducible is False and isinstance(executor, ForkExecutor) and executor.workers > 1:
        return InProcessExecutor()
    return executor


def _strength(spec: MechanismSpec, ans: Any, confidence: float, refuted: bool) -> Strength:
    """The p-value, margin and power of a validated answer (:mod:`dpaudit.estimators.strength`):
    the p-value is family-wise over the run's α, whatever share of it the answer had."""
    from dpaudit.estimators import strength

    b, choice = ans.bound, ans.candidate.choice
    if b.method == "betting":  # the betting look's wealth, not counts, is its evidence
        from dpaudit.auditing.betting import p_value

        p = p_value(b, 1.0 - confidence)
        return Strength(p_value=p, margin=b.epsilon_lb / spec.epsilon if spec.epsilon > 0 else None,
                        marginal=bool(refuted and p > MARGINAL_P), power=None)
    split = choice.split if b.method == choice.method else (0.5, 0.5)
    k = (1.0 - confidence) / b.alpha  # the Bonferroni factor the run used
    return Strength.of(strength.grade(b.method, ans.counts, split, b.alpha, k, spec.epsilon,
                                      spec.delta, b.epsilon_lb, refuted))


#: why a float64 question got no event: the bits of outputs on one grid say nothing new
_NO_FLOAT_EVENT = ("no float-structure event: every output lies on one grid coarser than its "
                   "ulp (integers or a snapping grid), so its bits say nothing its value does not")


def _time_limit_note(timeout: Optional[float], estimate: Optional[dict]) -> str:
    """What an audit cut short by ``--timeout`` says: the limit, the estimate, what would help."""
    limit = "the time limit" if timeout is None else f"the time limit of {timeout:.3g} s"
    text = f"{limit} was reached before a verdict"
    if estimate is not None:
        text += (f"; each call takes about {estimate['seconds_per_call']:.3g} s, so the budget of "
                 f"{estimate['calls']:,} calls would take about "
                 f"{duration(estimate['estimated_seconds'])}")
        if timeout is not None and estimate.get("seconds_per_call"):
            from dpaudit.validation import MIN_SAMPLES

            # the smallest audit a fitted budget makes (_fitted_budget), with the share of the
            # time it may fill: a limit under that only ever ends here
            need = MIN_SAMPLES * float(estimate["seconds_per_call"]) / FIT_SHARE
            if need > timeout:
                text += (f"; the smallest audit ({MIN_SAMPLES:,} calls) needs a --timeout of about "
                         f"{duration(need)} or more at this speed")
        if estimate.get("hint"):
            text += f"; {estimate['hint']}"
    return text


def _finding(spec: MechanismSpec, out: Any, ans: Any, confidence: float,
             cut: Optional[str] = None) -> Finding:
    """One question's :class:`~dpaudit.results.Finding` from its :class:`~dpaudit.auditing.sampled.Answer` (``cut``: why a
    time limit left it without a bound)."""
    from dpaudit.estimators.strength import no_evidence

    if ans.absent is not None:
        return Finding.absent(ans.question, ans.absent)
    common = dict(question=ans.question, alpha=ans.alpha, limits=_limits(spec, out, ans))
    if ans.bound is None:
        vacuous = None if ans.timed_out else (_reach_text(spec, common["limits"]) or _all_distinct(out))
        verdict = Verdict.INCONCLUSIVE if ans.timed_out or vacuous else Verdict.NOT_REFUTED
        reason = vacuous or (_NO_FLOAT_EVENT if ans.question == FLOAT and ans.candidate is None else None)
        return Finding(verdict=verdict, epsilon_lower_bound=0.0, delta_lower_bound=None,
                       counterexample=None, strength=Strength.of(no_evidence()), details={},
                       reason=(cut if ans.timed_out else reason), **common)
    b, cand, counts = ans.bound, ans.candidate, ans.counts
    choice = cand.choice
    pair = cand.pair if choice.numerator == 0 else cand.pair.swapped()
    event = choice.event.to_record(_decoder(out))
    _note_nonfinite(event, ans.kept, mixed=out.schema is not None and out.schema.kind.value == "mixed",
                    others=sorted(getattr(out.encoder, "other_forms", ()) or ()))
    _note_porosity(event, counts)
    cx = Counterexample(*pair.tuples(), event, b.p, b.q,
                        Interval(*b.p_interval), Interval(*b.q_interval))
    samples = None
    if ans.kept and out.schema is not None and out.schema.ordered and out.schema.kind.value != "vector":
        finite = lambda xs: [v for v in xs if math.isfinite(v)]  # noqa: E731  (plots show numbers)
        samples = ValidationSamples(finite(ans.kept[0]), finite(ans.kept[1]))
    validated = ValidatedEvent(
        bound_method=b.method, alpha=b.alpha, pair_label=cand.pair.label,
        projected_bound=choice.projected,
        validation=ValidationCounts(n_D=counts.n_num, n_D_prime=counts.n_den, in_event_D=counts.x,
                                    in_event_D_prime=counts.y, both=counts.a,
                                    design=("betting" if b.method == "betting" else
                                            "paired" if counts.paired else "independent")),
        event_thresholds=sorted({float(v) for v in (event.get("threshold"), event.get("lo"),
                                                    event.get("hi"))
                                 if v is not None and np.isfinite(v)}),
        samples=samples, bound_curve=choice.curve)
    refuted = b.epsilon_lb > spec.epsilon
    vacuous = None if refuted else _reach_text(spec, common["limits"])
    return Finding(verdict=(Verdict.REFUTED if refuted else Verdict.INCONCLUSIVE if vacuous
                            else Verdict.NOT_REFUTED), reason=vacuous,
                   epsilon_lower_bound=b.epsilon_lb,
                   delta_lower_bound=max(0.0, b.delta_lb) if spec.delta > 0 else None,
                   counterexample=cx, strength=_strength(spec, ans, confidence, refuted),
                   details=validated,
                   samples=ans.drawn if ans.drawn is not None else counts.n_num + counts.n_den,
                   **common)


def _limits(spec: MechanismSpec, out: Any, ans: Any) -> Any:
    """The ε ceiling (at the claimed δ) and δ floor of an answer's budget
    (:mod:`dpaudit.estimators.limits`): of the bound actually used on its validation counts, at
    its per-candidate level; with nothing validated, of the marginal bound as if the run's samples
    had all been validated at the question's level (basis ``"budget"``: an upper estimate of what
    the run could show). With ``reach`` when no outcome of these counts could have refuted the
    claim (:func:`~dpaudit.estimators.limits.point_reach`: every method and split the selection
    could choose, at the largest validation size of the candidates counted)."""
    from dpaudit.estimators.limits import limits_of, point_reach

    b, counts = ans.bound, ans.counts
    if b is not None and b.method == "betting":
        return None  # a wealth, not counts at a level: no ceiling or floor of a count to state
    if b is not None and counts is not None:
        choice = ans.candidate.choice
        split = choice.split if b.method == choice.method else (0.5, 0.5)
        largest = max(ans.largest_n, counts.n_num, counts.n_den)
        reach = point_reach(largest, b.alpha, spec.epsilon, int(out.samples), spec.delta)
        return limits_of(b.method, counts.n_num, counts.n_den, b.alpha, spec.epsilon, split,
                         counts.lam_num, counts.lam_den, reach=reach, delta=spec.delta)
    n = int(out.samples) // 2
    if n <= 0 or not 0 < ans.alpha < 1:
        return None
    reach = point_reach(n, ans.alpha, spec.epsilon, int(out.samples), spec.delta)
    return limits_of("marginal", n, n, ans.alpha, spec.epsilon, basis="budget", reach=reach,
                     delta=spec.delta)


#: unordered outputs of more categories than this share of the outputs drawn (the race draws a
#: seed more than once, so a category seen once per seed still repeats) and than MANY_CATEGORIES
DISTINCT_SHARE = 0.1
MANY_CATEGORIES = 100


def _all_distinct(out: Any) -> Optional[str]:
    """Why an audit of unordered outputs that validated no event says nothing (INCONCLUSIVE), or
    None: when the outputs are many categories, nearly each seen once (random bytes or letters
    before the released data: each output a category of its own, and the whole dataset in the
    clear, was NOT REFUTED with no event found, a hostile review), no event of categories can be
    chosen, so the audit saw nothing. One category (a constant output) stays NOT REFUTED."""
    enc, schema = getattr(out, "encoder", None), getattr(out, "schema", None)
    if enc is None or schema is None or schema.ordered or schema.kind is not OutputKind.DISCRETE:
        return None
    seen, n = enc.categories, enc.encoded
    if seen <= max(MANY_CATEGORIES, DISTINCT_SHARE * n):
        return None
    return (f"it found no event: its {n:,} outputs were {seen:,} distinct categories, too many seen "
            f"too few times for any event of categories to be chosen, so the audit saw nothing of "
            f"this release; give the output a form whose equal releases repeat (numbers, or texts "
            f"of digits, which are read as numbers)")


def _reach_text(spec: MechanismSpec, limits: Any) -> Optional[str]:
    """Why the run could not have refuted the claim (out of its reach), or None."""
    reach = None if limits is None else limits.reach
    if reach is None:
        return None
    at = f" at δ = {spec.delta:g}" if spec.delta > 0 else ""
    if limits.basis == "budget":
        what = (f"it validated no event, and all its {reach.samples:,} samples as validation could "
                f"show ε above {reach.ceiling:.3g}{at} at most, whatever the outputs")
    else:
        what = (f"the events it validated could show ε above {reach.ceiling:.3g}{at} at most at their "
                f"sample sizes and level, whatever the outputs")
    return reach.text(f"{what} (the claim is ε = {spec.epsilon:g})")


def decide(findings: Mapping[str, Finding], policy: str) -> tuple[Verdict, str]:
    """The overall verdict under the float ``policy``, and the question it comes from: a logic
    refutation first; a float64 refutation refutes under ``"error"`` only (under ``"warn"`` it
    is reported and the verdict is the logic's)."""
    logic, flt = findings[LOGIC], findings.get(FLOAT)
    if logic.verdict is Verdict.ERROR or logic.refuted:
        return logic.verdict, LOGIC
    if flt is not None and flt.refuted and policy == "error":
        return Verdict.REFUTED, FLOAT
    return logic.verdict, LOGIC


def _sampled_result(spec: MechanismSpec, out: Any, budget: int, confidence: float, seed: int,
                    elapsed: float, reproducible: Optional[bool] = None,
                    looks: Optional[dict] = None, early_stop: bool = True,
                    context: Optional[AuditContext] = None, estimate: Optional[dict] = None,
                    timeout: Optional[float] = None,
                    fitted: Optional[dict] = None) -> AuditResult:
    from dpaudit.auditing.sampled import Answer, questions_of, share_of

    cut = None
    if isinstance(out.error, TimeLimitReached):  # the user's limit, not the mechanism's fault
        stalled = out.error.stalled  # (not its dataset: the first of the batch in flight)
        out.error, out.timed_out = None, True
        cut = _time_limit_note(timeout, estimate)
        if stalled:
            cut += f"; {stalled}"
        asked = questions_of(spec)
        for q in asked:
            if q not in out.answers:
                out.answers[q] = Answer(q, alpha=share_of(q, asked, 1.0 - confidence), timed_out=True)
    note = cut
    if fitted is not None:
        note = fitted_note(fitted, timeout) + (f"; {cut}" if cut else "")
    seen = dict(phases=out.phases, timed_out=bool(out.timed_out),
                candidates_validated=out.validated, early_stop=looks,
                output_kind=None if out.schema is None else out.schema.description, note=note,
                budget_fitted=fitted)
    reproduce = _reproduce(spec, budget, seed, own_randomness=reproducible is False,
                           early_stop=early_stop, context=context, fitted=fitted is not None,
                           cut=bool(out.timed_out))
    common = dict(target=spec.name, claim=spec.claim, neighbours=spec.neighbours,
                  confidence=confidence, samples=int(out.samples), reproduce=reproduce,
                  elapsed_s=elapsed, seed=seed, reproducible=reproducible, domain=spec.domain,
                  size=spec.size, float_policy=spec.float_policy, **_from_context(context))
    findings = {q: _finding(spec, out, ans, confidence, cut) for q, ans in out.answers.items()}
    if out.error is not None:
        exc = out.error
        failure = MechanismFailure(
            None if exc.dataset is None else np.asarray(exc.dataset).tolist(),
            None if exc.output is None else repr(exc.output)[:200])
        # what a look answered before the failure is kept; the rest failed with the mechanism
        for q in questions_of(spec):
            if q not in findings or findings[q].verdict is not Verdict.REFUTED:
                findings[q] = Finding(verdict=Verdict.ERROR, epsilon_lower_bound=None,
                                      delta_lower_bound=None, counterexample=None, strength=None,
                                      details={}, error=str(exc), question=q)
        if FLOAT not in findings:
            findings[FLOAT] = Finding.absent(FLOAT, _NOT_ASKED)
        return AuditResult(verdict=Verdict.ERROR, epsilon_lower_bound=None, delta_lower_bound=None,
                           counterexample=None, error=str(exc),
                           details=SampledDetails(**seen, failure=failure),
                           answers=_ordered(findings), **common)
    _value_through_sign(findings)
    if LOGIC not in findings:  # nothing was asked of the outputs (cannot happen: logic always is)
        findings[LOGIC] = _finding(spec, out, Answer(LOGIC, alpha=1.0 - confidence), confidence)
    if FLOAT not in findings:
        findings[FLOAT] = Finding.absent(FLOAT, _NOT_ASKED)
    verdict, decided = decide(findings, spec.float_policy)
    top = findings[decided]
    validated = top.details if isinstance(top.details, ValidatedEvent) else None
    return AuditResult(verdict=verdict, epsilon_lower_bound=top.epsilon_lower_bound,
                       delta_lower_bound=top.delta_lower_bound, counterexample=top.counterexample,
                       details=SampledDetails(**seen, validated=validated), strength=top.strength,
                       answers=_ordered(findings), decided_by=decided, limits=top.limits, **common)


def _value_through_sign(findings: dict) -> None:
    """A float64 finding on outputs that lie on one grid tests the sign of a zero only (the
    ``signed`` cells of :mod:`dpaudit.estimators.floats`). When its event, a zero of one sign,
    occurs on both datasets, its ratio is that of the value zero (np.round(x + noise) gives −0.0
    exactly when x + noise is just below 0): the logic's to judge, not a porosity. Where the
    logic finding refutes the claim too, such a float64 "refutation" is the logic seen through
    the sign bit, and the float64 finding says so instead (the claim stays refuted, by the
    logic); alone, it stands (a sound refutation, whatever its cause)."""
    flt, logic = findings.get(FLOAT), findings.get(LOGIC)
    if flt is None or logic is None or not (flt.refuted and logic.refuted):
        return
    cx = flt.counterexample
    event = {} if cx is None else cx.event
    counts = flt.details.get("validation") if isinstance(flt.details, ValidatedEvent) else None
    if event.get("family") != "signed" or counts is None or not counts["in_event_D_prime"]:
        return
    findings[FLOAT] = replace(flt, verdict=Verdict.NOT_REFUTED, reason=(
        f"the zero of one sign occurs on both datasets ({counts['in_event_D'] / counts['n_D']:.2%} "
        f"and {counts['in_event_D_prime'] / counts['n_D_prime']:.2%}): its ratio is the value "
        f"zero's, which the logic finding refutes; no porosity (outputs on one grid)"))


#: the float64 finding of an audit under ``float = "off"``
_NOT_ASKED = "not asked: the float policy is off (the mechanism is audited as a model over the reals)"


def _ordered(findings: dict) -> dict:
    """The findings, logic first."""
    return {q: findings[q] for q in (LOGIC, FLOAT) if q in findings}


def _note_nonfinite(event: dict, kept: Any, mixed: bool = False, others: Any = ()) -> None:
    """Say "non-finite output" in the event when the validation outputs kept for the report show
    NaN or ±inf on one dataset more often than on the other (NaN and ±inf are outputs). Rows of
    ``mixed`` outputs (:mod:`dpaudit.outputs`) use NaN for an absent element: only ±inf counts.
    An output of another type than the usual one is encoded as NaN too (``others``: the types
    met; a library returned a Python ``float`` where its other outputs were ``numpy.float64``),
    and the text then says so: the type is released with the value."""
    if not kept:
        return
    names = ("D", "D′")
    shares = []
    for side in (0, 1):
        try:
            v = np.asarray(kept[side], dtype=float)
        except (TypeError, ValueError):
            return
        bad = np.isinf(v) if mixed else ~np.isfinite(v)
        shares.append(float(np.mean(bad.reshape(v.shape[0], -1).any(axis=1))) if v.size else 0.0)
    if shares[0] == shares[1]:
        return
    # kept[0] holds the numerator dataset's outputs; D is the counterexample's dataset
    k = 0 if shares[0] > shares[1] else 1
    who = names[k]
    event["nonfinite"] = {"D": shares[0], "D_prime": shares[1]}
    if others:
        event["other_types"] = list(others)
        cells = event.get("cells") if isinstance(event.get("cells"), list) else []
        if event.get("kind") == "float-structure" and cells \
                and all("(non-finite output)" in str(c) for c in cells):
            event["reason"] = "output-type"  # the NaN cell holds the outputs of another type
            said = f"output of another type ({', '.join(others)}) or NaN"
            event["cells"] = [str(c).replace("output is NaN (non-finite output)", said) for c in cells]
            event["text"] = str(event["text"]).replace("output is NaN (non-finite output)", said)
            event["text"] = (f"{event['text']} ({shares[k]:.1%} of the outputs on {who}, "
                             f"{shares[1 - k]:.1%} on {names[1 - k]}: the type is released with the value)")
            return
        event["text"] = (f"{event['text']} (an output of another type ({', '.join(others)}): "
                         f"{shares[k]:.1%} of the outputs on {who}, {shares[1 - k]:.1%} on "
                         f"{names[1 - k]}, counted with any NaN or ±inf; the type is released with "
                         f"the value)")
        return
    event["text"] = (f"{event['text']} (non-finite output: NaN or ±inf in {shares[k]:.1%} of the "
                     f"outputs on {who}, {shares[1 - k]:.1%} on {names[1 - k]})")


def _share(k: int, n: float) -> str:
    return "never" if k == 0 else f"{k / n:.2%}"


def _note_porosity(event: dict, counts: Any) -> None:
    """Say why a float-structure event separates D from D′, with its validation rates: the doubles
    that x + noise can produce differ between x and x′, so some outputs are possible on one dataset
    and (nearly) impossible on the other (only the rates where the event is no more frequent on D:
    an always-NaN output's event holds 100% on both) (Mironov, "On significance of the least significant bits
    for differential privacy", CCS 2012; README "Floating point")."""
    if event.get("reason") not in ("porosity", "signed-zero", "hidden-bit") or not counts.n_num \
            or not counts.n_den:
        return
    on_d, on_dp = _share(counts.x, counts.n_num), _share(counts.y, counts.n_den)
    if event["reason"] == "hidden-bit":
        event["text"] = (f"{event['text']} (a hidden bit: {on_d} of the outputs on D, {on_dp} on "
                         f"D′; given the bits above it, a mantissa bit is noise in an honest "
                         f"implementation, and here it depends on the data)")
        return
    if event["reason"] == "signed-zero":
        event["text"] = (f"{event['text']} (signed zero: {on_d} of the outputs on D, {on_dp} on D′; "
                         f"+0.0 and −0.0 compare equal but are different doubles, and the sign bit "
                         f"is released with the value)")
        return
    if counts.x * counts.n_den <= counts.y * counts.n_num:  # no more often on D: nothing to explain
        event["text"] = f"{event['text']} ({on_d} of the outputs on D, {on_dp} on D′)"
        return
    event["text"] = (f"{event['text']} (porosity: {on_d} of the outputs on D, {on_dp} on D′; float64 "
                     f"rounding leaves different sets of doubles reachable from D and D′, Mironov 2012)")


def _decoder(out: Any) -> Callable[[float], Any]:
    enc = out.encoder
    return (lambda v: v) if enc is None else enc.atom


# ---------------------------------------------------------------------------------- exact

def exact_audit(mechanism: Any, *, seed: Optional[int] = None, examples: int = 200,
                **claim_overrides: Any) -> AuditResult:
    """Audit a mechanism with an exact output law: the exact loss sup_y |ln p_D(y) − ln p_D'(y)|
    and the exact δ(ε) of the worst pair found (:mod:`dpaudit.auditing.exact_search`).

    Needs ``distribution`` (a dpaudit law or a frozen scipy distribution) or ``log_prob`` on the
    spec. ``method="exact"``, ``confidence=1``; REFUTED when the loss exceeds ε (pure claims) or
    δ(ε) exceeds δ; otherwise NOT REFUTED (the search covers pairs, it proves nothing).
    """
    spec = _spec(mechanism, claim_overrides)
    seed = check_seed(seed)
    examples = check_count(examples, "examples")
    if not spec.exact:
        raise InvalidArgument.bad("mechanism", spec.name,
                                  "a spec with distribution= or log_prob= for an exact audit")
    check_records(spec.size, spec.neighbours)
    from dpaudit.auditing.exact_search import ExactObjective, search_exact

    t0 = time.monotonic()
    common = dict(target=spec.name, claim=spec.claim, neighbours=spec.neighbours, confidence=1.0,
                  samples=0, reproduce=_reproduce(spec, 0, seed, exact=True), method="exact",
                  seed=seed, domain=spec.domain, size=spec.size, float_policy=spec.float_policy)
    try:
        obj = ExactObjective(spec, seed)
        found = search_exact(spec, seed=seed, examples=examples, objective=obj)
        result = _exact_result(spec, obj, found, common, time.monotonic() - t0)
    except MechanismError as exc:
        failure = MechanismFailure(None if exc.dataset is None else np.asarray(exc.dataset).tolist())
        return AuditResult(verdict=Verdict.ERROR, epsilon_lower_bound=None, delta_lower_bound=None,
                           counterexample=None, elapsed_s=time.monotonic() - t0, error=str(exc),
                           details=FailureDetails(failure), **common)
    return result


def _exact_result(spec: MechanismSpec, obj: Any, found: Any, common: dict, elapsed: float) -> AuditResult:
    from dpaudit.estimators.exact import level_set

    pair = found.pair
    loss, witness = obj.loss(pair)
    eps, delta = spec.epsilon, spec.delta
    tol = 1e-9 * max(1.0, eps)
    cx = None
    delta_claim = note = None
    if obj.by_law:
        P, Q = obj.laws(pair)
        delta_claim = obj.delta(pair, eps, exact=True)
        refuted = delta_claim > delta + 1e-12 if delta > 0 else loss > eps + tol
        # the event: where the loss beats the claim (violations), else where it is attained
        best = None
        for num, (A, B) in enumerate(((P, Q), (Q, P))):
            ls = level_set(A, B, eps) if refuted else level_set(A, B, loss - tol, inclusive=True)
            gap = ls.p - math.exp(eps) * ls.q
            if best is None or gap > best[0] or (not refuted and ls.p > best[1].p and gap >= best[0]):
                best = (gap, ls, num)
        _, ls, num = best
        d, d2 = pair.tuples() if num == 0 else pair.swapped().tuples()
        event = _level_event(ls, eps if refuted else loss - tol)
        cx = Counterexample(d, d2, event, ls.p, ls.q, Interval(ls.p, ls.p), Interval(ls.q, ls.q))
    else:
        refuted = loss > eps + tol
        note = "log_prob only: the loss is exact at the outputs evaluated (a lower bound)"
        event = {"kind": "output", "text": f"output = {_plain(witness)!r}", "atoms": [_plain(witness)]}
        cx = Counterexample(*pair.tuples(), event, math.nan, math.nan,
                            Interval(math.nan, math.nan), Interval(math.nan, math.nan))
    details = ExactDetails(exact_loss=loss, witness=_plain(witness), pairs_evaluated=found.evaluated,
                           phases=found.phases, pair_label=pair.label,
                           objective="delta" if delta > 0 and obj.by_law else "loss",
                           delta_at_claim=delta_claim, note=note)
    verdict = Verdict.REFUTED if refuted else Verdict.NOT_REFUTED
    return AuditResult(verdict=verdict, epsilon_lower_bound=loss,
                       delta_lower_bound=delta_claim if delta > 0 else None,
                       counterexample=cx, elapsed_s=elapsed, details=details, **common)


def _plain(v: Any) -> Any:
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    return v


def _level_event(ls: Any, threshold: float) -> dict:
    if ls.kind == "atoms":
        shown = ", ".join(repr(_plain(a)) for a in ls.parts[:12])
        more = f", … ({len(ls.parts)} in all)" if len(ls.parts) > 12 else ""
        return {"kind": "atoms", "atoms": [_plain(a) for a in ls.parts],
                "text": f"output ∈ {{{shown}{more}}} (where ln p − ln q ≥ {threshold:.6g})"}
    parts = [(float(a), float(b)) for a, b in ls.parts]
    text = " ∪ ".join(f"[{a:.6g}, {b:.6g}]" for a, b in parts[:6]) or "∅"
    ev: dict = {"kind": "interval", "intervals": parts,
                "text": f"output ∈ {text} (where ln p − ln q ≥ {threshold:.6g})"}
    if len(parts) == 1:
        ev["lo"], ev["hi"] = parts[0]
    return ev
