"""Hypothesis search for sensitivity violations: :func:`check_sensitivity`.

For neighbours D ~ D' (docs/math.md#neighbour-relations) the claim is ``‖f(D) − f(D')‖ ≤ Δ`` (global sensitivity), or in
Cummings and Durfee (2020)'s individual model ``‖f(D ∪ {i}) − f(D)‖ ≤ Δ_i`` (Definition 2.3; docs/math.md#individual-model), or for a
utility ``sup_r |u(D, r) − u(D', r)| ≤ Δu`` (MT07; docs/math.md#em-range). The search:

1. draws neighbouring pairs from :mod:`dpaudit.neighbours.strategies` (domain ends, duplicates,
   clusters, tiny and large sizes, float-limit values; every relation; the individual model),
   then the order of their records (:mod:`dpaudit.sensitivity.orders`: a float sum's rounding
   depends on it);
2. steers hypothesis with ``hypothesis.target`` on the gap ``‖f(D) − f(D')‖`` and on
   gap / bound, so its hill climber pushes each drawn value toward larger gaps;
3. stops at the first violation (gap above the bound, see :mod:`dpaudit.sensitivity.problem`) or
   the first failure of ``f`` (raise, NaN, ±inf, None, shape change), lets hypothesis shrink it,
   then simplifies the concrete pair (:mod:`dpaudit.sensitivity.simplify`, with the shared pair
   search's :func:`dpaudit.search.pairs.shrink`: the fewest records, then simpler values);
4. when hypothesis found nothing, scores the shared pair search's numeric corners
   (:func:`dpaudit.search.pairs.corners`: sums crossing 2^50 and 2^53, float32 and float64
   limits and subnormals, ties at a threshold, odd and even sizes; at most ``examples`` of them,
   counted in ``evaluations`` and ``details["corner_pairs"]``, not in ``examples``), then
   simplifies a failure as in step 3.

The run is deterministic: hypothesis is seeded from ``seed`` (``hypothesis.seed``), with no
example database, no deadline, no constants drawn from the source of imported modules
(:mod:`dpaudit.search.seeded`), health checks off and its output silenced; the counterexample is
captured by the search itself. A ``"thorough"`` profile runs 20 times more examples.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Optional, Union

import numpy as np
from hypothesis import HealthCheck, Phase, Verbosity, given, reject, settings, target
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.errors import HypothesisException

from dpaudit.errors import InvalidArgument
from dpaudit.neighbours.pair import Pair
from dpaudit.neighbours.strategies import elements, neighbouring_pairs
from dpaudit.results import Verdict
from dpaudit.rng import check_seed
from dpaudit.validation import check_seconds
from dpaudit.search.pairs import corners
from dpaudit.search.seeded import seed_only
from dpaudit.sensitivity.orders import reorder
from dpaudit.sensitivity.problem import BadOutput, OutOfDomain, Problem, make_problem
from dpaudit.sensitivity.reproduce import reproduce_snippet
from dpaudit.sensitivity.result import SensitivityExample, SensitivityResult, time_limit_note
from dpaudit.sensitivity.simplify import Case, simplify

__all__ = ["Profile", "PROFILES", "check_sensitivity"]

_TARGET_CAP = 1e300  # hypothesis.target needs finite scores


@dataclass(frozen=True, slots=True)
class Profile:
    """How hard to search: ``examples`` pairs by default, ``simplify_evals`` pairs at most for
    the post-shrink simplification. ``ci`` is the default; ``thorough`` is for long runs."""

    name: str
    examples: int
    simplify_evals: int = 500


PROFILES = {
    "ci": Profile("ci", 1_000, 500),
    "thorough": Profile("thorough", 20_000, 5_000),
}


def _profile(profile: Union[str, Profile]) -> Profile:
    if isinstance(profile, Profile):
        return profile
    if isinstance(profile, str) and profile in PROFILES:
        return PROFILES[profile]
    raise InvalidArgument.bad("profile", profile, f"one of {', '.join(PROFILES)} or a Profile")


# --------------------------------------------------------------------------- strategies

def _outputs(draw, p: Problem, pair: Pair, free: st.SearchStrategy[float]) -> float:
    """The utility argument r: a record of either dataset, the float just below or above one, the
    midpoint of two records, an end of the output domain, or any value of the output domain.
    The same choices are drawn whatever the kind (a fixed-length sequence keeps hypothesis's
    hill climber aligned)."""
    dom = p.outputs
    records = np.concatenate([pair.dataset.reshape(-1), pair.neighbour.reshape(-1)])
    top = max(len(records) - 1, 0)
    kind, value = draw(_KIND), draw(free)
    ia, ib, high = draw(st.integers(0, top)), draw(st.integers(0, top)), draw(st.booleans())
    if kind == 0 or len(records) == 0:
        return value
    if kind == 5:
        return dom.hi if high else dom.lo
    a = float(records[ia])
    if kind == 1:
        v = a
    elif kind == 2:
        v = float(np.nextafter(a, -np.inf))
    elif kind == 3:
        v = float(np.nextafter(a, np.inf))
    else:
        v = 0.5 * a + 0.5 * float(records[ib])
    return min(max(v, dom.lo), dom.hi)


_KIND = st.integers(0, 5)


def _cases(p: Problem, state: Optional["_State"] = None) -> st.SearchStrategy[Case]:
    pairs = neighbouring_pairs(p.neighbours, p.domain, p.sizes, integers=p.integers, dim=p.dim,
                               individuals=None if p.individual is None else len(p.individual))
    free = None if p.outputs is None else elements(p.outputs)

    @st.composite
    def cases(draw):
        if state is not None:
            state.draws += 1
            if state.draws > state.draw_cap:
                raise _OutOfBudget()
        pair = reorder(draw, draw(pairs))
        return Case(pair, _outputs(draw, p, pair, free) if free is not None else None)

    return cases()


# --------------------------------------------------------------------------- search

class _Found(Exception):
    """Raised inside the hypothesis test to mark a failing pair (a violation or an error)."""


class _OutOfBudget(BaseException):
    """Raised from the strategy to end a hypothesis run that spends its calls on inputs that
    never reach the test (a BaseException, so hypothesis lets it through instead of shrinking)."""


#: A run may draw at most this many inputs per example asked for (overruns included), plus
#: _SHRINK_DRAWS once a failure is being shrunk. Hypothesis's target phase can otherwise spin on
#: overrunning re-executions for minutes (seen with max_examples >= 1000 on a flat target).
_DRAWS_PER_EXAMPLE = 2
_SHRINK_DRAWS = 20_000
#: Examples per hypothesis run. Hypothesis interleaves its target phase with generation from
#: max_examples = 1000 on, and that schedule is the one seen to spin; below it, one target pass
#: runs per round. A search is a sequence of such rounds, each seeded from (seed, round).
_CHUNK = 500
#: Extra rounds allowed beyond ceil(examples / _CHUNK), for rounds cut short.
_EXTRA_ROUNDS = 4


class _State:
    """Book-keeping of one search (private and short-lived; the result is frozen)."""

    def __init__(self) -> None:
        self.examples = 0
        self.evaluations = 0
        self.skipped = 0
        self.found = False
        self.last: Optional[tuple[Case, Any]] = None   # (case, outcome) of the last failing call
        self.max_gap = 0.0
        self.max_ratio = 0.0
        self.tightest: Optional[SensitivityExample] = None
        self.draws = 0
        self.draw_cap = 0
        self.rounds = 0
        self.corners = 0
        self.deadline: Optional[float] = None  # time.monotonic() of the time limit, if any
        self.timed_out = False
        self.slowest = 0.0  # the longest evaluation so far (seconds)


def _out_of_time(state: _State) -> bool:
    """Whether the next evaluation would end past the time limit (the longest so far predicts
    it); once true, it stays true."""
    if state.deadline is not None and time.monotonic() + state.slowest >= state.deadline:
        state.timed_out = True
    return state.timed_out


def _example(p: Problem, case: Case, gap: Optional[float], fa: Any, fb: Any,
             r: Optional[float]) -> SensitivityExample:
    pair = case.pair
    return SensitivityExample(
        dataset=tuple(pair.dataset.tolist()), neighbour=tuple(pair.neighbour.tolist()),
        f_dataset=fa, f_neighbour=fb, gap=gap, allowed=p.allowed(pair.individual),
        individual=pair.individual,
        ids=None if pair.dataset_ids is None else tuple(int(i) for i in pair.dataset_ids),
        neighbour_ids=None if pair.neighbour_ids is None else tuple(int(i) for i in pair.neighbour_ids),
        output=r)


def _evaluate(p: Problem, case: Case,
              state: Optional[_State] = None) -> tuple[float, Any, Any, Optional[float]]:
    pair = case.pair
    t0 = time.monotonic()
    try:
        return p.gap(pair.dataset, pair.neighbour, pair.dataset_ids, pair.neighbour_ids, case.r)
    finally:
        if state is not None:
            state.slowest = max(state.slowest, time.monotonic() - t0)


def _ratio(gap: float, allowed: float) -> float:
    if allowed == 0.0:
        return 0.0 if gap == 0.0 else float("inf")
    return gap / allowed


def _search(p: Problem, examples: int, seed: int, deadline: Optional[float] = None) -> _State:
    """Run hypothesis until ``examples`` pairs were evaluated or a failure was found.

    The search is a sequence of hypothesis runs (rounds) of at most :data:`_CHUNK` examples, each
    seeded from (seed, round) and capped in draws (:data:`_DRAWS_PER_EXAMPLE`); a round cut short
    leaves its remaining examples to the next. Everything depends on the seed and on call counts
    only, never on time.
    """
    state = _State()
    state.deadline = deadline

    def probe(case: Case) -> None:
        if _out_of_time(state):
            raise _OutOfBudget()
        state.evaluations += 1
        try:
            gap, fa, fb, r = _evaluate(p, case, state)
        except OutOfDomain:
            state.skipped += 1
            reject()
        except BadOutput as bad:
            _mark_found(state)
            state.last = (case, bad)
            raise _Found() from None
        if not state.found:
            state.examples += 1
        allowed = p.allowed(case.pair.individual)
        ratio = _ratio(gap, allowed)
        # With one global bound, gap and gap/bound order examples identically: one target is
        # enough. Individual bounds Δ_i differ per pair, so both are climbed.
        target(min(gap, _TARGET_CAP), label="gap")
        # the gap beyond the rounding tolerance: large sums that round (tolerated) no longer
        # outscore small cancelling ones that round the same way (the violations)
        target(max(min(p.excess(gap, allowed, fa, fb), _TARGET_CAP), -_TARGET_CAP), label="excess")
        if p.individual is not None:
            target(min(ratio, _TARGET_CAP), label="gap/bound")
        if gap > state.max_gap:
            state.max_gap = gap
        if ratio > state.max_ratio or state.tightest is None:
            state.max_ratio = max(ratio, state.max_ratio)
            state.tightest = _example(p, case, gap, fa, fb, r)
        if p.violates(gap, allowed, fa, fb):
            _mark_found(state)
            state.last = (case, (gap, fa, fb, r))
            raise _Found()

    for rnd in range(-(-examples // _CHUNK) + _EXTRA_ROUNDS):
        chunk = min(examples - state.examples, _CHUNK)
        if chunk <= 0 or state.found or state.timed_out:
            break
        before = state.examples
        state.rounds += 1
        state.draws, state.draw_cap = 0, _DRAWS_PER_EXAMPLE * chunk + 100
        test = settings(
            max_examples=chunk, database=None, derandomize=False, deadline=None,
            verbosity=Verbosity.quiet, print_blob=False, report_multiple_bugs=False,
            suppress_health_check=list(HealthCheck),
            phases=(Phase.generate, Phase.target, Phase.shrink),
        )(given(_cases(p, state))(probe))
        test = hypothesis_seed(_round_seed(seed, rnd))(test)
        try:
            with seed_only():  # the draws depend on the seed only, not on the modules imported
                test()
        except (_Found, _OutOfBudget):
            pass
        except HypothesisException:
            # Flaky (f not deterministic) or Unsatisfiable (every input out of domain): the state
            # still holds the last failing pair, if any; the caller reports what it has.
            pass
        if state.examples == before:   # nothing evaluated: more rounds will not help
            break
    return state


def _corners(p: Problem, state: _State, seed: int, cap: int) -> None:
    """Step 4 of the module docstring: the shared pair search's numeric corners
    (:func:`dpaudit.search.pairs.corners`), at most ``cap`` of them, each scored like a drawn
    pair; the first violation or failure of ``f`` is kept for simplifying. Not for the individual
    model, records in domain^k or a searched utility argument (the corners are plain records)."""
    if p.individual is not None or p.dim is not None or p.outputs is not None:
        return
    pairs = corners(p.neighbours, p.domain, p.sizes.hi, seed, sizes=(p.sizes.lo, p.sizes.hi),
                    integers=p.integers)[:cap]
    for pair in pairs:
        if _out_of_time(state):
            return
        case = Case(pair)
        state.evaluations += 1
        state.corners += 1
        try:
            gap, fa, fb, r = _evaluate(p, case, state)
        except OutOfDomain:
            state.skipped += 1
            continue
        except BadOutput as bad:
            state.found, state.last = True, (case, bad)
            return
        allowed = p.allowed(None)
        ratio = _ratio(gap, allowed)
        state.max_gap = max(state.max_gap, gap)
        if ratio > state.max_ratio or state.tightest is None:
            state.max_ratio = max(ratio, state.max_ratio)
            state.tightest = _example(p, case, gap, fa, fb, r)
        if p.violates(gap, allowed, fa, fb):
            state.found, state.last = True, (case, (gap, fa, fb, r))
            return


def _mark_found(state: _State) -> None:
    if not state.found:
        state.found = True
        state.draw_cap = state.draws + _SHRINK_DRAWS


def _round_seed(seed: int, rnd: int) -> int:
    """The hypothesis seed of round ``rnd``: the run's seed itself, then SeedSequence children."""
    if rnd == 0:
        return seed
    return int(np.random.SeedSequence([seed, rnd]).generate_state(1)[0])


