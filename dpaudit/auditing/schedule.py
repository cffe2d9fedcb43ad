"""Early answers that stay sound: a Bonferroni (alpha-spending) schedule over geometric looks.

A sampled audit (and a curve audit, :mod:`dpaudit.curves.audit`) with budget B and family-wise
error α = 1 − confidence is run as a short sequence of *looks*. Look j = 1..m is a complete audit
of its own (search, selection and validation on its own fresh samples) with budget ``n_j`` and
error level ``α_j``; the looks' budgets grow geometrically, ratio 4, for the fractions
:data:`LOOK_FRACTIONS` of B (1/800, 1/200, 1/50, 2/25: 5,000, 20,000, 80,000 and 320,000
samples of the default 4·10⁶), so a claim refuted at look j has cost at most 5/4·n_j samples, and
a look smaller than ``min_look`` samples is left out. The final look gets the rest of the budget,
``B − Σ used_j`` (at least 89% of it), and the rest of the error level,
``α_final = α − Σ_{j≤m} α_j`` with ``α_j = SPEND·α`` (:data:`SPEND`). The run stops at the first
look whose validated bound refutes the claim.

Why the reported bound holds under that stopping rule: look j's bound is valid at level α_j on its
own (its validation samples played no part in choosing its pair or event; Ding et al. 2018 §4), so
with E_j = {look j's bound exceeds the true value},

    P(the reported bound exceeds the true value) ≤ P(∪_j E_j) ≤ Σ_j α_j = α          (Bonferroni)

whatever the dependence between looks and whatever rule decides when to stop and which look is
reported: the confidence holds under optional stopping at the looks. This is group-sequential
testing with a spending function fixed in advance (Lan and DeMets 1983, "Discrete sequential
boundaries for clinical trials", Biometrika 70(3); the Bonferroni bound over looks is their
conservative special case).

Why these looks: the early looks are where the samples to a refutation are decided. A Laplace
10% too narrow (ε 1.1 against a claim of 1) needs 7,882 samples (median) for an oracle that
knows the best event (Clopper-Pearson at α) and 16,710 at α/10; one audit look at α/10, which
must also find the pair and the event, refutes in 3 of 5 seeds at about 8,400 (its paired counts
win back the α), a μ = 1.1 Gaussian's curve look at about 13,000 (``benchmarks/oracle_gap.py
--single-look``). With looks at 1/256 and 1/64 of B (15,625 then 62,500) and α/20 each, the
first refuted after 61,000 samples; at 1/800 and 1/200 with α/10 each, after about 24,000 (the
5,000-sample look falls short, the 20,000 one refutes). Spending 40% of α on the early looks costs the final look little: its
bound depends on α through ln(1/α_final), 3.5 at 95% against 3.2 when it had 85% of α. When no look fits (budget < 12.5·``min_look``, 25,000 samples) the
schedule is the plain audit: one look, all of B, all of α.

The final look stops early too (:data:`FINAL_STAGES`): its validation sample is counted in nested
prefixes (1/16, 1/8, 1/4, 1/2 of it, then all), each prefix bounded at 2.5% of the final look's
α and the whole sample at the other 90%, and counting stops at the first prefix that refutes
(:mod:`dpaudit.auditing.validate`; Bonferroni over the prefixes, as over the looks). The final
look is the bulk of the budget, so a claim only it refutes no longer costs all of it: a Gaussian
(ε, δ) claim 2% too narrow, refuted by the final look, went from 3.99·10⁶ samples (median of 11
seeds) to 2.48·10⁶; the final look's search and race come before any validation
(``benchmarks/experiments/staged_validation``). A bound that does not refute is computed at 90% of the final look's α, where it had
all of it: ln(1/α) grows by 0.1 in 3.5, the Laplace ε = 1 bound from 4·10⁶ samples moves in its
fourth decimal. The early looks are not staged: an early look's size is matched to the
refutations it is there for, and prefixes at a share of its α_j lost as many of those (the
early look that was barely large enough) as they won (same record).
A plain audit (``early_stop=False``, or a budget with no early look) is not staged either.

**The betting look** (``betting=True``: point claims; :mod:`dpaudit.auditing.betting`, docs/math.md
"The betting look"). A point audit's first look is a test by betting, anytime-valid, at
:data:`BET_SPEND`·α, in two parts of :data:`BET_FRACTION` of the budget each (25,000 of 4·10⁶; a
smaller budget gets :data:`BET_SMALL` of it up to :data:`BET_SAMPLES` a part, at least
:data:`MIN_BET`). The parts are one wealth process, so the level is spent once (the second part's
α is 0 here). They come before and after the smallest sampled look, which stays as the float64
question's first look (the betting look asks the logic alone) and the logic's first with a pair
search; the look replaces the second smallest. It refutes at the draw where its wealth reaches
1/α_0, with no split and no level spent on looks inside it: a Laplace 10% too narrow, which the
20,000-sample look refuted at 23,800 samples in all (median of 5 seeds), is refuted after
13,194, a 2× violation after 332 where the 5,000-sample look took 4,578 (medians of 21 seeds,
``benchmarks/results/oracle_gap.json``). Curve claims keep the sampled looks.
"""

