"""The sampled audit run as a group-sequential test: complete audits at geometric looks, stopping
at the first that refutes the claim (the schedule and why its confidence holds:
:mod:`dpaudit.auditing.schedule`).

Every look is :func:`dpaudit.auditing.sampled.run` on its own seed, derived from the recorded root
seed and the look's number, so a run replays exactly from its seed; the final look runs on the
root seed itself, so an audit with no early look (a budget below 12.5·``min_look``) is the plain
audit, sample for sample.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any, Callable, Optional

import numpy as np

from dpaudit.auditing.schedule import Schedule, schedule
from dpaudit.auditing import sampled
from dpaudit.spec import MechanismSpec

__all__ = ["run", "look_seed"]

#: a fixed word that keeps the looks' seeds apart from any other use of the root seed
_LOOK_WORD = 0x5E0_1005


def look_seed(seed: int, j: int) -> int:
    """The seed of early look ``j`` (0-based) of a run with root ``seed``."""
    state = np.random.SeedSequence([int(seed), _LOOK_WORD, int(j)]).generate_state(1, np.uint64)
    return int(state[0] >> np.uint64(1))


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


def run(spec: MechanismSpec, executor: Any, *, budget: int, confidence: float, seed: int,
        timeout: Optional[float] = None, progress: Optional[Callable] = None,
        early_stop: bool = True, min_look: Optional[int] = None,
        plan: Optional[Schedule] = None,
        questions: Optional[tuple[str, ...]] = None) -> tuple[sampled.Outcome, Optional[dict]]:
    """Run the audit (module docstring); return the reported outcome (``samples`` counts every
    look) and the record of the stopping rule (None with ``early_stop=False`` or a budget too
    small for an early look: the plain audit at full budget and α).

    Each question (:func:`dpaudit.auditing.sampled.questions_of`) stops on its own: a question
    refuted at a look (the logic: refuted strongly or with a measured ratio, :func:`_settled`)
    keeps that look's answer and is not asked again, the others go on to the next look, and the
    run ends when none is left or at the final look; a question refuted weakly is reported from
    its strongest refuting look. So a float64 finding at the
    first look neither stops nor masks the logic audit, which keeps its own schedule. Every look
    splits its α_j between the questions it asks (:data:`~dpaudit.auditing.sampled.FLOAT_SHARE`),
    so Σ over looks and questions stays α. The outcome's phases are those of the look that
    answered the first question."""
    questions = tuple(questions or sampled.questions_of(spec))
    if plan is None and early_stop:
        plan = schedule(budget, confidence) if min_look is None else schedule(budget, confidence, min_look)
    if not early_stop or not plan.budgets:
        out = sampled.run(spec, executor, budget=budget, confidence=confidence, seed=seed,
                         timeout=timeout, progress=progress, questions=questions)
        return out, None
    deadline = None if timeout is None else time.monotonic() + timeout
    used = 0
    looks: list[dict] = []
    pending = list(questions)
    answered: dict[str, Any] = {}  # question -> the Answer that settled it
    best: dict[str, Any] = {}  # question -> its refuting Answer with the largest bound so far
    spent: dict[str, float] = {}  # question -> the α of every look that asked it
    main: Optional[sampled.Outcome] = None  # the look that answered the first question
    out = None
    for j, n in enumerate(plan.budgets):
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            break
        # an early look may take its share of the time left, in proportion to its samples
        share = None if left is None else left * n / max(1, budget - used)
        out = sampled.run(spec, executor, budget=n, confidence=plan.confidence(j),
                         seed=look_seed(seed, j), timeout=share,
                         progress=_offset(progress, used, budget, j), questions=tuple(pending))
        used += out.samples
        looks.append(_look(j + 1, n, out, plan.alphas[j]))
        _spend(spent, out)
        if out.error is not None:
            return (_merged(out, answered, questions, used, spent),
                    _record(plan, looks, stopped=j + 1, early=True))
        for q, ans in out.answers.items():
            if _refutes(ans, spec) and (q not in best or ans.bound.epsilon_lb > best[q].bound.epsilon_lb):
                best[q] = ans
            if ans.absent is not None or _nothing_to_test(ans) or \
                    (_refutes(ans, spec) and _settled(ans, spec)):
                answered[q] = best.get(q, ans)
                if q in pending:
                    pending.remove(q)
        # a float64 refutation that is not yet strong looks on only beside the logic: once the
        # logic is settled, no look is run for the float64 bound's size alone
        for q in [q for q in pending if q in best and q == sampled.FLOAT]:
            if sampled.LOGIC in questions and sampled.LOGIC not in pending:
                answered[q] = best[q]
                pending.remove(q)
        if questions[0] in answered and main is None:
            main = out
        if not pending:
            return (_merged(main or out, answered, questions, used, spent),
                    _record(plan, looks, stopped=j + 1, early=True))
    left = None if deadline is None else deadline - time.monotonic()
    if left is not None and left <= 0 and out is not None:
        merged = _merged(main or out, {**out.answers, **best, **answered}, questions, used, spent)
        merged.timed_out = True
        return merged, _record(plan, looks, stopped=len(looks), early=False)
    rest = budget - used
    out = sampled.run(spec, executor, budget=rest, confidence=plan.confidence(-1), seed=seed,
                     timeout=left, progress=_offset(progress, used, budget, -1),
                     questions=tuple(pending))
    looks.append(_look(len(looks) + 1, rest, out, plan.final_alpha))
    used += out.samples
    _spend(spent, out)
    final = {q: a for q, a in out.answers.items()
             if q not in best or (a.bound is not None and a.bound.epsilon_lb >= best[q].bound.epsilon_lb)}
    return (_merged(main or out, {**best, **final, **answered}, questions, used, spent,
                    error=out.error),
            _record(plan, looks, stopped=len(looks), early=False))


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
    a true 3.64), so a weaker refutation goes on to the next look, and the strongest refuting look
    is reported (any rule that picks which look is reported keeps the Bonferroni bound)."""
    if ans.bound.epsilon_lb >= STRONG_EPSILON:
        return True
    if ans.question == sampled.FLOAT:
        return False
    counts = ans.counts
    return spec.delta == 0 and counts is not None and counts.y >= SATURATED_COUNT


def _nothing_to_test(ans: Any) -> bool:
    """A float64 question whose outputs carry no float structure (every value on one grid, no
    signed zero, no NaN or ±inf) had no event to choose: later looks would find none either."""
    return ans.question == sampled.FLOAT and ans.candidate is None and not ans.timed_out


def _look(number: int, budget: int, out: sampled.Outcome, alpha: float) -> dict:
    """One look's line of the record: its budget, samples and α, and each question's bound."""
    bounds = {q: None if a.bound is None else a.bound.epsilon_lb
              for q, a in out.answers.items() if a.absent is None}
    first = next(iter(bounds.values()), None)
    return {"look": number, "budget": budget, "samples": out.samples, "alpha": alpha,
            "epsilon_lb": first, "questions": bounds}


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


def _record(plan: Schedule, looks: list[dict], *, stopped: int, early: bool) -> dict:
    rec = plan.to_record()
    rec.update({"looks": looks, "stopped_at_look": stopped, "stopped_early": early})
    return rec
