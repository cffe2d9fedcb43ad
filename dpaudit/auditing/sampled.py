"""The sampled audit, phase by phase: search pairs, select events, validate on fresh samples.

1. **patterns**: score every structured pair (:mod:`dpaudit.neighbours.patterns`);
2. **levels** (``linf`` / ``l1``): pattern search over the blocks' base levels and steps
   (:mod:`dpaudit.search.levels`);
3. **search**: hypothesis-targeted search from the relation's strategy (:mod:`dpaudit.search.targeted`);
4. **refine**: hill-climb from the best pairs (:mod:`dpaudit.search.refine`); then the
   **corners**: the float-rounding patterns and the numeric corners of the claim's relation,
   domain and size (:func:`dpaudit.auditing.core.corner_pairs`), on a budget of their own
   (:data:`~dpaudit.auditing.core.CORNER_SHARE` of the search budget, at the patterns' samples
   per pair; one enters the race only where it beats the best pair before it by the search's
   margin), recorded in ``phases["corners"]``;
5. **select**: successive halving over the best pairs: fresh, larger samples rank them by an
   honest (cross-fitted) projection of their validated bound; the event, direction and bound
   method come with it (:func:`dpaudit.auditing.race.select`);
6. **validate**: the best ``validate`` candidates are counted on fresh samples and bounded at a
   family-wise level (:func:`dpaudit.auditing.validate.validate`). No validation sample is
   ever used to choose anything.

Phases 1-4 are the pair-search pipeline shared with the exact audit (:mod:`dpaudit.search.pipeline`),
run by the sampled core (:mod:`dpaudit.auditing.core`) that the curve audit shares: a look's
state, seeds, budget split and search are the core's, its objective (the point ε) is :class:`_Audit`'s.

**Two questions, two findings.** An audit answers :data:`LOGIC` (is the claim right for the
mechanism as a model over the reals: events on values) and :data:`FLOAT` (is the float64
implementation safe: float-structure events on the bits of real outputs, porosity), each with
its own event, bound and share of the error level: with both asked, the logic gets
``1 − FLOAT_SHARE`` of a look's α and the float64 question :data:`FLOAT_SHARE` (Bonferroni: the two
bounds hold together with probability ≥ 1 − α; the betting look before the sampled looks,
:mod:`dpaudit.auditing.betting`, asks the logic alone, at all of its own level). The search and the race rank pairs by the first question
asked (the logic, when asked); the race chooses each finalist's events of both questions on its
one sample, and the float64 candidate is validated on samples of its own, the logic's on the rest,
so neither question's samples choose the other's event. How many is decided on the selection
split, before any validation sample is drawn (:func:`float_validation`): what the float64
candidate needs for its projected bound to reach :data:`FLOAT_TARGET` (ε ≥ 5.5: a porosity
bound grows as ln(p·n / ln(1/α)), so n = n₀·e^(target − projected at n₀)), when that is at most
:data:`FLOAT_MOST` of what is left, else :data:`FLOAT_VALIDATION` of it (at least
:data:`FLOAT_MIN_VALIDATION`). A float64 refutation below ε = 5 does not end its question's looks
(:func:`dpaudit.auditing.looks._settled`): a later look, with more samples, gives it what it needs
(the textbook float64 Laplace at claim ε = 0.1 and the default budget: ε ≥ 4.0 from the first look
that refuted, at 20,000 validation samples; ε ≥ 5 from the look after). A
question does not arise where the outputs hold no real numbers (integers, categories, booleans:
:data:`NO_FLOAT_KINDS`); then the logic gets all of α.

Phases 1-4 score a pair by the projected ε_LB of its best event on a small sample, drawn for every
pair on the *same* seeds (common random numbers across pairs: differences between pairs are
estimated with far less noise, and the score is a deterministic function of the pair, which
hypothesis needs to shrink). Budget: phases 1-4 share :data:`SEARCH_SHARE` of the samples
(the corners :data:`~dpaudit.auditing.core.CORNER_SHARE` of that beside it), phase 5 gets the
shares of :data:`RACE`, validation the rest. With a time limit, phases 1-4 stop
at 35% of it and phase 4 at 50%, and validation keeps every batch completed before the limit
(a bound from a validation cut short assumes, as any time limit must, that how long the
mechanism takes does not depend on which outputs it returns).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable, Optional

import numpy as np

# the search's constants live in the sampled core; the names the sampled audit always had stay
from dpaudit.auditing.core import (DRAW_AHEAD_BYTES, LEVEL_SHARE, MAX_SCORE_SAMPLES,  # noqa: F401
                                  MIN_SEARCH_SAMPLES, SCORE_BYTES, SEARCH_SHARE, Core,
                                  corner_pairs, search_pairs)
from dpaudit.auditing.race import (MIN_RACE_SAMPLES, MIN_SCORE_SAMPLES, RACE, RACE_PATTERNS,
                                  Candidate, select)
from dpaudit.auditing.sampler import Sampler
from dpaudit.auditing.validate import validate as validate_candidates
from dpaudit.errors import MechanismError
from dpaudit.estimators.bounds import Bound, Counts, bonferroni
from dpaudit.estimators.selection import FLOAT, LOGIC, QUESTION_FAMILIES, choose_event
from dpaudit.neighbours.patterns import structured_pairs
from dpaudit.neighbours.relations import Pair
from dpaudit.outputs import OutputEncoder
from dpaudit.spec import MechanismSpec, OutputKind

__all__ = ["Candidate", "Answer", "Outcome", "run", "pattern_pairs", "questions_of", "share_of", "SEARCH_SHARE", "RACE",
           "MIN_RACE_SAMPLES", "RACE_PATTERNS", "MIN_SCORE_SAMPLES", "FLOAT_SHARE",
           "FLOAT_VALIDATION", "FLOAT_MIN_VALIDATION", "FLOAT_TARGET", "FLOAT_MOST",
           "float_validation", "NO_FLOAT_KINDS", "LOGIC", "FLOAT"]

#: the float64 question's share of the error level α when both questions are asked
FLOAT_SHARE = 0.1
#: ... and its share of the validation samples (porosity events are strong: tens of thousands of
#: samples bound them far above any claim), but at least FLOAT_MIN_VALIDATION of them (or half
#: of what is left, in a small look)
FLOAT_VALIDATION = 0.05
FLOAT_MIN_VALIDATION = 20_000
#: ... unless its candidate needs more to reach FLOAT_TARGET: then what it needs, if that is at
#: most FLOAT_MOST of the validation samples left (module docstring, "Two questions")
FLOAT_TARGET = 5.5
FLOAT_MOST = 0.5
#: output kinds with no real number in them: the float64 question does not arise
NO_FLOAT_KINDS = {OutputKind.DISCRETE: "outputs are integers or categories",
                  OutputKind.BOOL: "outputs are booleans", OutputKind.NONE: "outputs are always None"}



@dataclass(slots=True)
class Answer:
    """One question's evidence from one look: its validated bound (None: nothing validated), the
    candidate, the validation counts and outputs kept for the report, the level ``alpha`` the
    question was given (before the Bonferroni over its ``validated`` candidates), or why the
    question does not arise (``absent``)."""

    question: str
    alpha: float = 0.0
    bound: Optional[Bound] = None
    candidate: Optional[Candidate] = None
    counts: Optional[Counts] = None
    kept: Optional[list] = None
    validated: int = 0
    timed_out: bool = False
    absent: Optional[str] = None
    #: the largest validation size of the candidates validated (:mod:`dpaudit.estimators.limits`)
    largest_n: int = 0
    #: where a staged validation stopped (:class:`dpaudit.auditing.validate.Stopped`; None: the
    #: whole sample was counted, or the validation was not staged)
    stopped: Any = None
    #: the draws behind a betting answer (:mod:`dpaudit.auditing.betting`: every part's, all
    #: pairs'), None for a validated one (its counts say how many)
    drawn: Optional[int] = None


@dataclass(slots=True)
class Outcome:
    """Everything the public result is built from (mutable while the audit runs): one
    :class:`Answer` per question asked, by name (:data:`LOGIC` first when asked)."""

    answers: dict = field(default_factory=dict)
    samples: int = 0
    timed_out: bool = False
    error: Optional[MechanismError] = None
    phases: dict = field(default_factory=dict)
    schema: Any = None
    encoder: Optional[OutputEncoder] = None

    def _first(self) -> Answer:
        return self.answers.get(LOGIC) or next(iter(self.answers.values()), None) or Answer(LOGIC)

    # the first question's answer, as the single-question audit had it
    @property
    def bound(self) -> Optional[Bound]:
        return self._first().bound

    @property
    def candidate(self) -> Optional[Candidate]:
        return self._first().candidate

    @property
    def counts(self) -> Optional[Counts]:
        return self._first().counts

    @property
    def kept(self) -> Optional[list]:
        return self._first().kept

    @property
    def validated(self) -> int:
        return self._first().validated


def pattern_pairs(spec: MechanismSpec) -> list[Pair]:
    """The structured pairs of ``spec``'s relation in one order each
    (:func:`~dpaudit.neighbours.patterns.structured_pairs`), the replay stage's pairs first."""
    patterns = structured_pairs(spec.neighbours, spec.domain, spec.size, both_orders=False)
    if not spec.first_pairs:
        return patterns
    first = list(spec.first_pairs)
    keys = {q.key for q in first}
    return first + [p for p in patterns if p.key not in keys]


