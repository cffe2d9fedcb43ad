"""The pair search of a replay audit: patterns, then hypothesis-targeted search, then shrinking,
within a budget of mechanism calls.

Every neighbouring pair costs two calls (the record on D, the replay on D′;
:mod:`dpaudit.replay.compare` reads them). The search, in the style of the sensitivity search
(:mod:`dpaudit.sensitivity`):

1. **warm-up and self-replay**: one plain call (imports done, a failure found before any
   pair), and the first dataset replayed on itself: a replay that does not reproduce its record
   means randomness outside the recording generator (a note; the outputs are then not used as
   evidence);
2. **patterns**: the shared pair search's candidates (:func:`dpaudit.search.pairs.candidates`:
   the relation's structured pairs, float-rounding patterns and numeric corners in turn), at most
   :data:`PATTERN_SHARE` of the budget; with ``nonfinite=True`` also pairs that add or change a
   NaN, +inf or −inf record (a mechanism that clamps its inputs claims privacy for any input);
   a violation among them is shrunk to the fewest records (:func:`dpaudit.search.pairs.shrink`,
   at most :data:`SHRINK_PAIRS` pairs);
3. **targeted search**: pairs drawn by the relation's hypothesis strategy
   (:func:`dpaudit.neighbours.strategies.neighbouring_pairs`), the records in the order drawn,
   sorted or reversed (a float sum's rounding depends on it), steered with ``hypothesis.target``
   toward the accounting excess (the largest ‖Δ input‖ / declared sensitivity, and the ε the
   noise supports / the claimed ε);
4. **shrinking**: a pair that exceeds a declared sensitivity stops the search and hypothesis
   shrinks it, within what is left of the budget;
5. **confirmation** of an unnoised release: a pair whose output still differs with every noisy
   value frozen is replayed on D and on D′ once more with every frozen value (draws, noisy
   sums, primitive outputs) moved by a relative 2⁻²⁰: whatever depends on the noise moves,
   whatever does not stays. In a real-valued output (one that is not all whole numbers: an index
   or a count does not move with a small perturbation), a coordinate that stays on both
   datasets and differs between them is released without noise.

The run is deterministic: each pair's generator is seeded from (seed, pair number), hypothesis
from the seed, with no database and no deadline. At the default budget (:data:`BUDGET` = 200
calls) a mechanism costing 1 s a call gets its verdict in under four minutes.
"""

from __future__ import annotations

import math
import sys
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np
from hypothesis import target

from dpaudit.claims import Domain, Neighbours
from dpaudit.execution.base import interrupt_at
from dpaudit.neighbours.pair import Pair
from dpaudit.neighbours.relations import allowed_sizes
from dpaudit.replay.compare import PairReport, compare
from dpaudit.replay.exact import exact_issue, layout
from dpaudit.replay.generator import RecordingGenerator
from dpaudit.replay.outside import OutsideWatch
from dpaudit.replay.session import MechanismFailed, Run, active
from dpaudit.replay.sites import Site
from dpaudit.replay.tracked import plain_output
from dpaudit.replay.values import flat_output, same
from dpaudit.search.pairs import candidates, drawn, ordered, run_targeted, shrink
from dpaudit.spec import CallForm

__all__ = ["BUDGET", "EXAMPLES", "PATTERN_SHARE", "CONFIRM_PAIRS", "Problem", "MechanismFailed",
           "Outcome", "Engine", "search", "PERTURB", "ordered", "run_targeted"]

#: mechanism calls a replay audit may spend at the default budget
BUDGET = 200
#: hypothesis examples (pairs) at most in the targeted search
EXAMPLES = 60
#: the share of the budget the structured patterns may use
PATTERN_SHARE = 0.4
#: pairs whose unnoised output is confirmed by a perturbed replay (2 calls each)
CONFIRM_PAIRS = 3
#: smaller pairs tried when shrinking a pattern's violation (2 calls each, within the budget)
SHRINK_PAIRS = 20
#: the relative move of every frozen value in the confirming replay: noise-dependent values move
#: by about 1e-6 of themselves, far above float rounding, while a comparison of noisy values
#: flips only when one lies within that distance of the other (probability ~1e-6)
PERTURB = 2.0 ** -20
_CAP = 1e6
#: the seed offset of the fresh-noise run that confirms an exact loss
_FRESH = 7_919_000


