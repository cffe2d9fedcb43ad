"""``dpaudit.replay_audit``: a gray-box audit of a mechanism by record and replay at its noise
calls (docs/replay.md).

The mechanism is run on D with a recording generator as ``rng`` and replayed on a neighbour D′
with every noise draw frozen (Re:cord-play: Cebere, Erb, Desfontaines, Bellet and Fitzsimons,
"Privacy in theory, bugs in practice: a grey-box auditing framework of differential privacy
libraries", PETS 2026). Per pair it checks that the same noise calls are made with the same
public parameters, observes the input of each call, holds declared sensitivities against the
inputs' shift and adds up what the noise supports by composition
(:mod:`dpaudit.replay.compare`); a hypothesis search over the relation's pairs looks for the pair
that breaks the accounting most (:mod:`dpaudit.replay.search`). It costs at most ``budget``
mechanism calls (200 by default), not millions of samples, and names the line.
"""

from __future__ import annotations

import math
import time
from typing import Any, Callable, Optional

import numpy as np

from dpaudit.errors import InvalidArgument
from dpaudit.replay.compare import PairReport
from dpaudit.replay.libraries import intercepting
from dpaudit.replay.result import KINDS, SEVERITIES, VIOLATIONS, ReplayFinding, ReplayResult
from dpaudit.replay.search import BUDGET, EXAMPLES, Engine, MechanismFailed, Problem, search
from dpaudit.results import Verdict
from dpaudit.rng import check_seed
from dpaudit.spec import MechanismSpec
from dpaudit.validation import check_count, check_seconds

__all__ = ["replay_audit", "replay_pair", "replay_record", "SLACK"]

#: the calibration-slack note: the best pair supports at most this share of the claim
SLACK = 0.25
#: findings kept per kind (distinct call sites)
PER_KIND = 5
#: within a severity, the findings told first: the most specific (a data-dependent control
#: flow is often by design, as in a sparse vector)
_TOLD_FIRST = {"data_dependent_noise_scale": 0, "unnoised_release": 1, "data_outside_noise": 2,
               "noise_reuse": 3, "data_dependent_control_flow": 4}


def _problem(f: Callable, *, epsilon: Any, delta: Any, neighbours: Any, domain: Any, size: Any,
             seed: Any, examples: Any, budget: Any, nonfinite: Any, name: Optional[str],
             claim: dict, timeout: Any = None) -> Problem:
    overrides = {k: v for k, v in (("epsilon", epsilon), ("delta", delta), ("neighbours", neighbours),
                                   ("domain", domain), ("size", size)) if v is not None}
    overrides.update(claim)
    spec = MechanismSpec.from_function(f, name=name, **overrides)
    if not isinstance(nonfinite, bool):
        raise InvalidArgument.bad("nonfinite", nonfinite, "True or False")
    deadline = None
    if timeout is not None:
        deadline = time.monotonic() + float(check_seconds(timeout, "timeout"))
    return Problem(func=f, name=spec.name, call_form=spec.call_form, epsilon=spec.epsilon,
                   delta=spec.delta, neighbours=spec.neighbours, domain=spec.domain,
                   size=spec.size, seed=check_seed(seed),
                   budget=check_count(BUDGET if budget is None else budget, "budget", minimum=8),
                   examples=check_count(EXAMPLES if examples is None else examples, "examples"),
                   nonfinite=nonfinite, deadline=deadline)