def _still_fails(p: Problem, kind: str, state: Optional[_State] = None) -> Callable[[Case], bool]:
    def fails(case: Case) -> bool:
        if state is not None and _out_of_time(state):
            return False  # the time limit: simpler pairs are not tried
        try:
            gap, fa, fb, _ = _evaluate(p, case, state)
        except OutOfDomain:
            return False
        except BadOutput as bad:
            return kind != "violation" and bad.message.split(":")[0] == kind
        if kind != "violation":
            return False
        return p.violates(gap, p.allowed(case.pair.individual), fa, fb)

    return fails


# --------------------------------------------------------------------------- public

def check_sensitivity(f: Callable, bound: Any = None, *, neighbours: Any, domain: Any, sizes: Any,
                      individual: Any = None, norm: Optional[str] = None,
                      examples: Optional[int] = None, seed: Any = None,
                      profile: Union[str, Profile] = "ci", outputs: Any = None,
                      output_grid: Any = None, out_of_domain: Any = None, ids: Optional[bool] = None,
                      integers: bool = False, dim: Optional[int] = None, rtol: float = 1e-9,
                      target: Optional[str] = None, simplify_pairs: bool = True,
                      timeout: Optional[float] = None,
                      stated_timeout: Optional[float] = None) -> SensitivityResult:
    """Search for neighbouring datasets on which ``f`` breaks its declared sensitivity bound.

    The claim is ``‖f(D) − f(D')‖ ≤ bound`` for neighbours D ~ D' under ``neighbours``
    (``"add-remove"``, ``"replace"``, ``"linf"``, ``"l1"``) with records in ``domain`` and sizes in
    ``sizes`` (an int N for 0..N, or ``(lo, hi)``). ``bound`` is a number or a
    :class:`~dpaudit.claims.SensitivityBound` (its ``individual`` and ``norm`` are used); when it is
    omitted, ``f.sensitivity`` is used.

    * ``individual=(Δ_0, …, Δ_{N−1})``: Cummings and Durfee (2020)'s individual sensitivity (docs/math.md#individual-model): a universe
      of N identities with fixed records; pairs are D and D ∪ {i} and the bound is Δ_i. ``f`` is
      called ``f(data, ids)`` when it takes a second positional argument (or ``ids=True``), else
      ``f(data)``; ``data`` holds the members' records in identity order.
    * ``norm``: ``"l1"``, ``"l2"`` or ``"linf"`` for functions into ℝ^d (scalars: absolute value).
    * ``outputs=(lo, hi)``: ``f`` is a utility u(data, r) and the sensitivity is the sup over r
      too; r is *searched* with the pair (a record, the float next to one, a midpoint of two
      records, an end of ``outputs``, or any value of it). ``output_grid=[r, ...]`` instead takes
      the max over that finite grid for every pair.
    * ``out_of_domain``: an exception class (or tuple) that ``f`` raises on inputs outside its
      domain, or a predicate ``data -> bool``; such inputs are skipped. Any other exception, and
      NaN, ±inf, None or a change of output shape, gives verdict ERROR with that input.
    * ``examples``: pairs to try (default from ``profile``: ``"ci"`` 1,000; ``"thorough"``
      20,000). ``seed`` (default :data:`dpaudit.rng.DEFAULT_SEED`) fixes the whole run.
    * ``integers=True`` draws integer records; ``dim=k`` draws records in domain^k.
    * ``rtol``: relative tolerance for floating-point rounding (see
      :mod:`dpaudit.sensitivity.problem`). ``simplify_pairs=False`` skips the post-shrink pass.
    * ``timeout`` (seconds): no new pair is tried once the next evaluation would end past it
      (the slowest so far predicts it); what was found by then is the result (a counterexample
      is kept as shrunk by then), NOT_REFUTED after the examples tried, or INCONCLUSIVE when
      none was, with ``details["note"]`` naming the limit (``stated_timeout``: the whole limit
      as the user gave it, ``--timeout``, when ``timeout`` is what is left of it).

    Returns a frozen :class:`SensitivityResult`: REFUTED with a shrunk counterexample and a
    Python snippet that recomputes it, NOT_REFUTED after ``examples`` pairs (never "proved"), or
    ERROR. Bad arguments raise :class:`~dpaudit.errors.InvalidArgument`.
    """
    started = time.perf_counter()
    p = make_problem(f, bound, neighbours=neighbours, domain=domain, sizes=sizes,
                     individual=individual, norm=norm, outputs=outputs, output_grid=output_grid,
                     ids=ids, out_of_domain=out_of_domain, integers=integers, dim=dim, rtol=rtol,
                     target=target)
    prof = _profile(profile)
    if examples is None:
        examples = prof.examples
    if isinstance(examples, bool) or not isinstance(examples, int) or examples < 1:
        raise InvalidArgument.bad("examples", examples, "an integer >= 1")
    run_seed = check_seed(seed)
    timeout, stated = check_seconds(timeout), check_seconds(stated_timeout, "stated_timeout")
    limit = None if timeout is None else (
        f"--timeout {stated:g}" if stated is not None else f"timeout={timeout:g}",
        time.monotonic() + timeout)
    # validates the sizes against the relation before any search starts
    _cases(p)

    with warnings.catch_warnings():
        # numpy's RuntimeWarnings from f (0/0, overflow) would repeat for every example; what
        # they signal (NaN, inf) is reported as an ERROR verdict instead.
        warnings.simplefilter("ignore", RuntimeWarning)
        return _check(p, prof, examples, run_seed, started, simplify_pairs, limit)


