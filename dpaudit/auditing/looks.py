"""The group-sequential run: complete audits at geometric looks, stopping at the first that
settles the question (the schedule and why its confidence holds: :mod:`dpaudit.auditing.schedule`).

One driver, :func:`drive`, runs the looks of any audit objective (:class:`Objective`): the point ε
of the sampled audit (:class:`PointLooks`, each look :func:`dpaudit.auditing.sampled.run`) and the
curve gap of the curve audit (:class:`dpaudit.curves.audit.CurveObjective`). Every look is a
complete audit on its own seed, derived from the recorded root seed and the look's number, so a
run reruns exactly from its seed; the final look runs on the root seed itself, so an audit with no
early look (a budget below 12.5·``min_look``) is the plain audit, sample for sample. Look j's bound
holds at level α_j on its own samples (selection split, then validation split), so whatever rule
stops the run, P(some reported bound is wrong) ≤ Σ_j α_j = α (Bonferroni over the looks; Lan and
DeMets 1983).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any, Callable, Optional, Protocol

import numpy as np

from dpaudit.auditing.schedule import BETTING, Schedule, schedule
from dpaudit.auditing import betting, sampled
from dpaudit.spec import MechanismSpec

__all__ = ["run", "look_seed", "drive", "Objective", "Looks", "PointLooks"]

#: the least share of the time left an early look gets under a time limit (:func:`drive`)
EARLY_TIME = 0.1
#: a fixed word that keeps the looks' seeds apart from any other use of the root seed
_LOOK_WORD = 0x5E0_1005


def look_seed(seed: int, j: int) -> int:
    """The seed of early look ``j`` (0-based) of a run with root ``seed``."""
    state = np.random.SeedSequence([int(seed), _LOOK_WORD, int(j)]).generate_state(1, np.uint64)
    return int(state[0] >> np.uint64(1))


class Objective(Protocol):
    """An audit's side of the group-sequential run: what one look is and what ends the run.

    A look's result has ``samples`` (the mechanism calls it made) and ``error`` (None, or the
    mechanism's failure)."""

    def look(self, j: int, budget: int, confidence: float, seed: int, timeout: Optional[float],
             progress: Optional[Callable]) -> Any:
        """Look ``j`` (0-based; −1 is the final look, and the only one of a plain audit): a
        complete audit of ``budget`` samples whose bounds hold at ``confidence``."""

    def settles(self, j: int, result: Any) -> bool:
        """Take look ``j``'s result into account; whether the run ends there (read for the early
        looks only)."""

    def entry(self, number: int, budget: int, result: Any, alpha: float) -> dict:
        """The look's line in the record."""


@dataclass(slots=True)
class Looks:
    """What :func:`drive` ran: every look's result in order, their samples, the record of the
    stopping rule (None for a plain audit), and how the run ended: at an early look that settled
    it (``early``), or with the time limit spent before its final look (``timed_out``)."""

    results: list
    samples: int
    record: Optional[dict]
    early: bool = False
    timed_out: bool = False

    @property
    def last(self) -> Any:
        return self.results[-1]


def _offset(progress: Optional[Callable[[dict], None]], used: int, budget: int,
            look: int) -> Optional[Callable[[dict], None]]:
    if progress is None:
        return None

    def report(info: dict) -> None:
        info = dict(info)
        if info.get("phase") == "done" and look >= 0:
            return  # an early look that did not refute is not the end of the audit
        info["samples"] = used + int(info.get("samples") or 0)
        info["budget"] = budget
        progress(info)

    return report


def _left(deadline: Optional[float]) -> Optional[float]:
    return None if deadline is None else deadline - time.monotonic()