def replay_audit(f: Callable, *, epsilon: Any = None, delta: Any = None, neighbours: Any = None,
                 domain: Any = None, size: Any = None, seed: Any = None, examples: Any = None,
                 budget: Any = None, nonfinite: bool = False, name: Optional[str] = None,
                 timeout: Any = None, **claim: Any) -> ReplayResult:
    """Audit ``f`` by record and replay at its noise calls.

    ``f(data, rng)`` (or ``f(data, rng, size=k)``, called without ``size``; or ``f(data)`` when
    its noise comes from ``@dpaudit.primitive`` functions or diffprivlib) with the claim
    ``epsilon``, ``delta``, ``neighbours``, ``domain`` and ``size`` (each defaults to the
    ``@dpaudit.mechanism`` declaration, then to dpaudit's defaults; ``**claim`` takes the other
    keywords of the declaration). ``seed`` fixes the whole run; ``budget`` is the most mechanism
    calls it may spend (200), ``examples`` the most pairs of the targeted search (60).
    ``nonfinite=True`` also tries neighbours holding a NaN, +inf or −inf record (for code that
    claims privacy for any input because it clamps). ``timeout`` (seconds) stops the search
    before a call would start past it: what was found stands, and a search cut short is a
    ``time_limit`` limit (INCONCLUSIVE when nothing refutes).

    Returns a frozen :class:`~dpaudit.replay.result.ReplayResult`: REFUTED when a declared
    sensitivity is exceeded at a call site; INCONCLUSIVE when a finding (data-dependent control
    flow or noise scale, data outside the noise, an unnoised release, noise reused) or a limit
    (no noise intercepted) is reported and nothing is refuted; NOT REFUTED otherwise (never a
    proof); ERROR when ``f`` raises (on the dataset named). Bad arguments raise
    :class:`~dpaudit.errors.InvalidArgument`.
    """
    started = time.perf_counter()
    p = _problem(f, epsilon=epsilon, delta=delta, neighbours=neighbours, domain=domain, size=size,
                 seed=seed, examples=examples, budget=budget, nonfinite=nonfinite, name=name,
                 claim=claim, timeout=timeout)
    engine = Engine(p)
    with intercepting() as libraries:
        try:
            outcome = search(engine)
        except MechanismFailed as failed:
            return _result(p, Verdict.ERROR, (), {}, engine.calls, engine.pairs, started, {},
                           True, error=f"{p.name} {failed.message} on dataset {_shown(failed.data)}",
                           failed_on=tuple(failed.data.tolist()), libraries=tuple(libraries))
    findings = _findings(p, outcome)
    verdict = _verdict(findings)
    accounting = _accounting(outcome)
    return _result(p, verdict, findings, accounting, outcome.calls, outcome.pairs, started,
                   outcome.phases, outcome.intercepted, libraries=tuple(libraries))


def replay_record(f: Callable, *, sites_in: Optional[str] = None, **options: Any) -> dict:
    """:func:`replay_audit` as a plain record (:meth:`ReplayResult.to_record`): what the sandbox
    child runs and sends back (:meth:`dpaudit.execution.sandbox.SandboxExecutor.run_engine`).
    ``sites_in``: the audited file, where every call site must lie (dpaudit's process refuses
    any other; :func:`dpaudit.replay.sites.only_in`)."""
    from dpaudit.replay.sites import only_in

    with only_in(sites_in):
        return replay_audit(f, **options).to_record()


def _result(p: Problem, verdict: Verdict, findings: tuple, accounting: dict, calls: int, pairs: int,
            started: float, phases: dict, intercepted: bool, *, error: Optional[str] = None,
            failed_on: Optional[tuple] = None, libraries: tuple = ()) -> ReplayResult:
    return ReplayResult(target=p.name, verdict=verdict, epsilon=p.epsilon, delta=p.delta,
                        neighbours=p.neighbours, domain=p.domain, size=p.size, findings=findings,
                        accounting=accounting, calls=calls, pairs=pairs,
                        elapsed_s=time.perf_counter() - started, seed=p.seed,
                        reproduce=_reproduce(p), budget=p.budget, phases=phases,
                        noise_intercepted=intercepted, error=error, failed_on=failed_on,
                        libraries=libraries)


def _reproduce(p: Problem) -> str:
    extra = ", nonfinite=True" if p.nonfinite else ""
    return (f"dpaudit.replay_audit({p.name}, epsilon={p.epsilon!r}, delta={p.delta!r}, "
            f"neighbours={p.neighbours.value!r}, domain=({p.domain.lo!r}, {p.domain.hi!r}), "
            f"size={p.size}, seed={p.seed}{extra})")


def _pair_line(p: Problem, report: PairReport) -> str:
    """The Python call that replays one pair (the function by its own name: ``file.py:f`` and
    ``module.f`` are called as ``f``), with the whole claim."""
    from dpaudit.reproduce import replay_pair_call

    return replay_pair_call(p.name, np.asarray(report.dataset).reshape(-1),
                            np.asarray(report.neighbour).reshape(-1), epsilon=p.epsilon,
                            delta=p.delta, neighbours=p.neighbours.value,
                            domain=(p.domain.lo, p.domain.hi), size=p.size, seed=p.seed)