def _check(p: Problem, prof: Profile, examples: int, run_seed: int, started: float,
           simplify_pairs: bool, limit: Optional[tuple] = None) -> SensitivityResult:
    state = _search(p, examples, run_seed, None if limit is None else limit[1])
    if state.last is None and state.examples:
        _corners(p, state, run_seed, examples)
    details: dict[str, Any] = {"skipped_out_of_domain": state.skipped, "examples_asked": examples,
                               "rounds": state.rounds, "corner_pairs": state.corners}
    if p.outputs is not None:
        details["outputs"] = f"searched over {p.outputs}"
    elif p.output_grid is not None:
        details["outputs"] = f"max over a grid of {len(p.output_grid)} values"

    def result(verdict: Verdict, cex: Optional[SensitivityExample], reproduce: str,
               error: Optional[str] = None, evaluations: int = 0) -> SensitivityResult:
        if state.timed_out:
            details.update(timed_out=True, note=time_limit_note(limit[0], state.examples, examples,
                                                                state.last is not None))
        return SensitivityResult(
            target=p.name, verdict=verdict, bound=p.bound, neighbours=p.neighbours, norm=p.norm,
            max_gap=state.max_gap, ratio=state.max_ratio, counterexample=cex,
            examples=state.examples, elapsed_s=time.perf_counter() - started, reproduce=reproduce,
            individual=p.individual, error=error, tightest=state.tightest,
            evaluations=state.evaluations + evaluations, seed=run_seed, profile=prof.name,
            details=details)

    if state.last is None:
        if state.examples == 0 and state.timed_out:  # no pair tried: nothing is known
            return result(Verdict.INCONCLUSIVE, None, "")
        if state.examples == 0:
            return result(Verdict.ERROR, None, "", error=(
                f"no example could be evaluated: all {state.skipped} inputs drawn were out of domain"))
        return result(Verdict.NOT_REFUTED, None, "")

    case, outcome = state.last
    if isinstance(outcome, BadOutput):
        kind = outcome.message.split(":")[0]
        extra = 0
        if simplify_pairs and not state.timed_out:
            case, extra = _simplify(p, case, kind, prof, state)
            outcome = _error_of(p, case) or outcome
        message = f"{p.name or 'f'} {outcome.message} on the {outcome.which}"
        cex = _example(p, case, None, None, None, case.r)
        return result(Verdict.ERROR, cex, reproduce_snippet(p, case, error=message), error=message,
                      evaluations=extra)

    extra = 0
    if simplify_pairs and not state.timed_out:
        case, extra = _simplify(p, case, "violation", prof, state)
    # cut by the time limit before any simplification: the values found, not called again
    gap, fa, fb, r = outcome if state.timed_out and case is state.last[0] else _evaluate(p, case)
    if r is not None and case.r is None:  # output grid: the r attaining the sup
        case = Case(case.pair, r)
    cex = _example(p, case, gap, fa, fb, r)
    state.max_gap = max(state.max_gap, gap)
    state.max_ratio = max(state.max_ratio, _ratio(gap, cex.allowed))
    return result(Verdict.REFUTED, cex, reproduce_snippet(p, case), evaluations=extra)


def _simplify(p: Problem, case: Case, kind: str, prof: Profile,
              state: Optional[_State] = None) -> tuple[Case, int]:
    fails = _still_fails(p, kind, state)
    if not fails(case):  # not reproducible (f is not deterministic): keep it as found
        return case, 1
    out = p.outputs
    return simplify(case, fails, lo=p.domain.lo, hi=p.domain.hi,
                    min_size=p.sizes.lo, integers=p.integers,
                    output_lo=None if out is None else out.lo,
                    output_hi=None if out is None else out.hi, max_evals=prof.simplify_evals)


def _error_of(p: Problem, case: Case) -> Optional[BadOutput]:
    try:
        _evaluate(p, case)
    except BadOutput as bad:
        return bad
    except OutOfDomain:
        return None
    return None