def drive(objective: Objective, plan: Optional[Schedule], *, budget: int, confidence: float,
          seed: int, timeout: Optional[float] = None,
          progress: Optional[Callable] = None) -> Looks:
    """Run ``objective``'s looks under ``plan`` (module docstring): the early looks at
    ``plan.budgets`` and α_j, each on :func:`look_seed` and, under a time limit, on its share of
    the time left in proportion to its samples (at least :data:`EARLY_TIME` of it), stopping at
    the first that :meth:`~Objective.settles` the run; then the final look on the root seed with the rest of the
    budget and α. With no plan (or no early look) one look: the plain audit at ``budget`` and
    ``confidence``."""
    if plan is None or not plan.budgets:
        out = objective.look(-1, budget, confidence, seed, timeout, progress)
        objective.settles(-1, out)
        return Looks([out], out.samples, None)
    deadline = None if timeout is None else time.monotonic() + timeout
    used, results, entries = 0, [], []
    for j, n in enumerate(plan.budgets):
        left = _left(deadline)
        if left is not None and left <= 0:
            break
        # its share of the time left in proportion to its samples, but at least EARLY_TIME of it:
        # a small look's fixed costs (the search, the sandbox's round trips) do not shrink with
        # its samples, and under --timeout 150 the first look of a 400,000 budget had 0.75 s and
        # was cut short on a 1 ms mechanism; time an early look does not use stays for the rest
        share = None if left is None else left * max(n / max(1, budget - used), EARLY_TIME)
        out = objective.look(j, n, plan.confidence(j), look_seed(seed, j), share,
                             _offset(progress, used, budget, j))
        used += out.samples
        results.append(out)
        entries.append(objective.entry(j + 1, n, out, plan.alphas[j]))
        if progress is not None:  # what a stop by signal keeps (dpaudit.commands.check)
            progress({"phase": "look", "samples": used, "budget": budget,
                      "look_done": dict(entries[-1])})
        if objective.settles(j, out):
            return Looks(results, used, _record(plan, entries, stopped=j + 1, early=True), early=True)
    left = _left(deadline)
    if left is not None and left <= 0 and results:
        return Looks(results, used, _record(plan, entries, stopped=len(entries), early=False),
                     timed_out=True)
    rest = budget - used
    out = objective.look(-1, rest, plan.confidence(-1), seed, left, _offset(progress, used, budget, -1))
    entries.append(objective.entry(len(entries) + 1, rest, out, plan.final_alpha))
    objective.settles(-1, out)
    results.append(out)
    return Looks(results, used + out.samples, _record(plan, entries, stopped=len(entries), early=False))


def _record(plan: Schedule, looks: list[dict], *, stopped: int, early: bool) -> dict:
    rec = plan.to_record()
    rec.update({"looks": looks, "stopped_at_look": stopped, "stopped_early": early})
    return rec


# ------------------------------------------------------------------------ the point-ε objective

def run(spec: MechanismSpec, executor: Any, *, budget: int, confidence: float, seed: int,
        timeout: Optional[float] = None, progress: Optional[Callable] = None,
        early_stop: bool = True, min_look: Optional[int] = None,
        plan: Optional[Schedule] = None,
        questions: Optional[tuple[str, ...]] = None) -> tuple[sampled.Outcome, Optional[dict]]:
    """Run the sampled audit's looks (:func:`drive` with :class:`PointLooks`); return the reported
    outcome (``samples`` counts every look) and the record of the stopping rule (None with
    ``early_stop=False`` or a budget too small for an early look: the plain audit at full budget
    and α)."""
    questions = tuple(questions or sampled.questions_of(spec))
    if plan is None and early_stop:
        # the betting look where the logic is asked of a claim it can bet on (ε not too large)
        bets = sampled.LOGIC in questions and float(spec.epsilon) <= betting.MAX_EPSILON
        plan = schedule(budget, confidence, betting=bets) if min_look is None \
            else schedule(budget, confidence, min_look, betting=bets)
    staged = early_stop and plan is not None
    point = PointLooks(spec, executor, questions, alpha=1.0 - confidence,
                       early=len(plan.budgets) if staged else 0,
                       stages=plan.final_stages if staged else (),
                       kinds=plan.kinds if staged else ())
    looks = drive(point, plan if early_stop else None, budget=budget, confidence=confidence,
                  seed=seed, timeout=timeout, progress=progress)
    return point.outcome(looks), looks.record