def questions_of(spec: MechanismSpec) -> tuple[str, ...]:
    """The questions an audit of ``spec`` asks: the logic always, the float64 implementation
    unless the float policy is ``"off"``."""
    return (LOGIC,) if spec.float_policy == "off" else (LOGIC, FLOAT)


def share_of(question: str, questions: tuple[str, ...], level: float) -> float:
    """A question's error level when ``questions`` share ``level`` = 1 − confidence: all of it
    for one question, else split by :data:`FLOAT_SHARE` (the float64 question's share)."""
    if len(questions) < 2:
        return level
    return level * (FLOAT_SHARE if question == FLOAT else 1.0 - FLOAT_SHARE)


class _Audit(Core):
    """One look of the sampled audit on the sampled core (:class:`~dpaudit.auditing.core.Core`),
    its objective the point ε: a pair scores the projected ε_LB of its best event of the first
    question (:func:`~dpaudit.estimators.selection.choose_event`, honest, at the validation size
    ``lam`` and the question's α/k), the race (:data:`RACE`) selects, Clopper-Pearson (or the
    chosen bound method) bounds the validated counts."""

    def __init__(self, spec: MechanismSpec, sampler: Sampler, confidence: float, k: int,
                 seed: int, deadline: Optional[float], progress: Optional[Callable],
                 questions: tuple[str, ...] = (LOGIC,)) -> None:
        super().__init__(spec, sampler, seed, select_share=sum(share for _, share in RACE),
                         deadline=deadline, progress=progress)
        self.k = k
        self.level = 1.0 - confidence
        self.questions = questions
        self.alpha = bonferroni(1.0 - self.share(questions[0]), k)
        self.other_scores: dict = {}  # question -> [(score, pair)] of the patterns (evaluate)
        self.lam = max(1.0, (sampler.budget - self.search_budget - self.select_budget) / (2.0 * k))

    # -------------------------------------------------------------- the objective
    def score(self, yd: np.ndarray, yp: np.ndarray) -> float:
        """Projected ε_LB of the pair's best event of the first question on the scoring sample."""
        return self._projected(yd, yp, self.questions[0], self.alpha)

    def also(self, yd: np.ndarray, yp: np.ndarray, pair: Pair) -> None:
        """The other questions' best events scored on a structured pattern's sample too
        (:attr:`other_scores`): the pair where the bits part (a signed zero on either side of
        0.5) need not be the logic's worst."""
        for q in self.questions[1:]:
            self.other_scores.setdefault(q, []).append((self._projected(yd, yp, q, self.share(q)), pair))

    # -------------------------------------------------------------- helpers
    def share(self, question: str) -> float:
        """The question's error level (:func:`share_of`)."""
        return share_of(question, self.questions, self.level)

    def ask_only(self, questions: tuple[str, ...]) -> None:
        """Ask ``questions`` only (the float64 question dropped where it does not arise)."""
        self.questions = questions
        self.alpha = bonferroni(1.0 - self.share(questions[0]), self.k)

    def _projected(self, yd: np.ndarray, yp: np.ndarray, question: str, alpha: float) -> float:
        choice = choose_event(yd, yp, self.sampler.encoder.schema, n_val=self.lam, alpha=alpha,
                              delta=self.spec.delta, paired=True, quick=True, honest=True,
                              floats=QUESTION_FAMILIES[question])
        return -math.inf if choice is None else float(choice.projected)

    def best_for_others(self, top: int = 2) -> list[Pair]:
        """The ``top`` best structured patterns of each question after the first (by their scores
        in :meth:`also`), for the race's first stage."""
        out: list[Pair] = []
        for scored in self.other_scores.values():
            ranked = sorted((x for x in scored if np.isfinite(x[0])), key=lambda x: -x[0])
            out += [p for _, p in ranked[:top] if p not in out]
        return out