def _shown(a: np.ndarray, most: int = 8) -> str:
    """A dataset in an error line: ``[0.0, 1.0]``, or its first records and its size."""
    v = [repr(float(x)) for x in np.asarray(a).reshape(-1)]
    return f"[{', '.join(v[:most])}, … ({len(v)} records)]" if len(v) > most else f"[{', '.join(v)}]"


def _finding(p: Problem, issue: Any, report: PairReport) -> ReplayFinding:
    return ReplayFinding(kind=issue.kind, site=issue.site, message=issue.message,
                         dataset=tuple(report.dataset.tolist()),
                         neighbour=tuple(report.neighbour.tolist()), pair_label=report.label,
                         values=issue.values, reproduce=_pair_line(p, report))


def _findings(p: Problem, outcome: Any) -> tuple:
    chosen: dict = {}
    order: list = []

    def add(f: ReplayFinding) -> None:
        key = (f.kind, None if f.site is None else f.site.key)
        same_kind = [k for k in order if k[0] == f.kind]
        if key in chosen or len(same_kind) >= PER_KIND:
            return
        chosen[key] = f
        order.append(key)

    if outcome.violation is not None:
        for issue in outcome.violation.issues:
            if issue.kind in VIOLATIONS:
                add(_finding(p, issue, outcome.violation))
    for report in outcome.reports:
        for issue in report.issues:
            if issue.kind in ("composition_excess",):
                continue
            add(_finding(p, issue, report))
    best = outcome.best
    if best is not None:
        for issue in best.issues:
            if issue.kind == "composition_excess":
                add(_finding(p, issue, best))
    for report, coords in outcome.confirmed:
        site = getattr(report, "return_site", None)
        shown = [{"coordinate": j, "D": a, "D_prime": b} for j, a, b in coords[:8]]
        where = "" if site is None else f" (released at {site.short()})"
        msg = (f"data released without noise{where}: with every noisy value frozen, output[{coords[0][0]}] is "
               f"{coords[0][1]:.6g} on D and {coords[0][2]:.6g} on D′, and it does not move when every "
               f"noisy value is perturbed ({len(coords)} such coordinate(s)): it is not a function of the noise")
        add(ReplayFinding("unnoised_release", site, msg, tuple(report.dataset.tolist()),
                          tuple(report.neighbour.tolist()), report.label,
                          {"coordinates": shown, "count": len(coords)}, _pair_line(p, report)))
    if outcome.outside_randomness is not None:
        o = outcome.outside_randomness
        add(ReplayFinding("outside_randomness", None,
                          "replaying the first dataset on itself gave another output: the mechanism "
                          "draws randomness outside the recording generator (its own generator, the "
                          "global numpy or random state): its outputs are not used as evidence",
                          tuple(np.asarray(o["dataset"]).tolist()), None, "self-replay",
                          {"output": o["D"], "replayed": o["replayed"]}))
    if outcome.timed_out:
        add(ReplayFinding("time_limit", None,
                          f"the time limit was reached after {outcome.pairs} pair(s) and "
                          f"{outcome.calls} call(s) of the budget's {p.budget}: the search stopped "
                          f"early, and the pairs it did not try are untested",
                          values={"calls": outcome.calls, "pairs": outcome.pairs,
                                  "budget": p.budget}))
    if not outcome.intercepted and not (outcome.timed_out and outcome.calls < 2):
        add(ReplayFinding("no_noise_intercepted", None,
                          "no noise call was intercepted (no draw of the rng given, no "
                          "@dpaudit.primitive, no diffprivlib mechanism): any noise the mechanism "
                          "adds comes from elsewhere (its own generator, native code), where the "
                          "replay cannot see it, so the sampled audit decides (dpaudit check runs "
                          "it after this stage; dpaudit check --replay alone does not)"))
    slack = _slack(p, outcome)
    if slack is not None:
        add(slack)
    found = [chosen[k] for k in order]
    rank = {s: i for i, s in enumerate(SEVERITIES)}
    return tuple(sorted(found, key=lambda f: (rank[KINDS[f.kind][0]], _TOLD_FIRST.get(f.kind, 9))))