from __future__ import annotations

from dataclasses import dataclass

from dpaudit.claims import check_confidence
from dpaudit.errors import InvalidArgument

__all__ = ["Schedule", "schedule", "LOOK_FRACTIONS", "SPEND", "MIN_LOOK", "FINAL_STAGES",
           "BET_FRACTION", "BET_SMALL", "BET_SAMPLES", "BET_SPEND", "MIN_BET", "BETTING", "SAMPLED"]

#: the budget fractions of the early looks: geometric, ratio 4 (module docstring)
LOOK_FRACTIONS = (1 / 800, 1 / 200, 1 / 50, 2 / 25)
#: the share of α spent on each early look (four looks: 40% of α, the final look 60%)
SPEND = 0.1
#: the smallest early look (samples): a smaller audit rarely refutes anything
MIN_LOOK = 2_000
#: the final look's validation prefixes: (fraction of its validation sample, share of its α)
#: (module docstring); the whole sample gets the rest of its α (90%)
FINAL_STAGES = ((1 / 16, 0.025), (1 / 8, 0.025), (1 / 4, 0.025), (1 / 2, 0.025))
#: each of the betting look's two parts: BET_FRACTION of the budget, or BET_SMALL of a smaller
#: one up to BET_SAMPLES (25,000 samples of the default 4·10⁶, 12,500 of the 4·10⁵ of a mechanism
#: with no batch form), at least MIN_BET; its share of α is two sampled looks' (it replaces one,
#: module docstring), spent once for both parts
BET_FRACTION = 1 / 160
BET_SMALL = 1 / 32
BET_SAMPLES = 12_500
BET_SPEND = 0.2
MIN_BET = 1_000
#: the kinds of look (:attr:`Schedule.kinds`)
BETTING = "betting"
SAMPLED = "sampled"


@dataclass(frozen=True, slots=True)
class Schedule:
    """The early looks' budgets and error levels, and the final look's error level.

    ``budgets[j]``/``alphas[j]`` belong to early look j; the final look gets what the early looks
    left of the budget and ``final_alpha``; ``alpha`` = Σ alphas + final_alpha.
    """

    budget: int
    alpha: float
    budgets: tuple[int, ...]
    alphas: tuple[float, ...]
    final_alpha: float
    #: the final look's validation prefixes (:data:`FINAL_STAGES`; empty with no early look)
    final_stages: tuple = ()
    #: each early look's kind: :data:`BETTING` (the betting look, first) or :data:`SAMPLED`
    kinds: tuple = ()

    def kind(self, j: int) -> str:
        """Early look ``j``'s kind (the final look, j = -1, is sampled)."""
        return self.kinds[j] if 0 <= j < len(self.kinds) else SAMPLED

    @property
    def looks(self) -> int:
        """How many looks in all (the final one included)."""
        return len(self.budgets) + 1

    def confidence(self, j: int) -> float:
        """The confidence a look's own bound is computed at (1 − α_j; the final look is j = -1)."""
        return 1.0 - (self.final_alpha if j < 0 or j >= len(self.alphas) else self.alphas[j])

    def to_record(self) -> dict:
        return {"rule": "Bonferroni over geometric looks (alpha spending fixed in advance)",
                "budgets": list(self.budgets), "alphas": list(self.alphas),
                "final_alpha": self.final_alpha, "family_alpha": self.alpha,
                "final_stages": [{"fraction": f, "alpha_share": a} for f, a in self.final_stages],
                "kinds": [self.kind(j) for j in range(len(self.budgets))]}


def schedule(budget: int, confidence: float, min_look: int = MIN_LOOK,
             betting: bool = False) -> Schedule:
    """The look schedule of an audit of ``budget`` samples at family-wise ``confidence``
    (module docstring); with ``betting`` (point claims), the betting look first."""
    confidence = check_confidence(confidence)
    if isinstance(budget, bool) or int(budget) != budget or budget < 1:
        raise InvalidArgument.bad("budget", budget, "an integer >= 1")
    if isinstance(min_look, bool) or int(min_look) != min_look or min_look < 1:
        raise InvalidArgument.bad("min_look", min_look, "an integer >= 1")
    alpha = 1.0 - confidence
    budgets = tuple(int(f * budget) for f in LOOK_FRACTIONS if int(f * budget) >= min_look)
    alphas = tuple(SPEND * alpha for _ in budgets)
    kinds = (SAMPLED,) * len(budgets)
    if betting and budget >= 8 * MIN_BET:
        part = max(MIN_BET, int(BET_FRACTION * budget), min(int(BET_SMALL * budget), BET_SAMPLES))
        a = BET_SPEND * alpha
        if budgets:  # the smallest sampled look between the two parts; the next one replaced
            budgets = (part, budgets[0], part) + budgets[2:]
            alphas = (a, alphas[0], 0.0) + alphas[2:]
            kinds = (BETTING, SAMPLED, BETTING) + kinds[2:]
        else:
            budgets, alphas, kinds = (2 * part,), (a,), (BETTING,)
    return Schedule(int(budget), alpha, budgets, alphas, alpha - sum(alphas),
                    FINAL_STAGES if budgets else (), kinds)