@dataclass(frozen=True)
class Problem:
    """A validated replay audit: the function, its call form, the claim and the budget."""

    func: Callable
    name: str
    call_form: CallForm
    epsilon: float
    delta: float
    neighbours: Neighbours
    domain: Domain
    size: int
    seed: int
    budget: int
    examples: int
    nonfinite: bool
    deadline: Optional[float] = None  # time.monotonic() past which no call starts (--timeout)


class _OutOfBudget(BaseException):
    """Raised when the next pair would spend more calls than the budget has left (a
    BaseException, so hypothesis lets it through instead of shrinking it)."""


class _OutOfTime(_OutOfBudget):
    """Raised when the next call would start after the problem's deadline (the run's time
    limit): the search stops where it is, as when the budget is spent."""


class _Found(Exception):
    """Raised inside the hypothesis test on a pair that exceeds a declared sensitivity."""


@dataclass
class Outcome:
    """What the search saw: every pair's report worth keeping, the calls spent, the phases."""

    reports: list = field(default_factory=list)
    violation: Optional[PairReport] = None
    best: Optional[PairReport] = None
    calls: int = 0
    pairs: int = 0
    phases: dict = field(default_factory=dict)
    outside_randomness: Optional[dict] = None
    intercepted: bool = False
    confirmed: list = field(default_factory=list)
    return_site: Optional[Site] = None
    timed_out: bool = False


class Engine:
    """Runs the mechanism under the recorder, pair by pair, counting the calls."""

    def __init__(self, problem: Problem) -> None:
        self.p = problem
        self.calls = 0
        self.pairs = 0
        self.timed_out = False
        code = getattr(_unwrap(problem.func), "__code__", None)
        #: the one line every return of the function is at, when there is one (no hook needed)
        self._return = _single_return(code)
        self._code = None if self._return is not None else code
        #: the generators that outlive a call, read around each one (dpaudit.replay.outside)
        self.outside = OutsideWatch(self)

    def left(self) -> int:
        return self.p.budget - self.calls

    def _args(self, data: np.ndarray, rng: Any) -> tuple:
        return (data,) if self.p.call_form is CallForm.DATA else (data, rng)

    def call(self, data: np.ndarray, mode: str, seed: int, recorded: Optional[Run] = None,
             perturb: float = 0.0, align: Optional[int] = None) -> tuple[Run, Any]:
        """One call of the mechanism under a run (``"record"``, ``"replay"``, or ``"plain"``)."""
        if self.calls + 1 > self.p.budget:
            raise _OutOfBudget()
        if self.p.deadline is not None and time.monotonic() >= self.p.deadline:
            self.timed_out = True
            raise _OutOfTime()
        self.calls += 1
        states = self.outside.before(mode)  # before the rng handed over is made
        bits = np.random.PCG64(np.random.SeedSequence([self.p.seed, seed]))
        run = Run(mode if mode != "plain" else "record", seed, recorded=recorded, perturb=perturb)
        if recorded is not None and recorded.sizes is not None:
            run.sizes, run.align = (recorded.sizes[0], len(data)), align
        elif mode == "record":
            run.sizes = (len(data), len(data))
        rng = RecordingGenerator(bits, None if mode == "plain" else run)
        arr = np.array(data, dtype=float, copy=True)
        returns: list = []
        try:
            # in dpaudit's own process, a call that never returns: TimeLimitReached (its
            # dpaudit_interrupt is re-raised below), which the replay command reports with the
            # call's time, as it does the sandbox's
            with interrupt_at(self.p.deadline, data=data):
                if mode == "plain":
                    out = self.p.func(*self._args(arr, rng))
                else:
                    with active(run), _returns(self._code, returns):
                        out = self.p.func(*self._args(arr, rng))
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            if getattr(exc, "dpaudit_interrupt", False):  # the sandbox's watchdog: not the mechanism's
                raise
            if isinstance(exc, SystemExit):
                raise MechanismFailed(f"called sys.exit({exc.code!r})", np.array(data, dtype=float)) from None
            text = str(exc).splitlines()[0] if str(exc).strip() else ""
            raise MechanismFailed(f"raised {type(exc).__name__}" + (f": {text[:300]}" if text else ""),
                                  np.array(data, dtype=float)) from None
        if returns:
            run.return_site = returns[-1]
        elif self._return is not None:
            run.return_site = self._return
        self.outside.after(states, np.array(data, dtype=float), seed)  # raises on outside noise
        if mode != "plain":
            run.revealed = layout(out)  # type: ignore[attr-defined]
        return run, plain_output(out)

    def evaluate(self, pair: Pair, seed: int) -> PairReport:
        """Record on ``pair.dataset``, replay on ``pair.neighbour``, compare (2 calls)."""
        if self.left() < 2:
            raise _OutOfBudget()
        align = _extra_index(pair)
        rec, out_d = self.call(pair.dataset, "record", seed)
        rep, out_dp = self.call(pair.neighbour, "replay", seed, recorded=rec, align=align)
        self.pairs += 1
        report = compare(rec, rep, out_d, out_dp, pair.dataset, pair.neighbour, pair.label or "",
                         self.p.epsilon, self.p.delta)
        report.intercepted = bool(rec.calls)  # type: ignore[attr-defined]
        report.return_site = rec.return_site or rep.return_site  # type: ignore[attr-defined]
        if report.unnoised:
            report.record = (rec, seed, align)  # type: ignore[attr-defined]
        self._exact(pair, seed, align, rec, rep, report)
        return report

    def _exact(self, pair: Pair, seed: int, align: Optional[int], rec: Run, rep: Run,
               report: PairReport) -> None:
        """An exact loss above the claim (:mod:`dpaudit.replay.exact`), confirmed on the same pair
        with fresh noise (2 more calls; without them, or when the fresh run does not show the same
        release of the noised values with the same loss, the pair is left to the sampling)."""
        issue = exact_issue(rec, rep, report, self.p.epsilon, self.p.delta)
        if issue is None or self.left() < 2:
            return
        fresh = seed + _FRESH
        rec2, out2 = self.call(pair.dataset, "record", fresh)
        rep2, out2p = self.call(pair.neighbour, "replay", fresh, recorded=rec2, align=align)
        again = compare(rec2, rep2, out2, out2p, pair.dataset, pair.neighbour, pair.label or "",
                        self.p.epsilon, self.p.delta)
        second = exact_issue(rec2, rep2, again, self.p.epsilon, self.p.delta)
        if second is None:
            return
        e1, e2 = issue.values["epsilon_exact"], second.values["epsilon_exact"]
        if not (e1 == e2 or abs(e1 - e2) <= 1e-9 * max(abs(e1), abs(e2))):
            return
        report.issues = [i for i in report.issues if i.kind != "composition_excess"] + [issue]