def _slack(p: Problem, outcome: Any) -> Optional[ReplayFinding]:
    """The calibration-slack note: over every pair tried, the noise never had to hide more than
    :data:`SLACK` of what it was calibrated for."""
    best = outcome.best
    if best is None or outcome.violation is not None or best.diverged:
        return None
    accounted = [r for r in best.rows if r.epsilon is not None or r.mu is not None or r.ratio is not None]
    if not accounted or not 0.0 < best.score <= SLACK:
        return None
    top = max(accounted, key=lambda r: (r.ratio or 0.0) + (r.epsilon or 0.0) + (r.mu or 0.0))
    if any(r.ratio is not None for r in accounted):
        what = f"‖Δ input‖ reached at most {best.score:.3g} × the declared sensitivity"
    else:
        what = f"the noise supports at most ε = {best.score * p.epsilon:.4g} = {best.score:.3g} × the claim"
    return ReplayFinding(
        "calibration_slack", top.site,
        f"on every pair tried, {what}: the noise at {top.site.short()} looks calibrated to a larger "
        f"sensitivity than the values it is added to (over-noising costs accuracy, not privacy; "
        f"a search is not a proof that no pair reaches the claim)",
        tuple(best.dataset.tolist()), tuple(best.neighbour.tolist()), best.label,
        {"ratio": best.score}, _pair_line(p, best))


def _verdict(findings: tuple) -> Verdict:
    severities = {f.severity for f in findings}
    if "violation" in severities:
        return Verdict.REFUTED
    if severities & {"finding", "limit"}:
        return Verdict.INCONCLUSIVE
    return Verdict.NOT_REFUTED


def _accounting(outcome: Any) -> dict:
    best = outcome.violation or outcome.best
    if best is None:
        return {}
    comp = best.composition
    return {"pair": {"dataset": best.dataset.tolist(), "neighbour": best.neighbour.tolist(),
                     "label": best.label},
            "calls": [r.to_record() for r in best.rows],
            "composition": None if comp is None else comp.to_record(),
            "score": None if not math.isfinite(best.score) else best.score}


def replay_pair(f: Callable, dataset: Any, neighbour: Any, *, epsilon: Any = None, delta: Any = None,
                seed: Any = None, **claim: Any) -> ReplayResult:
    """Record ``f`` on ``dataset`` and replay it on ``neighbour`` once (2 calls, plus a warm-up
    and a self-replay): the findings of that one pair (a finding's ``reproduce`` line)."""
    from dpaudit.neighbours.pair import Pair
    from dpaudit.replay.search import Outcome

    started = time.perf_counter()
    d = np.asarray(dataset, dtype=float).reshape(-1)
    dn = np.asarray(neighbour, dtype=float).reshape(-1)
    p = _problem(f, epsilon=epsilon, delta=delta, neighbours=claim.pop("neighbours", None),
                 domain=claim.pop("domain", None), size=claim.pop("size", None) or max(len(d), len(dn), 1),
                 seed=seed, examples=None, budget=None, nonfinite=False,
                 name=claim.pop("name", None), claim=claim)
    engine = Engine(p)
    outcome = Outcome()
    with intercepting() as libraries:
        try:
            report = engine.evaluate(Pair(d, dn, "given pair"), 10)
        except MechanismFailed as failed:
            return _result(p, Verdict.ERROR, (), {}, engine.calls, engine.pairs, started, {}, True,
                           error=f"{p.name} {failed.message} on dataset {_shown(failed.data)}",
                           failed_on=tuple(failed.data.tolist()),
                           libraries=tuple(libraries))
    outcome.reports.append(report)
    outcome.best = report
    outcome.intercepted = bool(report.intercepted)  # type: ignore[attr-defined]
    if report.violates():
        outcome.violation = report
    outcome.calls, outcome.pairs = engine.calls, engine.pairs
    findings = _findings(p, outcome)
    return _result(p, _verdict(findings), findings, _accounting(outcome), outcome.calls,
                   outcome.pairs, started, {}, outcome.intercepted, libraries=tuple(libraries))