# ----------------------------------------------------------------------------------- run

def run(spec: MechanismSpec, executor: Any, *, budget: int, confidence: float, seed: int,
        timeout: Optional[float] = None, progress: Optional[Callable] = None, validate: int = 1,
        strategy: Any = None, questions: Optional[tuple[str, ...]] = None,
        stages: tuple = (), stop: Optional[Callable[..., bool]] = None) -> Outcome:
    """Run a sampled audit of ``spec`` (module docstring) on ``questions`` (default
    :func:`questions_of`); never raises for a misbehaving mechanism (the error is in
    ``Outcome.error``). Where the logic is not asked (an earlier look refuted it), the pairs are
    the structured patterns only: the float64 question needs no worst pair. ``stages``: the
    validation's prefixes that may stop it early (:mod:`dpaudit.auditing.validate`), at a
    refutation ``stop(question, bound, counts, candidate)`` accepts (None: any)."""
    questions = tuple(questions or questions_of(spec))
    deadline = None if timeout is None else time.monotonic() + timeout
    encoder = OutputEncoder(spec.output)
    sampler = Sampler(spec, executor, encoder, budget)
    a = _Audit(spec, sampler, confidence, validate, seed, deadline, progress, questions)
    out = Outcome()
    try:
        patterns = pattern_pairs(spec)
        if patterns:  # how wide the outputs are sizes the batches and the selection samples
            sampler.probe_width(patterns[0].dataset, seed)
        # a None on the probe's one dataset says nothing of the others (None on an empty dataset,
        # numbers otherwise): the float64 question stays until the outputs show their kind
        absent = None if sampler.probed is None or sampler.probed.kind is OutputKind.NONE \
            else NO_FLOAT_KINDS.get(sampler.probed.kind)
        if absent is not None and FLOAT in questions:
            out.answers[FLOAT] = Answer(FLOAT, absent=f"{absent}: there is no float64 question")
            questions = tuple(q for q in questions if q != FLOAT)
            if not questions:
                raise _NothingToAsk
            a.ask_only(questions)
        corners = corner_pairs(spec, seed) if LOGIC in questions else []
        search_pairs(a, patterns, strategy, searching=LOGIC in questions, level_share=LEVEL_SHARE,
                     corners=corners)
        _select_and_validate(a, out, questions, validate, deadline, stages, stop)
    except MechanismError as exc:
        out.error = exc
    except _NothingToAsk:
        pass
    out.samples = sampler.used
    out.schema = encoder.schema if encoder.schema is not None else sampler.probed
    out.encoder = encoder
    flt = out.answers.get(FLOAT)
    late = None if out.schema is None else NO_FLOAT_KINDS.get(out.schema.kind)
    if late is not None and flt is not None and flt.absent is None and flt.candidate is None:
        # kept past a probe of None (above), and the outputs held no real number after all: no
        # float64 question (the logic's bound stays at the share of α it was computed at)
        out.answers[FLOAT] = Answer(FLOAT, alpha=flt.alpha,
                                    absent=f"{late}: there is no float64 question")
    out.timed_out = any(x.timed_out for x in out.answers.values()) or sampler.time_cut
    out.phases = a.phases
    first = out.answers.get(questions[0]) if questions else None
    a.report("done", epsilon_lb=None if first is None or first.bound is None else first.bound.epsilon_lb)
    return out