def _extra_index(pair: Pair) -> Optional[int]:
    """For an add-remove pair, the position of the extra record in the larger dataset (the
    pair's own ``index``, else the first position where the two differ, when removing it from
    the larger gives the smaller); None otherwise."""
    a, b = pair.dataset, pair.neighbour
    if abs(len(a) - len(b)) != 1 or a.ndim != 1:
        return None
    big, small = (a, b) if len(a) > len(b) else (b, a)
    if pair.index is not None and 0 <= pair.index < len(big) \
            and np.array_equal(np.delete(big, pair.index), small, equal_nan=True):
        return int(pair.index)
    differ = np.flatnonzero(~((big[:-1] == small) | (np.isnan(big[:-1]) & np.isnan(small))))
    i = int(differ[0]) if differ.size else len(big) - 1
    return i if np.array_equal(np.delete(big, i), small, equal_nan=True) else None


def _unwrap(f: Callable) -> Callable:
    seen = 0
    while hasattr(f, "__wrapped__") and seen < 20:
        f = f.__wrapped__
        seen += 1
    return f


def _single_return(code: Any) -> Optional[Site]:
    """The site of a function whose every return instruction is on one line: where a return
    event would find it (``frame.f_lineno`` there is that instruction's line), read from the
    bytecode once instead of by a profile hook on every call (None: several lines, or none)."""
    import dis
    import linecache

    if code is None:
        return None
    try:
        offsets = [i.offset for i in dis.get_instructions(code)
                   if i.opname in ("RETURN_VALUE", "RETURN_CONST")]
        lines = {line for start, end, line in code.co_lines()
                 if any(start <= o < end for o in offsets)}
    except (TypeError, ValueError):  # pragma: no cover - not a plain code object
        return None
    if len(lines) != 1 or None in lines:
        return None
    line = lines.pop()
    path = code.co_filename
    return Site(path, line, code.co_name, linecache.getline(path, line).strip())


