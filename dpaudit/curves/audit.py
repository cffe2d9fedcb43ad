"""The curve audit: a lower confidence curve of a black-box mechanism's privacy profile δ(ε),
simultaneous over every ε, against a claimed curve (zCDP, GDP, RDP or a profile).

:func:`curve_audit` is the sampled core of :mod:`dpaudit.auditing` with the curve gap as its
objective: the looks of the group-sequential run (:func:`dpaudit.auditing.looks.drive`, the
schedule and α spending of :mod:`dpaudit.auditing.schedule`, :class:`CurveObjective`), the draws,
budget and common random numbers of :class:`~dpaudit.auditing.sampler.Sampler`, and a look's
seeds, budget split and pair search (:class:`dpaudit.auditing.core.Core`, :class:`_Run`) are the
sampled audit's. Each look runs three phases on three disjoint sets of samples:

1. **search** (:data:`SEARCH_SHARE` of the budget): the pair search of the sampled core
   (:func:`dpaudit.auditing.core.search_pairs`: structured patterns, levels for ``linf`` /
   ``l1``, hypothesis-targeted search, refinement) ranks neighbouring pairs by the projected
   largest ratio max_ε δ_LB(ε)/δ_claim(ε) (above 1: a refutation) of their best score on a small
   sample drawn on common seeds (:func:`dpaudit.curves.band.project`);
2. **select** (:data:`SELECT_SHARE`): the :data:`SELECT_PAIRS` best pairs each get a fresh sample;
   every score family of the sampled audit (:func:`dpaudit.estimators.selection.score_families`,
   the logic question's: events on values) and, for vectors, the diagonal linear discriminant
   (:func:`dpaudit.estimators.scores.fit_discriminant`) is projected, and the best (pair, score)
   and its thresholds are chosen (:meth:`dpaudit.curves.band.Projection.choose`): at most
   ``thresholds`` (threshold, orientation) pairs;
3. **validate** (the rest): the chosen score is evaluated on fresh samples of the pair, a chunk at
   a time, and bounded by a simultaneous band (:mod:`dpaudit.curves.band`: Clopper-Pearson at
   α/(2K) over the K chosen pairs, or a DKW band per dataset).

**Soundness.** The validation samples play no part in choosing the pair, the score or the
thresholds; every bound of the band holds at once with probability ≥ confidence, so the lower
curve δ_LB(ε) holds at every ε at once (the grid is only where it is printed and compared), and so
do μ_LB and ρ_LB, which are functions of the same bounds. REFUTED means δ_LB(ε) > δ_claim(ε) at
some ε evaluated: the grid, plus the ε that maximises the gap of the best event between grid
points (and, for a GDP claim, the ε where the μ_LB event's line touches the claimed curve,
ε* = −μ Φ⁻¹(P_den_hi) − μ²/2, so REFUTED ⇔ μ_LB > μ there). The mechanism is audited as a model
over the reals (the float64 question, porosity, is the sampled audit's).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field as dc_field, replace
from typing import Any, Callable, Mapping, Optional

import numpy as np
from scipy.special import ndtri

from dpaudit.auditing.core import SEARCH_SHARE, Core, corner_pairs, search_pairs
from dpaudit.auditing.looks import drive
from dpaudit.auditing.sampler import Exhausted, Sampler
from dpaudit.auditing.schedule import schedule
from dpaudit.curves.band import BANDS, Events, Projection, cp_events, dkw_events, ge_counts, low, project
from dpaudit.curves.claims import (CurveClaim, GaussianDP, binding_order, check_grid, curve_claim,
                                   default_grid, rho_for_delta)
from dpaudit.curves.result import CurveDetails, CurvePoint, CurveResult
from dpaudit.errors import InvalidArgument, MechanismError, TimeLimitReached
from dpaudit.estimators.bounds import cp_lower
from dpaudit.estimators.events import Event
from dpaudit.estimators.limits import curve_limits
from dpaudit.estimators.scores import fit_discriminant
from dpaudit.estimators.selection import score_families
from dpaudit.execution.base import InProcessExecutor
from dpaudit.neighbours.pair import Pair
from dpaudit.neighbours.patterns import structured_pairs
from dpaudit.outputs import OutputEncoder
from dpaudit.results import Counterexample, Interval, Verdict
from dpaudit.spec import CallForm, MechanismSpec, declaration_of
from dpaudit.spec import OutputKind
from dpaudit.validation import (check_confidence, check_count, check_executor, check_records,
                                check_samples, check_seconds, check_seed)

__all__ = ["curve_audit", "EARLY_THRESHOLDS", "SEARCH_SHARE", "SELECT_SHARE", "SELECT_PAIRS", "THRESHOLDS",
           "DEFAULT_SAMPLES_BATCH", "DEFAULT_SAMPLES_LOOP"]

#: the selection's share of the budget (of at most
#: :data:`~dpaudit.auditing.sampler.SELECTION_BASE` samples; the search's is the core's
#: :data:`~dpaudit.auditing.core.SEARCH_SHARE`); validation gets the rest
SELECT_SHARE = 0.15
#: pairs compared on fresh samples at selection
SELECT_PAIRS = 3
#: (threshold, orientation) pairs validated at most (``cp``): K in α/(2K)
THRESHOLDS = 10
#: ... at an early look of the sequential run: the pairs of the largest projected ratio
#: δ_LB/δ_claim and of the largest projected μ, where the selection split says the claimed and
#: the observed curves are easiest to separate (a smaller K is a larger α/(2K) for each)
EARLY_THRESHOLDS = 2
#: the default budgets, as the sampled audit's (:func:`dpaudit.auditor.default_samples`)
DEFAULT_SAMPLES_BATCH = 4_000_000
DEFAULT_SAMPLES_LOOP = 400_000
#: per-pair scoring samples of the search, per dataset (the core's are 50 and 50,000: a curve
#: projection thresholds hundreds of events on the sample, so it scores on more, and on fewer
#: at most, than a point ε's single event)
MIN_SCORE_SAMPLES = 200
MAX_SCORE_SAMPLES = 20_000
#: a selection sample of one dataset, and a validation chunk, hold at most these many bytes
SELECT_BYTES = 256 << 20
CHUNK_BYTES = 64 << 20
#: under a time limit a validation chunk is at most this many batches (the limit is checked
#: between chunks; the counts are the same whatever the chunks)
CHUNK_BATCHES = 1
#: under a time limit the search stops at this share of a look's time (the core's), the
#: selection at the next; validation has the rest
SEARCH_TIME = 0.35
SELECT_TIME = 0.5
#: thresholds tried per score when ranking pairs (selection tries :data:`band.THRESHOLDS`)
QUICK_THRESHOLDS = 200


def _declared_curve(f: Any) -> dict:
    """The curve claim declared on ``f`` (``@dpaudit.mechanism(rho=…)``, or a spec's, or a library
    target's, :func:`dpaudit.adapters.opendp.target`), else {}."""
    if isinstance(f, MechanismSpec):
        library = getattr(f, "library", None)  # an adapter's target whose claim is a curve
        if isinstance(library, Mapping) and library.get("curve"):
            return dict(library["curve"])
        f = f.func
    decl = declaration_of(f) if callable(f) else None
    return dict(decl.curve) if decl is not None and decl.curve else {}


def _spec(f: Any, overrides: dict) -> MechanismSpec:
    """The mechanism as a spec, audited as a model over the reals. The curve audit reads no ε: a
    function with no declared ε gets a placeholder one (the spec's point claim is never used)."""
    if isinstance(f, MechanismSpec):
        changes = {k: v for k, v in overrides.items() if v is not None}
        if changes:
            fresh = MechanismSpec.from_function(f.func, epsilon=1.0, **changes)
            f = replace(f, **{k: getattr(fresh, k) for k in changes})
        return f.idealised()
    if not callable(f):
        raise InvalidArgument.bad("mechanism", f, "a MechanismSpec or a callable")
    given = {k: v for k, v in overrides.items() if v is not None}
    decl = declaration_of(f)
    if decl is None or decl.epsilon is None:
        given["epsilon"] = 1.0
    return MechanismSpec.from_function(f, **given).idealised()


def _families(yd: np.ndarray, yp: np.ndarray, schema: Any, quick: bool):
    """The score families of the logic question (:func:`score_families`), and for vector outputs
    the diagonal linear discriminant fitted on the first half (the likelihood-ratio score of
    independent Gaussian coordinates), thresholded on the second."""
    yield from score_families(yd, yp, schema, quick, floats=False)
    if schema.kind is OutputKind.VECTOR and yd.ndim == 2 and yd.shape[0] >= 4:
        h = yd.shape[0] // 2
        fd, fp = np.asarray(yd[:h], dtype=float), np.asarray(yp[:h], dtype=float)
        sc = fit_discriminant((fd.mean(axis=0), fd.var(axis=0)), (fp.mean(axis=0), fp.var(axis=0)))
        if sc.columns.size:
            yield sc, sc(yd[h:]), sc(yp[h:]), False


class _Run(Core):
    """One look of the curve audit on the sampled core (:class:`~dpaudit.auditing.core.Core`:
    the look's seeds, budget split and pair search), its objective the curve gap: a pair scores
    the projected largest ratio max_ε δ_LB(ε)/δ_claim(ε) of its best score family
    (:func:`dpaudit.curves.band.project`, at the validation size ``n_val`` and α/(2K)); the
    selection (:meth:`select`) and the simultaneous band on the validation counts
    (:meth:`validate`) are the curve's own."""

    min_score = MIN_SCORE_SAMPLES
    max_score = MAX_SCORE_SAMPLES

    def __init__(self, spec: MechanismSpec, claim: CurveClaim, grid: np.ndarray, executor: Any,
                 budget: int, confidence: float, seed: int, band: str, k: int,
                 deadline: Optional[float] = None) -> None:
        self.encoder = OutputEncoder(spec.output)
        super().__init__(spec, Sampler(spec, executor, self.encoder, budget), seed,
                         select_share=SELECT_SHARE, deadline=deadline)
        self.claim, self.grid = claim, grid
        self.dclaim = claim.delta(grid)
        self.band, self.k = band, k
        self.alpha = 1.0 - confidence
        self.n_val = max(1.0, (budget - self.search_budget - self.select_budget) / 2.0)

    # ---------------------------------------------------------------- the objective
    def score(self, yd: np.ndarray, yp: np.ndarray) -> float:
        """The pair's projected largest ratio δ_LB/δ_claim on its scoring sample. Scoring is
        work of its own (every family projected; samples drawn ahead need no draw), so the
        search's share of a time limit is checked here too (Exhausted stops the search)."""
        end = self.phase_deadline(SEARCH_TIME)
        if end is not None and time.monotonic() > end:
            self.sampler.time_cut = True
            raise Exhausted("time")
        return float(self.best_family(yd, yp, quick=True)[0])

    def beyond(self, best: float) -> float:
        """A ratio δ_LB/δ_claim: a find beats the best by 2% of it."""
        return best + 0.02 * abs(best) + 1e-9

    def project(self, sd: np.ndarray, sp: np.ndarray, quick: bool) -> Projection:
        return project(sd, sp, n_val=self.n_val, eps=self.grid, dclaim=self.dclaim, band=self.band,
                       alpha_each=self.alpha / (2 * self.k), alpha=self.alpha,
                       most=QUICK_THRESHOLDS if quick else 4 * QUICK_THRESHOLDS)

    def best_family(self, yd: np.ndarray, yp: np.ndarray, quick: bool) -> tuple:
        """(objective, score, projection) of the best family on the samples, or (−∞, None, None)."""
        best: tuple = (-math.inf, None, None)
        schema = self.encoder.schema
        if schema is None or yd.shape[0] < 2:
            return best
        for sc, sd, sp, _ in _families(yd, yp, schema, quick):
            proj = self.project(np.asarray(sd, dtype=float), np.asarray(sp, dtype=float), quick)
            if proj.objective > best[0]:
                best = (proj.objective, sc, proj)
        return best

    # ---------------------------------------------------------------- phases
    def search_pairs(self) -> None:
        """Phases 1-4 of the core (:func:`dpaudit.auditing.core.search_pairs`) on the
        relation's structured patterns."""
        patterns = structured_pairs(self.spec.neighbours, self.spec.domain, self.spec.size,
                                    both_orders=False)
        if not patterns:
            return
        self.sampler.probe_width(patterns[0].dataset, self.seed)
        search_pairs(self, patterns, corners=corner_pairs(self.spec, self.seed))

    def select(self) -> Optional[tuple]:
        """(pair, score, projection) of the best pair and score on fresh samples, or None."""
        ranked = [p for p, v in self.search.ranked() if np.isfinite(v)]
        patterns = [p for p in ranked if p.key in self.search.pattern_keys][:1]
        pool = patterns + [p for p in ranked if p not in patterns]
        pool = pool[:SELECT_PAIRS]
        if not pool:
            return None
        n = int(max(MIN_SCORE_SAMPLES, min(self.select_budget // (2 * len(pool)),
                                           self.sampler.rows_within(SELECT_BYTES))))
        best: Optional[tuple] = None
        record = []
        for pair, seed in zip(pool, self.s_select.spawn(len(pool))):
            try:
                yd, yp = self.draw_selection(pair, seed, n)
            except (Exhausted, TimeLimitReached) as exc:
                self.cut_by(exc)
                break
            value, sc, proj = self.best_family(yd, yp, quick=False)
            record.append({"pair": pair.label, "score": None if sc is None else sc.describe(),
                           "projected_ratio": value if np.isfinite(value) else None})
            if sc is not None and (best is None or value > best[0]):
                best = (value, pair, sc, proj)
        self.phases["select"] = {"samples_per_pair": n, "candidates": record}
        return None if best is None else best[1:]

    def draw_selection(self, pair: Pair, seed: Any, n: int) -> tuple[np.ndarray, np.ndarray]:
        """The selection sample of a pair: ``draw_pair(pair, seed, n)``; under a time limit the
        same rows a few batches at a time, ending with those drawn when the selection's time is
        spent (a shorter sample only chooses less well: no bound is read from it)."""
        deadline = self.phase_deadline(SELECT_TIME)
        if deadline is None:
            return self.sampler.draw_pair(pair, seed, n)
        step = CHUNK_BATCHES * self.sampler.batch_size
        parts: list = []
        for start in range(0, n, step):
            try:
                parts.append(self.sampler.draw_pair_rows(pair, seed, n, start, min(n, start + step),
                                                         deadline))
            except (Exhausted, TimeLimitReached) as exc:
                if not parts:
                    raise
                self.cut_by(exc)
                break
        return np.concatenate([a for a, _ in parts]), np.concatenate([b for _, b in parts])

    def cut_by(self, exc: BaseException) -> None:
        """A draw stopped by the samples or the time: the sandbox's hard limit
        (TimeLimitReached, the run's own, not the mechanism's fault) is a time cut too."""
        if isinstance(exc, TimeLimitReached):
            self.sampler.time_cut = True

    def validate(self, pair: Pair, score: Any, picks: list) -> tuple[Events, int, bool]:
        """Count the chosen thresholds (``cp``) or keep the score values (``dkw``) on fresh
        samples of the pair, a chunk at a time; the events with their simultaneous bounds, the
        samples per dataset, and whether any score was NaN (an unseen atom)."""
        n = int(max(1, (self.sampler.remaining - 2) // 2))
        chunk = max(1, min(n, self.sampler.rows_within(CHUNK_BYTES)))
        if self.deadline is not None:  # a time limit is checked between chunks: a few batches each
            chunk = min(chunk, CHUNK_BATCHES * self.sampler.batch_size)
        t = np.asarray([p[0] for p in picks], dtype=float)
        o = np.asarray([p[1] for p in picks], dtype=int)
        x_d, x_p = np.zeros(t.size), np.zeros(t.size)
        keep_d, keep_p = [], []
        nan_seen = False
        done = 0
        took = 0.0  # the last chunk's seconds: a chunk is begun only when one as long ends in time
        for start in range(0, n, chunk):
            stop = min(n, start + chunk)
            began = time.monotonic()
            try:
                yd, yp = self.sampler.draw_pair_rows(
                    pair, self.s_val, n, start, stop, None if self.deadline is None else self.deadline - took)
            except (Exhausted, TimeLimitReached) as exc:
                self.cut_by(exc)
                break
            sd, sp = np.asarray(score(yd), dtype=float), np.asarray(score(yp), dtype=float)
            nan_seen = nan_seen or bool(np.isnan(sd).any() or np.isnan(sp).any())
            sd, sp = low(sd), low(sp)
            if self.band == "dkw":
                keep_d.append(sd)
                keep_p.append(sp)
            else:
                x_d += ge_counts(np.sort(sd), t)
                x_p += ge_counts(np.sort(sp), t)
            done = stop
            took = time.monotonic() - began
        if self.band == "dkw":
            sd = np.concatenate(keep_d) if keep_d else np.zeros(0)
            sp = np.concatenate(keep_p) if keep_p else np.zeros(0)
            return dkw_events(sd, sp, self.alpha), done, nan_seen
        return cp_events(t, o, x_d, x_p, done, done, self.alpha), done, nan_seen


# ------------------------------------------------------------------------------------------------

def _points(claim: CurveClaim, grid: np.ndarray, dclaim: np.ndarray, ev: Events) -> list[tuple]:
    """(ε, δ_claim, δ_LB, event index, on grid) at the grid and at the refined points (module
    docstring)."""
    from scipy.optimize import minimize_scalar

    lb, idx = ev.delta_lb(grid)
    pts = [(float(e), float(c), float(v), int(i), True) for e, c, v, i in zip(grid, dclaim, lb, idx)]
    if ev.size == 0:
        return pts
    j = int(np.argmax(lb - dclaim))
    i = int(idx[j])
    if i >= 0 and grid.size > 1:
        lo, hi = float(grid[max(0, j - 1)]), float(grid[min(grid.size - 1, j + 1)])

        def neg_gap(e: float) -> float:
            return -(float(ev.p_lo[i] - math.exp(e) * ev.q_hi[i]) - float(claim.delta(e)[0]))

        r = minimize_scalar(neg_gap, bounds=(lo, hi), method="bounded", options={"xatol": 1e-5})
        if r.success and lo < r.x < hi:
            e = float(r.x)
            v, k = ev.delta_lb(e)
            pts.append((e, float(claim.delta(e)[0]), float(v[0]), int(k[0]), False))
    if isinstance(claim, GaussianDP):
        mu_lb, i = ev.mu_lb()
        if i >= 0 and ev.q_hi[i] > 0:
            e = float(-claim.mu * ndtri(ev.q_hi[i]) - claim.mu ** 2 / 2)
            if e > 0 and math.isfinite(e):
                v, k = ev.delta_lb(e)
                pts.append((e, float(claim.delta(e)[0]), float(v[0]), int(k[0]), False))
    return pts


def _counterexample(pair: Pair, score: Any, ev: Events, i: int, decode: Callable,
                    nan_seen: bool) -> Counterexample:
    side, t, num = str(ev.side[i]), float(ev.threshold[i]), int(ev.numerator[i])
    event = (Event(score, "above", lo=t) if side == "above" else Event(score, "below", hi=t)).to_record(decode)
    if side == "below" and nan_seen:
        event["text"] += " (or a value the score never saw when fitted)"
    event["band"] = ev.band
    p = pair if num == 0 else pair.swapped()
    return Counterexample(*p.tuples(), event, float(ev.p[i]), float(ev.q[i]),
                          Interval(float(ev.p_lo[i]), 1.0), Interval(0.0, float(ev.q_hi[i])))


def _rho_lb(points: list) -> float:
    """ρ_LB (:mod:`dpaudit.curves.band`): the largest ρ whose implied curve a point's δ_LB reaches."""
    best = 0.0
    for e, _, v, _, _ in points:
        if v > 0:
            best = max(best, rho_for_delta(e, v))
    return best


def _reproduce(spec: MechanismSpec, claim: CurveClaim, samples: int, confidence: float, seed: int,
               band: str, grid: Optional[np.ndarray], k: int, early_stop: bool = True) -> str:
    """The Python call that reruns the audit (floats written to read back exactly)."""
    from dpaudit.reproduce import number

    f = spec.func
    name = getattr(f, "__name__", "mechanism")
    module = getattr(f, "__module__", None)
    head = (f"from {module} import {name}; "
            if module and module != "__main__" and getattr(f, "__qualname__", name) == name else "")
    rec = claim.to_record()
    arg = {"gdp": lambda: f"mu={number(rec['mu'])}", "zcdp": lambda: f"rho={number(rec['rho'])}",
           "rdp": lambda: "renyi=[" + ", ".join(f"({number(a)}, {number(e)})" for a, e in rec["renyi"]) + "]",
           "profile": lambda: "profile=PROFILE"}[rec["type"]]()
    extra = "" if grid is None else ", grid=[" + ", ".join(number(e) for e in grid) + "]"
    if band != "cp":
        extra += f", band={band!r}"
    if k != THRESHOLDS:
        extra += f", thresholds={k}"
    if not early_stop:
        extra += ", early_stop=False"
    line = (f"import dpaudit.curves; {head}dpaudit.curves.curve_audit({name}, {arg}, "
            f"neighbours={spec.neighbours.value!r}, domain=({number(spec.domain.lo)}, "
            f"{number(spec.domain.hi)}), size={int(spec.size)}, samples={int(samples)}, "
            f"confidence={number(confidence)}, seed={int(seed)}{extra})")
    if rec["type"] == "profile":
        line += f"  # PROFILE: the profile given ({claim.name})"
    return line


@dataclass(slots=True)
class _Look:
    """What one look of a curve audit saw (its run, the chosen pair, score and projection, the
    validated events, the validation size) and decided; ``k`` the thresholds it validated at most."""

    run: "_Run"
    k: int = THRESHOLDS
    pair: Optional[Pair] = None
    score: Any = None
    proj: Optional[Projection] = None
    picks: list = dc_field(default_factory=list)
    ev: Optional[Events] = None
    n: int = 0
    nan_seen: bool = False
    error: Optional[MechanismError] = None
    points: list = dc_field(default_factory=list)

    @property
    def samples(self) -> int:
        """The mechanism calls of this look (the group-sequential driver adds them up)."""
        return self.run.sampler.used

    @property
    def refuted(self) -> bool:
        return any(v - c > 0 for _, c, v, _, _ in self.points)

    @property
    def timed_out(self) -> bool:
        """Whether the look's time ran out before it drew all it would have."""
        return self.run.sampler.time_cut

    @property
    def validated(self) -> bool:
        """Whether the look has a lower curve from validation samples."""
        return self.ev is not None and self.ev.size > 0 and self.n > 0

    @property
    def focus(self) -> Optional[dict]:
        """Where the claimed and the observed curves are easiest to separate, as the selection
        split saw it: the ε of the largest projected ratio δ_LB/δ_claim (and, for a zCDP or RDP
        claim, the Rényi order whose bound gives δ_claim there)."""
        if self.proj is None or self.proj.ratios.size == 0:
            return None
        g = int(np.unravel_index(int(np.argmax(self.proj.ratios)), self.proj.ratios.shape)[2])
        e = float(self.run.grid[g])
        out = {"epsilon": e, "projected_ratio": float(np.max(self.proj.ratios)),
               "basis": "selection split (no validation sample)"}
        order = binding_order(self.run.claim, e)
        if order is not None:
            out["renyi_order"] = order
        return out


def _one_look(spec: MechanismSpec, claim: CurveClaim, eps: np.ndarray, executor: Any, budget: int,
              confidence: float, seed: int, band: str, k: int,
              deadline: Optional[float] = None) -> _Look:
    """One complete curve audit (search, select, validate on its own samples) at ``budget`` and
    ``confidence``, validating at most ``k`` (threshold, orientation) pairs; under a ``deadline``
    it stops drawing when its time is spent (the search at 35% of it, the selection at
    :data:`SELECT_TIME`), and its lower curve is that of the validation samples drawn by then."""
    run = _Run(spec, claim, eps, executor, budget, confidence, seed, band, k, deadline)
    look = _Look(run, k)
    try:
        run.search_pairs()
        chosen = run.select()
        if chosen is not None:
            look.pair, look.score, look.proj = chosen
            look.picks = look.proj.choose(k, mu_first=isinstance(claim, GaussianDP)) if band == "cp" else []
            look.ev, look.n, look.nan_seen = run.validate(look.pair, look.score, look.picks)
    except TimeLimitReached:  # the sandbox's hard limit, before any validation sample
        run.sampler.time_cut = True
        return look
    except MechanismError as exc:
        look.error = exc
        return look
    if look.validated:
        look.points = _points(claim, eps, run.dclaim, look.ev)
    return look


class CurveObjective:
    """The curve gap as an objective of the group-sequential run
    (:class:`dpaudit.auditing.looks.Objective`, driven by :func:`dpaudit.auditing.looks.drive`):
    a look is one complete curve audit on its own samples (:func:`_one_look`: the pair and the
    score chosen on the selection split by the projected max_ε δ_LB(ε)/δ_claim(ε), the band from
    the validation counts at the look's α_j), and it settles the run when the validated lower
    curve crosses the claimed one, max_ε δ_LB(ε) − δ_claim(ε) > 0, or the mechanism failed. The
    early looks validate at most :data:`EARLY_THRESHOLDS` events (a smaller K, a larger
    α_j/(2K) each), the final look ``k``. A look given a ``timeout`` (its share of the run's time,
    from the driver) stops drawing when it is spent (:func:`_one_look`); ``progress`` is not
    used."""

    def __init__(self, spec: MechanismSpec, claim: CurveClaim, eps: np.ndarray, executor: Any,
                 band: str, k: int) -> None:
        self.spec, self.claim, self.eps, self.executor, self.band, self.k = spec, claim, eps, executor, band, k

    def look(self, j: int, budget: int, confidence: float, seed: int, timeout: Optional[float],
             progress: Optional[Callable]) -> _Look:
        k = self.k if j < 0 else min(self.k, EARLY_THRESHOLDS)
        deadline = None if timeout is None else time.monotonic() + max(0.0, timeout)
        return _one_look(self.spec, self.claim, self.eps, self.executor, budget, confidence, seed,
                         self.band, k, deadline)

    def settles(self, j: int, look: _Look) -> bool:
        return look.error is not None or look.refuted

    def entry(self, number: int, budget: int, look: _Look, alpha: float) -> dict:
        best = max((v - c for _, c, v, _, _ in look.points), default=None)
        mu = look.ev.mu_lb()[0] if look.ev is not None and look.ev.size else None
        return {"look": number, "budget": budget, "samples": look.samples, "alpha": alpha,
                "thresholds": look.k, "refuted": look.refuted, "largest_gap": best,
                "mu_lower_bound": mu, "focus": look.focus}


@dataclass(frozen=True, slots=True)
class _Args:
    """The curve audit's checked arguments."""

    spec: MechanismSpec
    claim: CurveClaim
    eps: np.ndarray
    given_grid: Optional[np.ndarray]
    band: str
    k: int
    budget: int
    confidence: float
    seed: int
    early_stop: bool
    executor: Any
    timeout: Optional[float] = None
    stated_timeout: Optional[float] = None


def _arguments(f: Any, claim_args: dict, where: dict, samples: Optional[int], confidence: float,
               seed: Optional[int], grid: Any, band: str, thresholds: int, executor: Any,
               early_stop: bool, timeout: Any = None, stated_timeout: Any = None) -> _Args:
    """Check :func:`curve_audit`'s arguments (raising InvalidArgument) and fill the defaults."""
    if all(v is None for v in claim_args.values()):
        stated = _declared_curve(f)  # the claim @dpaudit.mechanism(mu=…) declares, if any
        claim_args = {k: stated.get(k) for k in ("rho", "mu", "renyi", "profile")}
    claim = curve_claim(**claim_args)
    spec = _spec(f, where)
    confidence = check_confidence(confidence)
    seed = check_seed(seed)
    check_records(spec.size, spec.neighbours)
    check_executor(executor)
    k = check_count(thresholds, "thresholds")
    if band not in BANDS:
        raise InvalidArgument.bad("band", band, "one of " + ", ".join(BANDS))
    budget = check_samples(samples) or (DEFAULT_SAMPLES_BATCH if spec.call_form is CallForm.BATCH
                                        else DEFAULT_SAMPLES_LOOP)
    given_grid = None if grid is None else check_grid(grid)
    eps = default_grid(claim) if given_grid is None else given_grid
    return _Args(spec, claim, eps, given_grid, band, k, budget, confidence, seed, bool(early_stop),
                 executor or InProcessExecutor(), check_seconds(timeout, "timeout"),
                 check_seconds(stated_timeout, "stated_timeout"))


def curve_audit(f: Any, *, rho: Any = None, mu: Any = None, renyi: Any = None, profile: Any = None,
                neighbours: Any = None, domain: Any = None, size: Any = None,
                samples: Optional[int] = None, confidence: float = 0.95, seed: Optional[int] = None,
                grid: Any = None, band: str = "cp", thresholds: int = THRESHOLDS,
                executor: Any = None, early_stop: bool = True, timeout: Optional[float] = None,
                stated_timeout: Optional[float] = None) -> CurveResult:
    """Audit the mechanism ``f``'s privacy curve against one curve claim; return a frozen
    :class:`~dpaudit.curves.result.CurveResult` (module docstring).

    The claim is exactly one of ``rho`` (ρ-zCDP), ``mu`` (μ-GDP), ``renyi`` (a list of
    (α, ε_α)) or ``profile`` (a callable δ(ε), an OpenDP ``PrivacyProfile``, a dp-accounting
    ``PrivacyLossDistribution``): :mod:`dpaudit.curves.claims` says which curve each means. With
    none given, the one ``@dpaudit.mechanism(rho=… | mu=… | renyi=… | profile=…)`` declares.
    ``f`` is a (decorated) function or a :class:`~dpaudit.spec.MechanismSpec`; ``neighbours``,
    ``domain`` and ``size`` are those of :func:`dpaudit.mechanism`. ``samples`` is the total
    number of mechanism calls (default 4·10⁶ with a batch form, 4·10⁵ without), ``confidence``
    holds for every bound of the result at once, ``seed`` (recorded) makes the run reproducible,
    ``grid`` the ε at which the curves are printed and compared (default: 41 points from 0 to
    where the claimed δ falls below 10⁻⁶), ``band`` ``"cp"`` or ``"dkw"``
    (:mod:`dpaudit.curves.band`), ``thresholds`` the K of ``cp``, ``executor`` runs the batches
    (default: in process). ``early_stop`` (default) runs the audit as a group-sequential test
    (the looks of :mod:`dpaudit.auditing.schedule`, driven by :func:`dpaudit.auditing.looks.drive`
    with :class:`CurveObjective`: each a complete curve audit on its own samples at its share of
    α, stopping at the first that refutes; the early looks validate :data:`EARLY_THRESHOLDS`
    events chosen where the curves are easiest to separate); False spends the whole budget at
    once. ``timeout`` (seconds) bounds the run: each look gets its share of it and stops drawing
    when that is spent (between batches: a batch under way finishes), and a run cut short reports
    the lower curve of the validation samples it drew (from the last look that drew any), or is
    INCONCLUSIVE when it drew none, with a note naming the limit (``details["note"]``;
    ``stated_timeout``: the whole limit as the user gave it, ``--timeout``, when ``timeout`` is
    what is left of it). A mechanism that fails gives an ERROR result, never an exception;
    invalid arguments raise :class:`~dpaudit.errors.InvalidArgument`.
    """
    a = _arguments(f, {"rho": rho, "mu": mu, "renyi": renyi, "profile": profile},
                   {"neighbours": neighbours, "domain": domain, "size": size}, samples, confidence,
                   seed, grid, band, thresholds, executor, early_stop, timeout, stated_timeout)
    t0 = time.monotonic()
    left = a.timeout
    if left is not None:
        # the bounds' first use imports scipy.special (seconds on a busy machine): done now, on
        # the clock, so the looks' shares of the time are of what is left after it
        cp_lower(0, 1, 0.5)
        left = max(0.001, left - (time.monotonic() - t0))
    # the curve's final look counts its thresholds whole: no validation prefixes
    plan = replace(schedule(a.budget, a.confidence), final_stages=()) if a.early_stop else None
    looks = drive(CurveObjective(a.spec, a.claim, a.eps, a.executor, a.band, a.k), plan,
                  budget=a.budget, confidence=a.confidence, seed=a.seed, timeout=left)
    sequential = looks.record
    if sequential is not None:
        sequential["early_thresholds"] = min(a.k, EARLY_THRESHOLDS)
    look = looks.last
    cut = None
    if (looks.timed_out or look.timed_out) and look.error is None:
        # the last look that drew validation samples is reported (each look's bounds hold at
        # its own α_j, so which one is reported keeps the family-wise level)
        look = next((x for x in reversed(looks.results) if x.validated and x.error is None), look)
        cut = _time_note(a, look, looks.samples)
    return _result(a, look, looks.samples, sequential, t0, cut)


def _time_note(a: _Args, look: _Look, used: int) -> str:
    """What a run cut short by its time limit says: the limit as given, what it had drawn."""
    from dpaudit.reproduce import number

    limit = (f"--timeout {number(a.stated_timeout)}" if a.stated_timeout is not None
             else f"timeout={number(a.timeout)}")
    head = f"the time limit ({limit} s) was reached after {used:,} of {a.budget:,} samples"
    if not look.validated:
        return (f"{head}, before any validation sample: no lower curve (a longer time limit or "
                f"fewer samples would let it finish)")
    return f"{head}: the lower curve is from the {look.n:,} validation samples per dataset drawn by then"



def _result(a: _Args, look: _Look, used: int, sequential: Optional[dict], t0: float,
            cut: Optional[str] = None) -> CurveResult:
    """The frozen result of the look that ended the run: ERROR, NOT REFUTED with nothing
    validated (INCONCLUSIVE when the time limit, ``cut`` its note, left nothing validated), or the
    verdict of its validated lower curve."""
    run = look.run
    common = dict(target=a.spec.name, claim=a.claim, neighbours=a.spec.neighbours,
                  confidence=a.confidence, epsilons=tuple(float(e) for e in a.eps),
                  delta_claim=tuple(float(d) for d in run.dclaim),
                  reproduce=_reproduce(a.spec, a.claim, a.budget, a.confidence, a.seed, a.band,
                                       a.given_grid, a.k, a.early_stop),
                  seed=a.seed, domain=a.spec.domain, size=a.spec.size)
    seen = dict(phases=run.phases, sequential=sequential, focus=look.focus,
                timed_out=True if cut is not None else None, note=cut)
    if look.error is not None:
        exc = look.error
        details = CurveDetails(band=a.band, level=0.0, thresholds=0, pair_label="", score="",
                               score_record={}, validation={}, projected_ratio=None,
                               error_dataset=None if exc.dataset is None else np.asarray(exc.dataset).tolist(),
                               **seen)
        return CurveResult(verdict=Verdict.ERROR, samples=used, point=None,
                           delta_lower_bound=tuple(0.0 for _ in a.eps), mu_lower_bound=None,
                           rho_lower_bound=None, elapsed_s=time.monotonic() - t0, error=str(exc),
                           details=details, **common)
    schema = run.encoder.schema
    output_kind = None if schema is None else schema.description
    if not look.validated:
        pair, score, n = look.pair, look.score, look.n
        vacuous = None if cut is not None else _out_of_reach(a, used)
        details = CurveDetails(band=a.band, level=0.0, thresholds=0, pair_label="" if pair is None else pair.label,
                               score="" if score is None else score.describe(),
                               score_record={} if score is None else score.to_record(),
                               validation={"n_D": n, "n_D_prime": n}, projected_ratio=None,
                               output_kind=output_kind, out_of_reach=vacuous, **seen)
        return CurveResult(verdict=(Verdict.INCONCLUSIVE if cut is not None or vacuous else Verdict.NOT_REFUTED),
                           samples=used, point=None,
                           delta_lower_bound=tuple(0.0 for _ in a.eps), mu_lower_bound=0.0,
                           rho_lower_bound=0.0, elapsed_s=time.monotonic() - t0,
                           margin=tuple(math.nan for _ in a.eps), details=details, **common)
    return _validated_result(a, look, used, t0, common, seen, output_kind)


def _out_of_reach(a: _Args, used: int, look: Optional[_Look] = None) -> Optional[str]:
    """Why a NOT REFUTED of this run would say nothing, or None: no counts of the look's band on
    its validation samples a dataset put a lower curve above the claimed one at any ε
    (:func:`dpaudit.estimators.limits.curve_reach`), each bound at the look's α/2 (for ``cp``, as
    if it had picked one threshold, not K: the level the fewest thresholds would give). For a run
    that validated nothing (``look`` None), all its ``used`` samples stand in as validation, at
    the run's α/2."""
    from dpaudit.estimators.limits import curve_reach

    if look is None:
        band, n, level = "cp", used // 2, (1.0 - a.confidence) / 2.0
        what, tail = f"it validated no event, and no counts on all its {used:,} samples", ""
    else:
        ev = look.ev
        band, n = ev.band, look.n
        level = ev.level * max(1, len(look.picks)) if band == "cp" else ev.level
        what, tail = f"on its {n:,} validation samples a dataset no counts", ", whatever the outputs"
    reach = curve_reach(a.claim.delta, band, n, level, used)
    if reach is None:
        return None
    return reach.text(f"{what} give a lower curve above the claimed {a.claim.text} curve at any ε{tail}")


def _validated_result(a: _Args, look: _Look, used: int, t0: float, common: dict, seen: dict,
                      output_kind: Optional[str]) -> CurveResult:
    """REFUTED when δ_LB(ε) > δ_claim(ε) at some ε evaluated (its point the largest gap), else
    NOT REFUTED with the closest approach (the largest δ_LB/δ_claim) as its point."""
    ev, pair, score, n, pts = look.ev, look.pair, look.score, look.n, look.points
    lb, idx = ev.delta_lb(a.eps)
    best = max(pts, key=lambda p: p[2] - p[1])
    refuted = best[2] - best[1] > 0
    vacuous = None if refuted else _out_of_reach(a, used, look)
    if vacuous:
        seen = {**seen, "out_of_reach": vacuous}
    if not refuted:  # the closest approach: the largest δ_LB/δ_claim (the gap is largest where both vanish)
        best = max(pts, key=lambda p: (p[2] / p[1] if p[1] > 0 else (math.inf if p[2] > 0 else -1.0), p[2]))
    e, c, v, i, on_grid = best
    cx = None if i < 0 else _counterexample(pair, score, ev, i, look.run.encoder.atom, look.nan_seen)
    mu_lb, _ = ev.mu_lb()
    level = ev.level
    details = CurveDetails(band=a.band, level=level,
                           thresholds=len(look.picks) if a.band == "cp" else ev.size // 2,
                           pair_label=pair.label, score=score.describe(), score_record=score.to_record(),
                           validation={"n_D": n, "n_D_prime": n}, projected_ratio=look.proj.objective,
                           events=ev.to_record() if a.band == "cp" else None,
                           output_kind=output_kind, **seen)
    return CurveResult(verdict=(Verdict.REFUTED if refuted else Verdict.INCONCLUSIVE if vacuous
                                else Verdict.NOT_REFUTED),
                       samples=used, delta_lower_bound=tuple(float(x) for x in lb),
                       point=CurvePoint(e, c, v, cx, on_grid), mu_lower_bound=mu_lb,
                       rho_lower_bound=_rho_lb(pts), elapsed_s=time.monotonic() - t0,
                       margin=tuple(float(m) for m in ev.margin(a.eps, idx)), details=details,
                       limits=curve_limits(n, level), **common)