class PointLooks:
    """The point-ε objective's looks (:class:`Objective`). Each question
    (:func:`dpaudit.auditing.sampled.questions_of`) stops on its own: a question refuted at a look
    (the logic: refuted strongly or with a measured ratio, :func:`_settled`) keeps that look's
    answer and is not asked again, the others go on to the next look, and the run ends when none
    is left or at the final look; a question refuted weakly is reported from its strongest
    refuting look. So a float64 finding at the first look neither stops nor masks the logic
    audit, which keeps its own schedule. Every look splits its α_j between the questions it asks
    (:data:`~dpaudit.auditing.sampled.FLOAT_SHARE`), so Σ over looks and questions stays α. The
    outcome's phases are those of the look that answered the first question.

    A logic refutation that would settle its question but is *marginal* (its family-wise p-value
    above :data:`dpaudit.results.MARGINAL_P`, :func:`_marginal`) gets one more look first: a claim
    refuted at twice its true ε from 715 samples read "MARGINAL, confirm with another seed", where
    the next look's few thousand samples say it plainly. The strongest refuting look is reported.
    Whether the run refutes is unchanged (it did at the marginal look, and any look's bound holds
    at its own α_j), so the false refutation rate is too; only the samples of a refuted run grow.
    A marginal refutation by the betting look's first part waits for its second part, which bets
    on from it (its one wealth process), before the rule applies. A betting refutation rides
    along the sampled look after it when the float64 question runs that look anyway: the betting
    look's bound is a short run's confidence sequence, and the sampled look's may be larger (the
    stronger is reported), at no cost in samples.

    A refuted logic question never pays for a final look of its own (``early``, the number of
    early looks): a refutation that no early look settled is reported from its strongest early
    look once the last early look has run, unless another question still unrefuted takes the final
    look anyway, where the logic rides along (its bound may grow there at no cost in samples), or
    the refutation is marginal (its one more look is the final one). The final look is
    the bulk of the budget (at least 89% of it) and would only tighten a bound that already
    refutes: a Gaussian (ε, δ) claim 10% too narrow refuted at 102,000 samples went on to all
    4·10⁶ for ε ≥ 1.19 where its early looks give 1.10 to 1.16
    (``benchmarks/results/oracle_gap.json``). Time to a verdict is worth that; ``early_stop=False``
    spends the budget on one look for the tightest bound.

    The final look's validation is counted in prefixes (``stages``,
    :data:`dpaudit.auditing.schedule.FINAL_STAGES`) and ends at the first that refutes plainly
    (:meth:`prefix_stops`): a claim only the final look refutes is answered after a fraction of
    the budget, and a correct claim's bound is the whole sample's, at 90% of the final look's α."""

    def __init__(self, spec: MechanismSpec, executor: Any, questions: tuple[str, ...],
                 alpha: float = 0.05, early: int = 0, stages: tuple = (), kinds: tuple = ()) -> None:
        self.spec, self.executor, self.questions, self.alpha = spec, executor, questions, alpha
        self.early = early  # how many early looks the schedule has (the final look comes after)
        self.stages = stages  # the final look's validation prefixes (Schedule.final_stages)
        self.kinds = kinds  # each early look's kind (Schedule.kinds): the betting look first
        self.bettor: Optional[betting.Bettor] = None  # the betting look's state, between its parts
        self.again: set = set()  # questions given one more look after a marginal refutation
        self.pending = list(questions)
        self.answered: dict[str, Any] = {}  # question -> the Answer that settled it
        self.best: dict[str, Any] = {}  # question -> its refuting Answer with the largest bound so far
        self.spent: dict[str, float] = {}  # question -> the α of every look that asked it
        self.main: Optional[sampled.Outcome] = None  # the look that answered the first question

    def look(self, j: int, budget: int, confidence: float, seed: int, timeout: Optional[float],
             progress: Optional[Callable]) -> sampled.Outcome:
        if 0 <= j < len(self.kinds) and self.kinds[j] == BETTING:
            if sampled.LOGIC not in self.pending:  # refuted already: this part draws nothing
                return sampled.Outcome()
            first = self.bettor is None
            if first:  # one wealth process for every part, at the first part's level
                from dpaudit.results import MARGINAL_P

                level = 1.0 - confidence
                self.bettor = betting.Bettor(self.spec, self.executor, alpha=level, seed=seed,
                                             strong=self.alpha / (level * MARGINAL_P))
            return betting.look(self.bettor, budget=budget, timeout=timeout, progress=progress,
                                charge=first)
        return sampled.run(self.spec, self.executor, budget=budget, confidence=confidence,
                           seed=seed, timeout=timeout, progress=progress,
                           questions=tuple(self.pending), stages=self.stages if j < 0 else (),
                           stop=self.prefix_stops)

    def prefix_stops(self, question: str, bound: Any, counts: Any, candidate: Any) -> bool:
        """Whether a refuting prefix of the final look's validation ends it
        (:mod:`dpaudit.auditing.validate`): for the logic, when the refutation is not marginal
        (:func:`_marginal`: the whole sample would say it plainly where a marginal prefix would
        read MARGINAL); for the float64 question, only when it is strong (:func:`_settled`: a
        porosity's bound grows with its samples, and its share of the look is small)."""
        ans = sampled.Answer(question, bound=bound, counts=counts, candidate=candidate)
        if question == sampled.FLOAT:
            return _settled(ans, self.spec)
        return not _marginal(ans, self.spec, self.alpha)

    def entry(self, number: int, budget: int, out: sampled.Outcome, alpha: float) -> dict:
        return _look(number, budget, out, alpha)

    def settles(self, j: int, out: sampled.Outcome) -> bool:
        _spend(self.spent, out)
        if j < 0 or out.error is not None:
            return True
        spec, best = self.spec, self.best
        for q, ans in out.answers.items():
            if _refutes(ans, spec) and (q not in best or _stronger(ans, best[q], spec, self.alpha)):
                best[q] = ans
            settled = _refutes(ans, spec) and _settled(ans, spec)
            if settled and q == sampled.LOGIC and ans.bound.method == "betting" \
                    and BETTING in self.kinds[j + 1:] and _marginal(ans, spec, self.alpha):
                continue  # the betting look's next part bets on from here (class docstring)
            if settled and q == sampled.LOGIC and q not in self.again \
                    and _marginal(ans, spec, self.alpha):
                self.again.add(q)  # one more look to say it plainly (class docstring)
                continue
            if settled and q == sampled.LOGIC and q not in self.again \
                    and ans.bound.method == "betting" and sampled.FLOAT in self.pending \
                    and j + 1 < self.early and self.kinds[j + 1] != BETTING:
                self.again.add(q)  # rides along the sampled look the float64 question runs
                continue
            if ans.absent is not None or _nothing_to_test(ans) or settled or \
                    (q in self.again and q in best):
                self.answered[q] = best.get(q, ans)
                if q in self.pending:
                    self.pending.remove(q)
        if j == self.early - 1 and sampled.LOGIC in self.pending and sampled.LOGIC in best \
                and not _marginal(best[sampled.LOGIC], spec, self.alpha) \
                and all(q in best for q in self.pending):
            # the last early look: a refuted logic is not worth a final look of its own (class
            # docstring); a question still unrefuted takes the final look, and the logic with it
            self.answered[sampled.LOGIC] = best[sampled.LOGIC]
            self.pending.remove(sampled.LOGIC)
        # a float64 refutation that is not yet strong looks on only beside the logic: once the
        # logic is settled, no look is run for the float64 bound's size alone
        for q in [q for q in self.pending if q in best and q == sampled.FLOAT]:
            if sampled.LOGIC in self.questions and sampled.LOGIC not in self.pending:
                self.answered[q] = best[q]
                self.pending.remove(q)
        if self.questions[0] in self.answered and self.main is None:
            self.main = out
        return not self.pending

    def outcome(self, looks: Looks) -> sampled.Outcome:
        """The reported outcome of the run :func:`drive` made (class docstring)."""
        out, qs, used, spent = looks.last, self.questions, looks.samples, self.spent
        if looks.record is None:
            return out
        if looks.early and out.error is not None:
            # a refutation an earlier look made stands (a marginal one was given one more look,
            # which failed: the run still refuted, as it did before that rule)
            return _merged(out, {**self.best, **self.answered}, qs, used, spent)
        if looks.early:
            return _merged(self.main or out, self.answered, qs, used, spent)
        if looks.timed_out:
            merged = _merged(self.main or out, {**out.answers, **self.best, **self.answered}, qs,
                             used, spent)
            merged.timed_out = True
            return merged
        best = self.best
        final = {q: a for q, a in out.answers.items()
                 if q not in best or (a.bound is not None and a.bound.epsilon_lb >= best[q].bound.epsilon_lb)}
        return _merged(self.main or out, {**best, **final, **self.answered}, qs, used, spent,
                       error=out.error)


