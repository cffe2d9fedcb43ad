"""An OpenDP target's stability check: the adapter-facing entry points.

:func:`opendp_of` finds the measurement behind a spec of ``dpaudit.adapters.opendp``;
:func:`check_target` runs the stability check on its chain and states the result as a
:class:`~dpaudit.replay.result.ReplayResult` (with the ``no_noise_intercepted`` limit: OpenDP's
noise is drawn in native code); :func:`check_measurement` does both from a bare measurement.
``dpaudit check --replay`` runs :func:`check_target` on an OpenDP target
(:func:`dpaudit.replay.stage.library_replay`), so its record has the replay engine's kind.
"""

from __future__ import annotations

import time
from typing import Any, Optional

from dpaudit.errors import InvalidArgument
from dpaudit.stability.chains import label_of
from dpaudit.stability.check import notes_of, run_check, violation_finding
from dpaudit.stability.metrics import show
from dpaudit.replay.result import KINDS, SEVERITIES, ReplayFinding, ReplayResult
from dpaudit.results import Verdict, jsonable

__all__ = ["opendp_of", "check_target", "check_measurement", "TARGET_ATTRIBUTE"]

#: the attribute of an adapter's mechanism function holding its OpenDP measurement
TARGET_ATTRIBUTE = "__dpaudit_opendp__"


def opendp_of(spec: Any) -> Optional[dict]:
    """The OpenDP measurement behind an adapter's spec (``{"measurement", "d_in", "delta"}``), or
    None for any other spec."""
    info = getattr(getattr(spec, "func", None), TARGET_ATTRIBUTE, None)
    return info if isinstance(info, dict) and "measurement" in info else None


def check_target(spec: Any, *, seed: Any = None, budget: Any = None, examples: Any = None,
                 timeout: Any = None, name: Optional[str] = None,
                 nonfinite: bool = False) -> ReplayResult:
    """The stability check of an OpenDP target (``dpaudit.adapters.opendp.target``): the stability
    maps of each transformation prefix of its chain, the measurement's privacy map at the
    distance observed at its input against the claim, and the ``no_noise_intercepted`` limit
    (OpenDP's noise is native code). REFUTED on a violation; else INCONCLUSIVE (the noise itself
    was not seen: audit it by sampling); ERROR when a transformation raised."""
    info = opendp_of(spec)
    if info is None:
        raise InvalidArgument.bad("spec", spec, "a target of dpaudit.adapters.opendp")
    m = info["measurement"]
    label = name or getattr(spec, "name", None) or label_of(m)
    c, phases, failed, started = run_check(m, d_in=info["d_in"], neighbours=spec.neighbours,
                                           domain=spec.domain, size=spec.size, seed=seed,
                                           budget=budget, examples=examples, timeout=timeout,
                                           name="measurement", nonfinite=nonfinite)
    findings: list[ReplayFinding] = []
    if c.violation is not None:
        findings.append(violation_finding(c, c.violation))
    if c.timed_out and "time_limit" in KINDS:
        findings.append(ReplayFinding("time_limit", None,
                                      f"the time limit was reached after {c.pairs} pair(s): the "
                                      f"pairs it did not try are untested",
                                      values={"calls": c.invocations, "pairs": c.pairs, "budget": c.budget}))
    if c.parts:
        seen = (f"the outputs of its {len(c.parts)} transformation(s) were observed instead "
                f"(stability maps checked on {c.pairs} pair(s)) and the measurement's map applied to "
                f"the distance seen at its input")
    else:
        seen = "it has no transformation before the noise whose output could be observed"
    findings.append(ReplayFinding(
        "no_noise_intercepted", c.measurement.site if c.measurement else None,
        f"OpenDP draws its noise in native code ({c.measurement.label if c.measurement else 'the measurement'}) "
        f"from the operating system's generator: the replay cannot see or freeze it; {seen}; audit "
        f"the noise by sampling (dpaudit check without --replay)"))
    findings += notes_of(c)
    rank = {s: i for i, s in enumerate(SEVERITIES)}
    findings.sort(key=lambda f: rank[KINDS[f.kind][0]])
    if failed is not None:
        verdict = Verdict.ERROR
    elif any(f.severity == "violation" for f in findings):
        verdict = Verdict.REFUTED
    else:
        verdict = Verdict.INCONCLUSIVE
    best = max(c.stages, key=lambda s: s.max_ratio, default=None)
    accounting = {"d_in": jsonable(info["d_in"]), "claim": show(c.claim),
                  "stages": [s.to_record() for s in c.stages], "measurement": c.mstage,
                  "score": None if best is None else best.max_ratio}
    if best is not None and best.max_pair is not None:
        accounting["pair"] = {"dataset": list(best.max_pair[0]), "neighbour": list(best.max_pair[1]),
                              "label": f"largest d_out / map(d_in) at {best.label}"}
    details = {"opendp": {"parts": [p.label for p in c.parts] +
                          ([c.measurement.label] if c.measurement else []),
                          "sites": [None if p.site is None else str(p.site) for p in c.parts],
                          "largest_ratio": c.score(), "skipped_pairs": c.skipped}}
    return ReplayResult(
        target=label, verdict=verdict, epsilon=spec.epsilon, delta=spec.delta,
        neighbours=spec.neighbours, domain=spec.domain, size=spec.size, findings=tuple(findings),
        accounting=accounting, calls=c.invocations, pairs=c.pairs,
        elapsed_s=time.perf_counter() - started, seed=c.seed,
        reproduce=(f"dpaudit.stability.check_target(<the target {label}>, seed={c.seed})"),
        budget=c.budget, phases=phases, noise_intercepted=False,
        error=None if failed is None else f"{label} {failed.message}",
        failed_on=None if failed is None else tuple(failed.data.tolist()), libraries=("opendp",),
        details=details)


def check_measurement(measurement: Any, *, d_in: Any = 1, delta: Optional[float] = None,
                      size: Any = None, domain: Any = None, neighbours: Any = None,
                      seed: Any = None, budget: Any = None, examples: Any = None,
                      timeout: Any = None, name: Optional[str] = None) -> ReplayResult:
    """:func:`check_target` of ``dpaudit.adapters.opendp.target(measurement, d_in=…, …)``."""
    from dpaudit.adapters.opendp import target

    spec = target(measurement, d_in=d_in, delta=delta, size=size, domain=domain,
                  neighbours=neighbours, name=name)
    return check_target(spec, seed=seed, budget=budget, examples=examples, timeout=timeout,
                        name=name or spec.name)
