"""The stability check itself: :func:`check_stability` and :func:`check_pair`, what they report
(:class:`StabilityReport`) and the findings they state.

A check builds a :class:`~dpaudit.stability.checker.Checker`, spends its budget on the pairs
of :func:`~dpaudit.stability.pairs.search_pairs` (or on one given pair) and states a
violation as a ``sensitivity_exceeded`` finding (:func:`violation_finding`, with the line that
reproduces it) and what it could not check as notes (:func:`notes_of`).
"""

from __future__ import annotations

import importlib
import time
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from dpaudit.claims import Domain, Neighbours
from dpaudit.errors import InvalidArgument
from dpaudit.neighbours.pair import Pair
from dpaudit.stability.chains import label_of
from dpaudit.stability.checker import Checker, PartFailed
from dpaudit.stability.metrics import Distance, as_fraction, as_numbers, map_argument, show
from dpaudit.stability.pairs import search_pairs
from dpaudit.replay.result import ReplayFinding
from dpaudit.results import jsonable
from dpaudit.rng import check_seed

__all__ = ["check_stability", "check_pair", "StabilityReport", "run_check", "violation_finding",
           "notes_of", "BUDGET", "EXAMPLES"]

#: chain evaluations (one per dataset) a check may spend at the default budget
BUDGET = 200
#: hypothesis examples (pairs) at most in the targeted search
EXAMPLES = 60


@dataclass(frozen=True)
class StabilityReport:
    """What :func:`check_stability` found: ``stages`` (per transformation: its map at d_in, the
    largest distance observed and its ratio to the map, the pair), the ``measurement`` check (the
    measurement's map at the distance observed at its input against the claim), the
    ``violations`` (``sensitivity_exceeded`` findings), the ``notes``, the evaluations spent
    (``invocations``, one per dataset), the ``pairs`` compared, and ``error`` when a part raised
    (on ``failed_on``)."""

    target: str
    d_in: Any
    relation: Neighbours
    domain: Domain
    size: int
    stages: tuple
    measurement: Optional[dict]
    violations: tuple
    notes: tuple
    invocations: int
    pairs: int
    seed: int
    budget: int
    elapsed_s: float
    claim: Any = None
    error: Optional[str] = None
    failed_on: Optional[tuple] = None
    phases: dict = field(default_factory=dict)

    @property
    def refuted(self) -> bool:
        return bool(self.violations)

    def largest_ratio(self) -> float:
        """The largest d_out / map(d_in) seen at any transformation (0 when none was checked)."""
        return max((s["largest_ratio"] for s in self.stages), default=0.0)

    def __str__(self) -> str:
        head = (f"{self.target}: {'VIOLATION' if self.refuted else 'ERROR' if self.error else 'nothing found'}"
                f" (stability maps at d_in = {self.d_in!r}, {self.relation.value}; {self.pairs} pairs, "
                f"{self.invocations} evaluations)")
        lines = [head]
        if self.error:
            lines.append(f"  error: {self.error}")
        for f in self.violations:
            lines.append(f"  violation: {f.message}")
        for s in self.stages:
            lines.append(f"  {s['part']}: map(d_in) = {s['map_d_in_repr']}, largest d_out = "
                         f"{s['largest_observed']} (ratio {s['largest_ratio']:.17g})")
        if self.measurement:
            m = self.measurement
            lines.append(f"  {m['part']}: map(d observed) ≤ {m['largest_value']} against the claim "
                         f"{m['claim']} (ratio {m['largest_ratio']:.17g})")
        for f in self.notes:
            lines.append(f"  note: {f.message}")
        return "\n".join(lines)

    def to_record(self) -> dict:
        return {"target": self.target, "d_in": jsonable(self.d_in), "relation": self.relation.value,
                "domain": [self.domain.lo, self.domain.hi], "size": self.size,
                "claim": None if self.claim is None else show(self.claim),
                "stages": list(self.stages), "measurement": self.measurement,
                "violations": [f.to_record() for f in self.violations],
                "notes": [f.to_record() for f in self.notes],
                "invocations": self.invocations, "pairs": self.pairs, "seed": self.seed,
                "budget": self.budget, "elapsed_s": self.elapsed_s, "error": self.error,
                "failed_on": jsonable(self.failed_on), "phases": jsonable(self.phases)}


def _floats(a: np.ndarray) -> str:
    return "[" + ", ".join(repr(float(x)) for x in np.asarray(a).reshape(-1)) + "]"