def _stronger(new: Any, old: Any, spec: MechanismSpec, alpha: float) -> bool:
    """Whether refuting answer ``new`` replaces ``old`` as a question's strongest: a later part of
    the betting look always (one wealth process: its largest wealth and bound only grow); a plain
    refutation over a marginal one, never a marginal one over a plain one (the verdict would
    read MARGINAL where the run had refuted plainly); else the larger bound."""
    if new.bound.method == "betting" and old.bound.method == "betting":
        return True
    new_m, old_m = _marginal(new, spec, alpha), _marginal(old, spec, alpha)
    if new_m != old_m:
        return old_m
    return new.bound.epsilon_lb > old.bound.epsilon_lb


def _spend(spent: dict, out: sampled.Outcome) -> None:
    for q, a in out.answers.items():
        if a.absent is None:
            spent[q] = spent.get(q, 0.0) + a.alpha


def _refutes(ans: Any, spec: MechanismSpec) -> bool:
    return ans.bound is not None and ans.bound.epsilon_lb > spec.epsilon


#: a refuting look settles the logic question when its bound is at least this (e^5 ≈ 148: more
#: samples would change no decision) ...
STRONG_EPSILON = 5.0
#: ... or, for a pure claim, when its event was seen at least this often on the denominator
#: dataset of validation (the ratio is measured there, not held down by the sample size)
SATURATED_COUNT = 30