class _returns:
    """A profile hook that notes the line at which the audited function returns (the site where
    its output is released)."""

    def __init__(self, code: Any, sink: list) -> None:
        self.code, self.sink, self.previous = code, sink, None

    def __enter__(self) -> "_returns":
        if self.code is None:
            return self
        self.previous = sys.getprofile()
        code, sink = self.code, self.sink

        def hook(frame: Any, event: str, arg: Any) -> None:
            if event == "return" and frame.f_code is code:
                import linecache

                path = frame.f_code.co_filename
                sink.append(Site(path, frame.f_lineno, frame.f_code.co_name,
                                 linecache.getline(path, frame.f_lineno).strip()))

        sys.setprofile(hook)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.code is not None:
            sys.setprofile(self.previous)


def _keep(out: Outcome, report: PairReport) -> None:
    """Keep a report when it shows something or supports more ε than the best so far."""
    if report.issues or report.unnoised:
        out.reports.append(report)
    if out.best is None or report.score > out.best.score:
        out.best = report


def search(engine: Engine) -> Outcome:
    """Run the phases of the module docstring and return what they saw."""
    p = engine.p
    out = Outcome()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            _run(engine, out)
        except _OutOfBudget:
            pass
    out.calls, out.pairs = engine.calls, engine.pairs
    out.timed_out = engine.timed_out
    out.phases.setdefault("budget", p.budget)
    if engine.timed_out:
        out.phases["stopped"] = "time limit"
    return out


def _run(engine: Engine, out: Outcome) -> None:
    p = engine.p
    patterns = list(candidates(p.neighbours, p.domain, p.size, p.seed, nonfinite=p.nonfinite))
    first = patterns[0] if patterns else None
    if first is None:
        return
    # 1. warm-up (imports, an early failure) and self-replay
    engine.call(first.dataset, "plain", 0)
    rec, out_d = engine.call(first.dataset, "record", 1)
    rep, out_again = engine.call(first.dataset, "replay", 1, recorded=rec)
    out.intercepted = bool(rec.calls)
    if not same(flat_output(out_d) if flat_output(out_d) is not None else out_d,
                flat_output(out_again) if flat_output(out_again) is not None else out_again) \
            and rep.divergence is None:
        out.outside_randomness = {"D": out_d, "replayed": out_again, "dataset": first.dataset}
    out.phases["warm_up"] = {"calls": 3}
    # 2. patterns
    cap = max(4, int(PATTERN_SHARE * p.budget))
    seen = 0
    for k, pair in enumerate(patterns):
        if engine.calls + 2 > cap + 3:
            break
        report = engine.evaluate(pair, 10 + k)
        seen += 1
        out.intercepted = out.intercepted or report.intercepted  # type: ignore[attr-defined]
        _keep(out, report)
        if report.violates():
            out.violation = _shrunk(engine, report, 10 + k)
            break
    out.phases["patterns"] = {"pairs": seen, "of": len(patterns)}
    # 3-4. targeted search, shrinking
    reserve = 2 * CONFIRM_PAIRS
    if out.violation is None and engine.left() > reserve + 2:
        _targeted(engine, out, reserve)
    # 5. confirmation of unnoised releases
    if out.outside_randomness is None:
        _confirm(engine, out)


def _shrunk(engine: Engine, report: PairReport, seed: int) -> PairReport:
    """A pattern's violation shrunk to the fewest records and simpler values while it still
    exceeds a declared sensitivity (:func:`dpaudit.search.pairs.shrink`, 2 calls a try, within
    what is left of the budget; hypothesis shrinks the targeted search's own)."""
    p = engine.p
    last = [report]

    def still_fails(pair: Pair) -> bool:
        if engine.left() < 2 + 2 * CONFIRM_PAIRS:
            raise _OutOfBudget()
        try:
            again = engine.evaluate(pair.relabelled(report.label), seed)
        except MechanismFailed:  # a smaller pair the mechanism refuses: not the same failure
            return False
        if again.violates():
            last[0] = again
            return True
        return False

    start = Pair(report.dataset, report.neighbour, report.label, p.neighbours)
    lo, _ = allowed_sizes(p.neighbours, p.size)
    shrink(start, still_fails, domain=p.domain, min_size=lo, max_evals=SHRINK_PAIRS,
           stop=(_OutOfBudget,))
    return last[0]


