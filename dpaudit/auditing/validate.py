"""The sampled audit's last phase: validate the race's candidates (:mod:`dpaudit.auditing.race`) on
samples that played no part in choosing anything.

**validate** (:func:`validate`): the best k candidates are counted on fresh samples drawn with
Poisson sample sizes (paired on common random numbers when the chosen method is ``paired``), and
each is bounded at level α/k (Bonferroni over the k candidates validated), so the reported bound,
the largest of them, holds with probability ≥ confidence (docs/ARCHITECTURE.md#statistical-soundness).

**stages** (the final look of a sequential run, :data:`dpaudit.auditing.schedule.FINAL_STAGES`):
a candidate's validation sample is counted in nested prefixes for the fractions f_1 < … < f_m < 1
fixed in advance, then whole: increments of independent Poisson sizes, means λ·(f_i − f_{i−1}),
so prefix i is a Poisson(λ·f_i) sample and the whole a Poisson(λ) one, as unstaged. Prefix i is
bounded at level s_i·α (its share), the whole sample at (1 − Σ s_i)·α, and counting stops at the
first prefix whose bound refutes the claim. Every prefix is a sample no choice saw, so each
bound holds at its own level, and P(some bound is wrong) ≤ Σ_i s_i·α + (1 − Σ s_i)·α = α
(Bonferroni over the prefixes: the looks' argument, :mod:`dpaudit.auditing.schedule`, inside one
look). A time limit that cuts prefix i short bounds what was counted at the level left
((1 − Σ_{k<i} s_k)·α): the cut depends on the clock, not on the counts.

The ``sampler`` is :class:`dpaudit.auditing.sampler.Sampler` (``count``, ``remaining``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Optional

from dpaudit.auditing.race import Candidate
from dpaudit.estimators.bounds import Bound, Counts, method as bound_method
from dpaudit.rng import generator

__all__ = ["Validated", "validate", "Stopped"]


def _add(a: Optional[Counts], b: Counts, lam: Optional[float]) -> Counts:
    """The counts of two disjoint samples of one event; ``lam`` the Poisson mean of their joint
    size (None: not Poisson, a count cut short)."""
    if a is None:
        a = Counts(0, 0, 0, 0, None if b.a is None else 0)
    paired = b.a is not None
    return Counts(a.n_num + b.n_num, a.n_den + b.n_den, a.x + b.x, a.y + b.y,
                  a.a + b.a if paired else None,
                  None if paired else lam, None if paired else lam)


@dataclass(frozen=True, slots=True)
class Stopped:
    """Where a staged validation stopped before its whole sample: prefix ``stage`` (1-based) of
    ``of``, its ``fraction`` of the planned sample, and the level its bound was computed at."""

    stage: int
    of: int
    fraction: float
    alpha: float

    def to_record(self) -> dict:
        return {"stage": self.stage, "of": self.of, "fraction": self.fraction, "alpha": self.alpha}


def _count(sampler: Any, cand: Candidate, lam: float, seeds: tuple, deadline: Optional[float],
           kept: Optional[list], report: Callable[..., None], stages: tuple, alpha: float,
           delta: float, epsilon: float, stop: Optional[Callable[..., bool]] = None,
           ) -> tuple[Optional[Counts], Optional[Bound], Optional[Stopped]]:
    """Count and bound ``cand`` on fresh samples of Poisson size (mean ``lam`` a dataset), in the
    nested prefixes of ``stages`` (module docstring; none: the whole sample at once, on the
    streams ``seeds`` themselves): the counts, the bound of the prefix that stopped it (or of the
    whole sample; None when nothing was counted), and where it stopped (None: the whole sample
    was counted). A prefix whose bound refutes stops the count when ``stop(bound, counts, cand)``
    says so (None: always); any rule keeps the union bound. Each prefix's size is Poisson (mean
    f_i·lam: the increments are independent Poisson draws), so every bound method applies."""
    c = cand.choice
    paired = c.method == "paired"
    rng = generator(seeds[2])
    plan = [(float(f), float(share)) for f, share in stages] + [(1.0, None)]
    if stages:
        s_num, s_den = seeds[0].spawn(len(plan)), seeds[1].spawn(len(plan))
    else:
        s_num, s_den = [seeds[0]], [seeds[1]]
    total: Optional[Counts] = None
    spent, before = 0.0, 0.0
    for i, (f, share) in enumerate(plan):
        mean = lam * (f - before)
        want_num = int(rng.poisson(mean))
        want_den = want_num if paired else int(rng.poisson(mean))
        before = f
        done = 0 if total is None else total.n_num

        def progress(counts: Counts, done: int = done) -> None:
            report("validate", candidate=cand.pair.label, epsilon_lb=None,
                   validated=done + counts.n_num)

        got = sampler.count(cand.pair, c.event, paired=paired, n_num=want_num, n_den=want_den,
                            seeds=(s_num[i], s_den[i]), numerator=c.numerator, deadline=deadline,
                            lam=None, progress=progress, keep=kept)
        cut = got.n_num < want_num or got.n_den < want_den
        total = _add(total, got, None if cut else lam * f)
        last = share is None or cut
        if total.n_num == 0 or total.n_den == 0:
            if last:
                return total, None, None
            continue  # nothing counted yet (a tiny sample): this prefix's level is left unused
        level = alpha * (1.0 - spent) if last else alpha * share
        b = _bound(cand, total, level, delta, epsilon)
        if last:
            return total, b, None
        spent += share
        if b.epsilon_lb > epsilon and (stop is None or stop(b, total, cand)):
            return total, b, Stopped(i + 1, len(plan), f, level)
    return total, None, None  # not reached: the plan ends with the whole sample


def _bound(cand: Candidate, counts: Counts, alpha: float, delta: float, epsilon: float) -> Bound:
    c = cand.choice
    m, split = bound_method(c.method), c.split
    if not m.usable(counts):
        m, split = bound_method("marginal"), (0.5, 0.5)
    return m.validated(counts, alpha, split, delta, epsilon)


@dataclass(slots=True)
class Validated:
    """The best validated candidate (or None), and whether a time limit left a candidate uncounted."""

    bound: Optional[Bound] = None
    candidate: Optional[Candidate] = None
    counts: Optional[Counts] = None
    kept: Optional[list] = None
    timed_out: bool = False
    #: the largest validation size (of D or D′) of the candidates counted: what their counts could
    #: show at most (:func:`dpaudit.estimators.limits.best_ceiling`)
    largest_n: int = 0
    #: where the best candidate's staged validation stopped (None: its whole sample was counted)
    stopped: Optional[Stopped] = None


def validate(sampler: Any, cands: list[Candidate], seeds: Any, *, alpha: float, delta: float,
             epsilon: float, deadline: Optional[float], report: Callable[..., None],
             share: float = 1.0, stages: tuple = (),
             stop: Optional[Callable[..., bool]] = None) -> Validated:
    """Count and bound every candidate on fresh samples (module docstring); the best bound wins.
    ``share`` of the samples left is spent (the rest goes to another question's candidate).
    ``stages`` ((fraction, share of α), …) counts each candidate in nested prefixes that stop at
    the first refutation that ``stop(bound, counts, candidate)`` accepts (module docstring; None:
    the first refutation); empty: one count of the whole sample."""
    out = Validated()
    # what is left, less room for the Poisson draws to exceed their mean (by > 5 sd: < 1e-6)
    left = share * sampler.remaining
    lam = max(1.0, (left - 5.0 * math.sqrt(2.0 * left) - 2.0) / (2.0 * max(1, len(cands))))
    best: Optional[tuple] = None
    for cand, s in zip(cands, seeds.spawn(max(1, len(cands)))):
        kept: list = [[], []]
        counts, b, stopped = _count(sampler, cand, lam, tuple(s.spawn(3)), deadline, kept, report,
                                    stages, alpha, delta, epsilon, stop)
        if b is None:  # nothing counted on one dataset: the time limit came first
            out.timed_out = True
            continue
        out.largest_n = max(out.largest_n, counts.n_num, counts.n_den)
        if best is None or b.epsilon_lb > best[0].epsilon_lb:
            best = (b, cand, counts, kept, stopped)
        report("validate", candidate=cand.pair.label, epsilon_lb=b.epsilon_lb)
    if best is not None:
        out.bound, out.candidate, out.counts, out.kept, out.stopped = best
    elif cands:
        out.candidate = cands[0]
    return out