def _settled(ans: Any, spec: MechanismSpec) -> bool:
    """Whether a refuting answer ends its question's looks: when the bound is strong
    (:data:`STRONG_EPSILON`; for the float64 question only then: a porosity is infinite and its
    bound grows with the samples validated, which a later look sizes to what the question needs,
    :func:`dpaudit.auditing.sampled.float_validation`), or, for the logic of a pure claim, when
    the event's ratio is measured (:data:`SATURATED_COUNT`). The ε of an (ε, δ) claim lives in events of probability near δ,
    which a small look cannot see (a Gaussian mean with σ² for σ: ε ≥ 1.34 at the first look, of
    a true 3.64), so a weaker refutation goes on to the next early look, and the strongest
    refuting look is reported (any rule that picks which look is reported keeps the Bonferroni
    bound); the final look is not run for it (:class:`PointLooks`)."""
    if ans.bound.epsilon_lb >= STRONG_EPSILON or ans.bound.method == "betting":
        return True  # the betting look bet on until its refutation was not marginal, or spent
    if ans.question == sampled.FLOAT:
        return False
    counts = ans.counts
    return spec.delta == 0 and counts is not None and counts.y >= SATURATED_COUNT


def _marginal(ans: Any, spec: MechanismSpec, alpha: float) -> bool:
    """Whether a refuting answer's family-wise p-value (:func:`dpaudit.estimators.strength.p_value`,
    its Bonferroni factor α / its own level) is above :data:`dpaudit.results.MARGINAL_P`: the
    verdict would read MARGINAL."""
    from dpaudit.estimators.strength import p_value
    from dpaudit.results import MARGINAL_P

    b, counts, cand = ans.bound, ans.counts, ans.candidate
    if b is None or counts is None or cand is None or not b.alpha > 0:
        return False
    if b.method == "betting":
        return betting.p_value(b, alpha) > MARGINAL_P
    split = cand.choice.split if b.method == cand.choice.method else (0.5, 0.5)
    return p_value(b.method, counts, split, alpha / b.alpha, spec.epsilon, spec.delta) > MARGINAL_P


def _nothing_to_test(ans: Any) -> bool:
    """A float64 question whose outputs carry no float structure (every value on one grid, no
    signed zero, no NaN or ±inf) had no event to choose: later looks would find none either."""
    return ans.question == sampled.FLOAT and ans.candidate is None and not ans.timed_out


def _look(number: int, budget: int, out: sampled.Outcome, alpha: float) -> dict:
    """One look's line of the record: its budget, samples and α, and each question's bound."""
    bounds = {q: None if a.bound is None else a.bound.epsilon_lb
              for q, a in out.answers.items() if a.absent is None}
    first = next(iter(bounds.values()), None)
    entry = {"look": number, "budget": budget, "samples": out.samples, "alpha": alpha,
             "epsilon_lb": first, "questions": bounds}
    bet = out.phases.get("betting") if isinstance(out.phases, dict) else None
    if bet is not None:  # the betting look: when its wealth first refuted (in this part's
        # samples; None: not in this part), and how far it went
        entry.update(kind=BETTING, refuted_at=bet["refuted_at"], log_wealth=bet["log_wealth"])
    stopped = {q: a.stopped.to_record() for q, a in out.answers.items() if a.stopped is not None}
    if stopped:  # the final look's validation stopped at a prefix (dpaudit.auditing.validate)
        entry["validation_stopped"] = stopped
    return entry


def _merged(out: sampled.Outcome, answers: dict, questions: tuple[str, ...], used: int,
            spent: dict, error: Any = None) -> sampled.Outcome:
    """``out`` carrying every question's answer (the settled ones from their looks, in the order
    asked), each with the α of every look that asked it (what its own confidence is: by
    Bonferroni over the looks, its reported bound holds with probability ≥ 1 − that sum), and
    the samples of every look."""
    merged = dict(out.answers)
    merged.update(answers)
    out.answers = {q: replace(merged[q], alpha=spent.get(q, merged[q].alpha))
                   for q in questions if q in merged}
    out.samples = used
    if error is not None:
        out.error = error
    return out