def violation_finding(c: Checker, v: dict) -> ReplayFinding:
    """The ``sensitivity_exceeded`` finding of the violation ``v`` (as :meth:`Checker.evaluate`
    returns it), with the :func:`check_pair` line that reproduces it."""
    pair: Pair = v["pair"]
    d: Distance = v["observed"]
    j = v["stage"]
    if v["how"] == "measurement":
        part = c.measurement
        msg = (f"privacy map exceeded at {part.label}: the distance observed at its input is "
               f"{d.text()} ({part.obj.input_metric}), where its map gives {show(v['bound'])}, "
               f"above the claim map(d_in = {c.d_in!r}) = {show(v['claim'])} of the whole chain")
        values = {"part": part.label, "observed_input_distance": d.text(),
                  "map_at_observed": show(v["bound"]), "claim": show(v["claim"]), "d_in": c.d_in}
    else:
        part = c.parts[j]
        upto = " ∘ ".join(p.label.split("(")[0] for p in reversed(c.parts[: j + 1]))
        if v["how"] == "chain":
            apart = (f"at d_in = {c.d_in!r} ({c.obj.input_metric})" if not c.overridden else
                     f"(neighbours under {c.relation.value}, {v['d0'].text()} apart under "
                     f"{c.obj.input_metric}, for which map(d_in = {c.d_in!r}) is claimed)")
            msg = (f"stability map exceeded at {part.label}: d_out = {d.text()} "
                   f"({part.obj.output_metric}) on D and D′ {apart}, above map(d_in) = "
                   f"{show(v['bound'])} of {upto}")
        else:
            msg = (f"stability map exceeded at {part.label}: d_out = {d.text()} "
                   f"({part.obj.output_metric}) from inputs {v['input'].text()} apart "
                   f"({part.obj.input_metric}), above its map({show(map_argument(part.obj.input_metric, v['input']))})"
                   f" = {show(v['bound'])}")
        excess = None
        b = as_fraction(as_numbers(v["bound"])[0]) if as_numbers(v["bound"]) else None
        if b is not None and not isinstance(b, float) and not d.infinite and not d.squared:
            excess = float(d.value - b)
            msg += f" (excess {excess!r})"
        values = {"part": part.label, "observed": d.text(), "map": show(v["bound"]), "d_in": c.d_in,
                  "input_distance": v["input"].text(), "check": v["how"], "excess": excess}
    return ReplayFinding("sensitivity_exceeded", part.site, msg, tuple(pair.dataset.tolist()),
                         tuple(pair.neighbour.tolist()), pair.label or "", values,
                         f"dpaudit.stability.check_pair({c.name}, {_floats(pair.dataset)}, "
                         f"{_floats(pair.neighbour)}, d_in={c.d_in!r})")


def notes_of(c: Checker) -> list[ReplayFinding]:
    """What the check could not check, as ``input_not_observed`` notes: a randomised part, a map
    not computed at d_in, a privacy map that gives no numbers, pairs skipped once converted."""
    out = []
    for s in c.stages:
        if s.note:
            out.append(ReplayFinding("input_not_observed", s.site, f"{s.label}: {s.note}"))
        elif s.bound is None:
            out.append(ReplayFinding("input_not_observed", s.site,
                                     f"{s.label}: its map at d_in could not be computed: only its "
                                     f"map at the observed input distance was checked"))
    if c.mstage is not None and as_numbers(c.claim) is None:
        out.append(ReplayFinding("input_not_observed", c.measurement.site,
                                 f"{c.measurement.label}: its privacy map gives a "
                                 f"{type(c.claim).__name__}, not numbers: its map at the distance "
                                 f"observed was not compared with the claim"))
    if c.skipped:
        out.append(ReplayFinding("input_not_observed", None,
                                 f"{c.skipped} pair(s) were more than d_in = {c.d_in!r} apart once "
                                 f"converted to OpenDP's input (rounding): not checked"))
    return out