def float_validation(projected: Optional[float], lam: float, left: int) -> float:
    """The validation samples (both datasets) of the float64 question's candidate, out of the
    ``left`` the look has, from its projected bound ``projected`` at ``lam`` validation samples
    per dataset (selection split only; module docstring): 2·lam·e^(FLOAT_TARGET − projected)
    when that is at most :data:`FLOAT_MOST`·left, else the fixed share
    max(:data:`FLOAT_VALIDATION`·left, min(:data:`FLOAT_MIN_VALIDATION`, left/2))."""
    fixed = max(FLOAT_VALIDATION * left, min(FLOAT_MIN_VALIDATION, 0.5 * left))
    if projected is None or not math.isfinite(projected) or projected <= 0:
        return fixed
    need = 2.0 * lam * math.exp(min(50.0, FLOAT_TARGET - projected))
    return max(fixed, need) if need <= FLOAT_MOST * left else fixed


class _NothingToAsk(Exception):
    """No question arises (the float64 question alone, asked of outputs with no real number)."""


def _select_and_validate(a: _Audit, out: Outcome, questions: tuple[str, ...], validate: int,
                         deadline: Optional[float], stages: tuple = (),
                         stop: Optional[Callable[..., bool]] = None) -> None:
    """Phases 5 and 6 for every question asked: the race ranks by the first question and chooses
    every question's event on each finalist's sample; each question's candidates are validated on
    their own share of what is left (:data:`FLOAT_VALIDATION` for the float64 one when both are
    asked), at its own level (:meth:`_Audit.share`)."""
    spec, sampler = a.spec, a.sampler
    first = questions[0]
    # the other questions' projected validation size: one candidate on its share (as split below)
    lam_other = max(FLOAT_VALIDATION * a.lam * a.k, min(FLOAT_MIN_VALIDATION / 2, 0.5 * a.lam * a.k))
    asks = {q: (a.alpha if q == first else a.share(q), a.lam if q == first else lam_other)
            for q in questions}
    cands, record, others = select(sampler, [p for p, _ in a.ranked()], a.search.pattern_keys,
                                   a.s_select, k=a.k, asks=asks, delta=spec.delta,
                                   deadline=a.phase_deadline(0.5), report=a.report,
                                   also=a.best_for_others())
    if record or a.ranked():
        a.phases["select"] = record
    plan = [(first, cands[: validate], validate)]
    plan += [(q, [c] if c is not None else [], 1) for q, c in others.items()]
    # a stream per question: children of the validation seed; with two questions the first
    # validates on the parent itself, whose own children then come after these
    seeds = dict(zip(questions, a.s_val.spawn(len(questions))))
    if len(questions) > 1:
        seeds[first] = a.s_val
    left = sampler.remaining
    wants = {q: float_validation(c[0].choice.projected if c else None, lam_other, left)
             for q, c, _ in plan[1:]}  # per other question, decided before any validation sample
    stopped_early = False
    for i, (q, chosen, k) in enumerate(plan):
        rest = sum(wants[r] for r, c, _ in plan[i + 1:] if c)  # for the questions after this one
        share = 1.0 if rest == 0 else max(0.0, 1.0 - rest / max(1, sampler.remaining))
        if stopped_early and i > 0:
            # a question before stopped at a prefix of its validation: this one gets what it was
            # planned, not the rest of the look (which would undo the prefix's saving)
            share = min(share, wants[q] / max(1, sampler.remaining))
        ans = Answer(q, alpha=a.share(q), validated=len(chosen))
        v = validate_candidates(sampler, chosen, seeds[q], alpha=bonferroni(1.0 - ans.alpha, k),
                                delta=spec.delta, epsilon=spec.epsilon, deadline=deadline,
                                report=a.report, share=share, stages=stages,
                                stop=None if stop is None else partial(stop, q))
        ans.bound, ans.candidate, ans.counts, ans.kept = v.bound, v.candidate, v.counts, v.kept
        ans.largest_n, ans.stopped = v.largest_n, v.stopped
        stopped_early = stopped_early or v.stopped is not None
        ans.timed_out = v.timed_out or sampler.time_cut  # a race cut short chose nothing
        out.answers[q] = ans