def _targeted(engine: Engine, out: Outcome, reserve: int) -> None:
    p = engine.p
    state = {"last": None, "examples": 0}

    def before() -> None:
        if engine.left() < reserve + 2:
            raise _OutOfBudget()

    def probe(pair: Pair) -> None:
        if engine.left() < 2:
            raise _OutOfBudget()
        report = engine.evaluate(pair, 1000 + engine.pairs)
        state["examples"] += 1
        _keep(out, report)
        target(min(report.score, _CAP), label="excess")
        if report.violates():
            state["last"] = report
            raise _Found()

    run_targeted(drawn(p.neighbours, p.domain, p.size, before=before), probe,
                 examples=p.examples, seed=p.seed, stops=(_Found, _OutOfBudget))
    if state["last"] is not None:
        out.violation = state["last"]
    out.phases["search"] = {"pairs": state["examples"], "examples_asked": p.examples}


def _confirm(engine: Engine, out: Outcome) -> None:
    """Confirm unnoised releases (module docstring, step 5): the pair's record is replayed on D
    and on D′ with every frozen value moved by a relative :data:`PERTURB`; an output coordinate
    that differs between D and D′ and does not move on either is not a function of the noise."""
    candidates = [r for r in out.reports if r.unnoised and not r.diverged and hasattr(r, "record")]
    done = 0
    for report in candidates:
        if done >= CONFIRM_PAIRS or engine.left() < 2:
            break
        done += 1
        rec, seed, align = report.record  # type: ignore[attr-defined]
        if not _all_perturbable(rec):
            continue  # an integer draw (geometric, integers) is not moved: its output would not move either
        _, od = engine.call(report.dataset, "replay", seed, recorded=rec, perturb=PERTURB)
        _, odp = engine.call(report.neighbour, "replay", seed, recorded=rec, perturb=PERTURB,
                             align=align)
        fa, fb = flat_output(report.output_d), flat_output(report.output_d_prime)
        pa, pb = flat_output(od), flat_output(odp)
        if any(x is None for x in (fa, fb, pa, pb)) or len({x.shape for x in (fa, fb, pa, pb)}) != 1:
            continue
        values = np.concatenate([fa, fb, pa, pb])
        finite = values[np.isfinite(values)]
        if not finite.size or bool(np.all(finite == np.round(finite))):
            continue    # an all-integer output (an index, a count) may repeat by chance
        coords = []
        for j in report.unnoised:
            if j < 0:
                continue
            a, b, a2, b2 = float(fa[j]), float(fb[j]), float(pa[j]), float(pb[j])
            if _eq(a, a2) and _eq(b, b2) and not _eq(a, b):
                coords.append((j, a, b))
        if coords:
            out.confirmed.append((report, coords))
    out.phases["confirm"] = {"pairs": done}


#: draws that pick or order (indices, subsets): integers that a perturbation need not move
_PICKS = frozenset({"choice", "integers", "permutation", "shuffle", "permuted"})


def _all_perturbable(rec: Any) -> bool:
    """Whether every noise value the record froze is one a perturbed replay moves (floats,
    :func:`dpaudit.replay.session.perturbed`) or a pick (:data:`_PICKS`: an index, a subset):
    integer noise (geometric, Poisson, binomial ...) is answered as it was, so an output computed
    from it (``log(n + int(rng.geometric(p)))``) stays put although it is a function of the noise."""
    for call in getattr(rec, "calls", ()):
        if call.method in _PICKS:
            continue
        v = np.asarray(call.value) if call.value is not None else None
        if v is None or v.dtype.kind != "f":
            return False
    return True


def _eq(x: float, y: float) -> bool:
    return x == y or (math.isnan(x) and math.isnan(y))