def _make_checker(obj: Any, *, d_in: Any, neighbours: Any, domain: Any, size: Any, seed: Any,
                  budget: Any, examples: Any, timeout: Any, name: Optional[str],
                  nonfinite: bool = False) -> Checker:
    from dpaudit.validation import check_count

    dp = importlib.import_module("opendp.mod")
    if not isinstance(obj, (dp.Transformation, dp.Measurement)):
        raise InvalidArgument.bad("transformation", obj, "an opendp Transformation or Measurement")
    deadline = None if timeout is None else time.monotonic() + float(timeout)
    return Checker(obj, d_in=d_in, relation=None if neighbours is None else Neighbours.parse(neighbours),
                   domain=domain, size=size, seed=check_seed(seed),
                   budget=check_count(BUDGET if budget is None else budget, "budget", minimum=4),
                   examples=check_count(EXAMPLES if examples is None else examples, "examples"),
                   deadline=deadline, name=name or label_of(obj), nonfinite=nonfinite)


def run_check(obj: Any, **kw: Any) -> tuple[Checker, dict, Optional[PartFailed], float]:
    """The checker of ``obj`` (keywords of :func:`check_stability`) after its pair search:
    ``(checker, phases, the failure or None, the start time)``."""
    started = time.perf_counter()
    c = _make_checker(obj, **kw)
    failed = None
    phases: dict = {}
    if c.parts:
        try:
            phases = search_pairs(c)
        except PartFailed as exc:
            failed = exc
    if c.timed_out:
        phases["stopped"] = "time limit"
    return c, phases, failed, started


def _report(c: Checker, phases: dict, failed: Optional[PartFailed], started: float) -> StabilityReport:
    violations = () if c.violation is None else (violation_finding(c, c.violation),)
    return StabilityReport(
        target=c.name, d_in=c.d_in, relation=c.relation, domain=c.domain, size=c.size,
        stages=tuple(s.to_record() for s in c.stages), measurement=c.mstage,
        violations=violations, notes=tuple(notes_of(c)), invocations=c.invocations, pairs=c.pairs,
        seed=c.seed, budget=c.budget, elapsed_s=time.perf_counter() - started, claim=c.claim,
        error=None if failed is None else failed.message,
        failed_on=None if failed is None else tuple(failed.data.tolist()), phases=phases)


def check_stability(obj: Any, *, d_in: Any = None, neighbours: Any = None, domain: Any = None,
                    size: Any = None, seed: Any = 0, budget: Any = None, examples: Any = None,
                    timeout: Any = None, name: Optional[str] = None,
                    nonfinite: bool = False) -> StabilityReport:
    """Check the stability maps of an OpenDP Transformation (or of the transformations of a
    Measurement chain, and the measurement's map at the distance observed at its input) on
    neighbouring pairs (the docstring of :mod:`dpaudit.stability`).

    ``d_in``: the input distance (default 1, or 2 for a sized dataset under the symmetric
    distance: one record replaced); ``neighbours`` pairs of another relation than the metric's
    (the claim map(d_in) stated for them); ``domain`` where records lie (default: the atom
    bounds, else the whole range of its type, :func:`~dpaudit.stability.checker.carrier_range`:
    the map is claimed for every member); ``size`` records (default: the domain's size, else 10);
    ``budget`` the evaluations (one per dataset, 200), ``examples`` the hypothesis pairs at most (60);
    ``timeout`` seconds; ``nonfinite`` tries NaN and ±inf records too (float records only: OpenDP's
    domain says whether it takes them). Deterministic from ``seed``.
    """
    c, phases, failed, started = run_check(obj, d_in=d_in, neighbours=neighbours, domain=domain,
                                           size=size, seed=seed, budget=budget, examples=examples,
                                           timeout=timeout, name=name, nonfinite=nonfinite)
    return _report(c, phases, failed, started)


def check_pair(obj: Any, dataset: Any, neighbour: Any, *, d_in: Any = None) -> StabilityReport:
    """The stability check of one pair (the ``reproduce`` line of a violation): 2 evaluations,
    4 when a violation is confirmed by a rerun."""
    started = time.perf_counter()
    domain = obj.input_domain
    vector = hasattr(domain, "element_domain")
    sized = vector and getattr(domain, "size", None) is not None
    n = max(len(np.asarray(dataset).reshape(-1)), len(np.asarray(neighbour).reshape(-1)))
    c = _make_checker(obj, d_in=d_in, neighbours=None, domain=None,
                      size=None if sized or not vector else n, seed=0, budget=4, examples=1,
                      timeout=None, name=None)
    failed = None
    try:
        c.violation = c.evaluate(Pair.of(dataset, neighbour, "given"))
    except PartFailed as exc:
        failed = exc
    return _report(c, {}, failed, started)
