"""The betting look: an anytime-valid test of a point claim whose pair and event are chosen as the
samples come, on the samples that test them.

A claim (ε, δ) says P(M(D) ∈ S) ≤ e^ε·P(M(D') ∈ S) + δ for every neighbouring pair and every event
S. For one draw (x, y) of M(D) and M(D'), on any coupling, let

    X = 1[x ∈ S] − e^ε·1[y ∈ S] − δ,        so that  E[X] ≤ 0 under the claim.

The look bets on X (testing by betting: Shafer and Vovk 2019; Waudby-Smith and Ramdas 2024,
"Estimating means of bounded random variables by betting", JRSS-B 86(1); for DP auditing,
González, Dulce Rubio, Ramdas and Ribero 2025, "Sequentially auditing differential privacy",
NeurIPS, who bet on a kernel statistic where this bets on an event's indicator):
its wealth starts at 1 and each draw multiplies it by 1 + λ·X, with λ ∈ [0, 1/(e^ε + δ)] so the
factor is never negative. The pair, the event S, its direction and λ of round r are chosen from
the draws before round r only (they are *predictable*), so under the claim the wealth is a
nonnegative supermartingale whatever rule chooses them, and by Ville's inequality (1939)

    P(the wealth ever reaches 1/α) ≤ α.

The claim is refuted the moment the wealth reaches 1/α: there is no split into a selection and a
validation sample, no level split over looks or events, and the look may stop after any draw. The
draws of a pair that lose their chosen event's bet are still the next round's evidence for
choosing it.

How it chooses: a first round draws :data:`FIRST_ROWS` rows of each of the first
:data:`MAX_PAIRS` structured pairs (common random numbers: row i of D and D' from one seed); each
later round draws a batch of the pair whose best event promises the most growth on all its earlier
draws (while none promises any, the pair with the fewest draws): the event of
:func:`~dpaudit.estimators.selection.choose_event`, the design (the batch's D and D' on one seed,
or on two) whose X has the larger estimated growth (one seed leaves E[X] as it is and makes X far
less noisy where the two outputs move together, as a sum's noise does; it makes X noisier where
they move apart, as randomized response's do: each design's law of X is estimated from the
draws, the independent one from their margins), and the bet, :data:`FRACTION` of the Kelly
fraction on those draws, at most :data:`SAFE` of the largest safe bet. The batch is
:data:`GROWTH` of the rows the pair has (at least :data:`FIRST_ROWS`): a refutation draws at
most about a quarter more than it needed.

Once the wealth reaches 1/α the claim is refuted (``refuted_at`` samples). The look bets on,
within its budget, until the wealth reaches ``strong`` (for the audit, a family-wise p-value of
10⁻³, which a report does not call marginal) and it has drawn :data:`AFTER` times the samples
that refuted (or its ε_LB reaches :data:`STRONG`): the refutation's p-value and bound then say
how far off the claim is, for at most twice its samples. Ville's inequality holds for the
largest wealth over the whole run, so p = 1/max W stays valid (anytime-valid p-values: Ramdas,
Grünwald, Vovk and Shafer 2023, "Game-theoretic statistics and safe anytime-valid inference",
Statistical Science 38(4)).

The bound is the lower end of a confidence sequence. Every ε′ of a grid (:data:`GRID` points,
:data:`GRID_FINE` of them from 0 to ε + 1, the rest up to ε + 25) has a wealth of its own, on
the same draws and events, with X(ε′) = 1[x ∈ S] − e^ε′·1[y ∈ S] − δ and a bet of its own (the
same rule, at most SAFE/(e^ε′ + δ)); each is a test of "M is ε′-DP" at level α. The lower end
ε_LB is the top of the run of grid points refuted from 0 (:func:`_lower_end`): it is above the
true ε only if the first grid point above the true ε, a true claim, is refuted, which happens
with probability at most α (Ville). For an (ε, δ) claim the wealth of every δ′ from δ up at the
claimed ε gives δ_LB the same way (one bet, the claim's; the wealth decreases in δ′). Both are
weaker than a Clopper-Pearson bound on as many fresh samples of a known event: the betting look
is there to refute early, and a run that must bound tightly turns early stopping off.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Optional

import numpy as np

from dpaudit.auditing.race import Candidate
from dpaudit.auditing.sampled import LOGIC, Answer, Outcome, pattern_pairs
from dpaudit.auditing.sampler import KEEP_BYTES, Exhausted, Sampler
from dpaudit.estimators.bounds import Bound, Counts, cp_interval
from dpaudit.estimators.selection import choose_event
from dpaudit.neighbours.relations import Pair
from dpaudit.outputs import OutputEncoder
from dpaudit.spec import MechanismSpec

__all__ = ["Betting", "Bettor", "bet", "look", "p_value", "kelly", "FIRST_ROWS", "MAX_PAIRS", "GROWTH", "FRACTION", "SAFE",
           "MAX_EPSILON"]

#: rows per dataset of every pair's first round, and the least batch of a later round
FIRST_ROWS = 8
#: at most this many structured pairs get a first round
MAX_PAIRS = 8
#: a pair's batch is this share of the rows it has (geometric rounds) ...
GROWTH = 0.25
#: ... or this share while no pair's bet promises growth (a round that bets nothing only looks
#: for a bet: larger rounds, fewer event choices, for a correct mechanism about a third of them)
EXPLORE = 1.0
#: the bet is this share of the Kelly fraction estimated on the earlier draws
FRACTION = 0.5
#: ... times n/(n + PRIOR_ROWS) on n rows (a plug-in on few rows overbets)
PRIOR_ROWS = 32
#: a pair's design is chosen from the estimates once it has this many rows drawn on one seed;
#: before that, one seed
DESIGN_ROWS = 64
#: ... and at most this share of the largest safe bet 1/(e^ε + δ)
SAFE = 0.75
#: points of the ε′ grid the wealth is tracked on, GRID_FINE of them from 0 to ε + 1
GRID = 512
GRID_FINE = 256
#: after a refutation, the look bets on until it is strong (``strong``) and has drawn AFTER
#: times the samples that refuted, or its ε_LB reaches STRONG: a refutation costs at most twice
#: its samples, for a bound that says how far the claim is off
AFTER = 2.0
STRONG = 5.0
#: claims of ε above this are not bet on (the largest safe bet, e^−ε, is too small to win: at
#: ε = 8 an event never seen on D′ needs about 18,000 rows to refute it)
MAX_EPSILON = 8.0
#: outputs per dataset kept for the report's plots
KEEP = 2_000
_BET_WORD = 0xBE7_7106


@dataclass(slots=True)
class Betting:
    """What the betting look found (module docstring): whether the wealth at the claim reached
    1/α (``refuted``, after ``refuted_at`` samples), the samples drawn, the largest log-wealth at
    the claim, the confidence sequence's ε_LB (at the claimed δ) and, for an (ε, δ) claim, its
    δ_LB at the claimed ε, the pair, event and direction
    of the last round, the counts of that event on all that pair's draws (a description for the
    report: those draws also chose the event), and one line per round."""

    refuted: bool = False
    refuted_at: Optional[int] = None
    samples: int = 0
    log_wealth: float = 0.0
    epsilon_lb: float = 0.0
    delta_lb: Optional[float] = None
    pair: Optional[Pair] = None
    choice: Any = None
    counts: Optional[tuple] = None
    rounds: list = field(default_factory=list)
    error: Any = None
    timed_out: bool = False
    schema: Any = None
    #: the first outputs of that pair's numerator and denominator dataset (the report's plots)
    kept: Optional[list] = None
    #: why the look stopped betting without a verdict of its own (an output kind its first
    #: draws fixed was left: :class:`dpaudit.errors.OutputChanged`), or None
    gave_up: Optional[str] = None
    #: the betting look's draws over all its parts so far
    drawn: int = 0

    def to_record(self) -> dict:
        return {"refuted": self.refuted, "refuted_at": self.refuted_at, "samples": self.samples,
                "log_wealth": self.log_wealth, "epsilon_lb": self.epsilon_lb,
                "delta_lb": self.delta_lb,
                "pair": None if self.pair is None else self.pair.label, "rounds": len(self.rounds),
                "last_rounds": self.rounds[-3:], "gave_up": self.gave_up, "drawn": self.drawn}


def kelly(vals: np.ndarray, weights: np.ndarray, lam_max: Any, iters: int = 60) -> np.ndarray:
    """For each column of ``vals`` (values × points; a 1-d ``vals`` is one point), the λ in
    [0, lam_max] that maximises Σ w·log(1 + λ·x) over its values with weights ``weights``
    (summing to 1): concave in λ, so bisection on its derivative Σ w·x / (1 + λ·x)."""
    v = vals.reshape(vals.shape[0], -1)
    w = np.asarray(weights, dtype=float)[:, None]
    hi = np.broadcast_to(np.asarray(lam_max, dtype=float), (v.shape[1],)) * (1.0 - 1e-9)

    def slope(lam: np.ndarray) -> np.ndarray:
        return np.sum(w * v / (1.0 + lam[None, :] * v), axis=0)

    lo = np.zeros(v.shape[1])
    up = (w * v).sum(axis=0) > 0.0  # a bet only where the mean is positive
    full = up & (slope(hi) >= 0.0)
    h = hi.copy()
    for _ in range(iters):
        mid = 0.5 * (lo + h)
        rise = slope(mid) > 0.0
        lo = np.where(rise, mid, lo)
        h = np.where(rise, h, mid)
    out = np.where(full, hi, np.where(up, lo, 0.0))
    return out if vals.ndim > 1 else out.reshape(())


def _growth(vals: np.ndarray, weights: np.ndarray, lam: float) -> float:
    return float(np.dot(weights, np.log1p(lam * vals))) if lam > 0 else 0.0


@dataclass(slots=True)
class _Plan:
    """One pair's next bet, chosen on its draws so far."""

    growth: float
    projected: float
    choice: Any
    paired: bool
    lam: float
    #: the bet at every ε′ of the grid (``lam`` is the one at the claim)
    lams: Any = None


def _plan(yd: np.ndarray, yp: np.ndarray, together: np.ndarray, schema: Any, egrid: np.ndarray,
          claim_i: int, delta: float, alpha: float) -> Optional[_Plan]:
    """The pair's best bet on its draws ``yd``, ``yp`` (rows ``together`` drawn on one seed):
    the event, the design and the bets with the largest estimated growth at the claim, the grid
    point ``claim_i`` of ``egrid`` = e^ε′ (module docstring)."""
    n = yd.shape[0]
    choice = choose_event(yd, yp, schema, n_val=4.0 * n, alpha=alpha, delta=delta,
                          paired=bool(together.all()), quick=True, floats=False)
    if choice is None:
        return None
    num, den = (yd, yp) if choice.numerator == 0 else (yp, yd)
    a, b = choice.event.contains(num), choice.event.contains(den)
    # X(ε′) for (a, b) = (1, 0), (1, 1), (0, 1), (0, 0), at every ε′ of the grid
    vals = np.stack([np.full(egrid.size, 1.0 - delta), 1.0 - egrid - delta, -egrid - delta,
                     np.full(egrid.size, -delta)])
    caps = SAFE / (egrid + delta)
    # two seeds: a and b independent, each with its own margin (from every row)
    pa, pb = np.count_nonzero(a) / n, np.count_nonzero(b) / n
    designs = [(False, np.array([pa * (1 - pb), pa * pb, (1 - pa) * pb, (1 - pa) * (1 - pb)]))]
    # one seed: X = a − e·b on each row drawn together (four values at most)
    k = int(np.count_nonzero(together))
    if k:
        at, bt = a[together], b[together]
        both = np.count_nonzero(at & bt)
        n10, n01 = np.count_nonzero(at) - both, np.count_nonzero(bt) - both
        designs.insert(0, (True, np.array([n10, both, n01, k - n10 - both - n01], dtype=float) / k))
    if 0 < k < DESIGN_ROWS:  # on few rows drawn on one seed, one seed; from more, the estimates
        designs = designs[:1]
    shrink = n / (n + PRIOR_ROWS)  # a plug-in on few rows overbets: less, the fewer they are
    best = None
    for paired, w in designs:
        lams = np.minimum(caps, shrink * FRACTION * kelly(vals, w, caps / FRACTION))
        # at and below the claim, the claim's bet (safe there: the caps fall with ε′), so the
        # wealth falls with ε′ there and a refuted claim has every grid point below it refuted
        lams[:claim_i] = lams[claim_i]
        g = _growth(vals[:, claim_i], w, float(lams[claim_i]))
        if best is None or g > best.growth:
            best = _Plan(g, float(choice.projected), choice, paired, float(lams[claim_i]), lams)
    return best


def _lower_end(best: np.ndarray, threshold: float) -> int:
    """The index of the confidence sequence's lower end on the grid: the last point of the run of
    points from the first whose wealth reached e^threshold (0 when the first did not: then the
    bound is the grid's first point, 0). Each point's bets are its own, so the points refuted
    need not be an interval; the run from 0 is what keeps the bound valid: it passes the true
    value only if the first grid point above the true value is refuted, a true null, which
    happens with probability at most α (Ville)."""
    miss = np.nonzero(~(best >= threshold))[0]  # a NaN is not a refutation
    if miss.size == 0:
        return best.size - 1
    return max(0, int(miss[0]) - 1)


def _next(plans: dict, data: dict) -> Any:
    """The pair to draw next: the one whose bet promises the most growth; while none promises
    any, the one with the fewest draws among those with an event (exploration); None when no
    pair has one."""
    able = [(pl.growth, -data[key][1].shape[0], -i, key)
            for i, (key, pl) in enumerate(plans.items()) if pl is not None]
    if not able:
        return None
    best = max(able)
    if best[0] > 0.0:
        return best[3]
    return max(able, key=lambda t: (t[1], t[2]))[3]


def _draw(sampler: Sampler, p: Pair, plan: _Plan, root: np.random.SeedSequence, m: int,
          deadline: Optional[float]) -> tuple[np.ndarray, np.ndarray]:
    """``m`` rows of D and D' of ``p``: on one seed (paired), or on two."""
    if plan.paired:
        return sampler.draw_pair(p, root.spawn(1)[0], m, deadline)
    s_d, s_p = root.spawn(2)
    return sampler.draw(p.dataset, s_d, m, deadline), sampler.draw(p.neighbour, s_p, m, deadline)


class Bettor:
    """The betting look's state, kept between its parts (:func:`look`): the draws of every pair,
    the wealths and the seed stream. One wealth process runs through all the parts, so Ville's
    inequality, hence the level α, holds for the whole of it (the sampled looks between parts draw
    samples of their own, independent of the bets' draws; a choice that saw them is still made
    before the draws it bets on)."""

    def __init__(self, spec: MechanismSpec, executor: Any, *, alpha: float, seed: int,
                 strong: Optional[float] = None, pairs: Optional[list] = None,
                 encoder: Optional[OutputEncoder] = None) -> None:
        self.spec, self.executor, self.alpha, self.seed = spec, executor, float(alpha), int(seed)
        self.eps, self.delta = float(spec.epsilon), float(spec.delta)
        self.encoder = encoder or OutputEncoder(spec.output)
        self.pairs = (pattern_pairs(spec) if pairs is None else pairs)[:MAX_PAIRS]
        eps, delta = self.eps, self.delta
        self.able = bool(self.pairs) and eps <= MAX_EPSILON
        eps = min(eps, MAX_EPSILON)  # (the grid of a claim not bet on is never used)
        # the ε′ grid: fine up to ε + 1, then coarser up to ε + 25 (:func:`_lower_end`)
        grid = np.concatenate([np.linspace(0.0, eps + 1.0, GRID_FINE),
                               np.linspace(eps + 1.0, eps + 25.0, GRID - GRID_FINE + 1)[1:]])
        self.claim_i = int(np.searchsorted(grid, eps))
        grid[self.claim_i] = eps  # the claim itself is a grid point (the grid stays increasing)
        self.grid, self.egrid = grid, np.exp(grid)
        # at the claimed ε, the wealth for every δ′ from the claimed δ up to where the claim's
        # bet stays safe (λ·(e^ε + δ′) < 1, λ ≤ SAFE/(e^ε + δ)), at most 1: the top δ′ it
        # refutes is the δ_LB of an (ε, δ) claim
        d_top = min(1.0, 0.999 * ((math.exp(eps) + delta) / SAFE - math.exp(eps))) if self.able else 1.0
        self.dgrid = np.linspace(delta, d_top, GRID) if delta > 0 else np.zeros(0)
        self.logw_d = np.zeros(self.dgrid.size)
        self.best_d = np.full(self.dgrid.size, -np.inf)
        self.threshold = math.log(1.0 / alpha)
        self.enough = max(self.threshold, math.log(strong) if strong is not None else self.threshold)
        self.logw = np.zeros(GRID)
        self.best = np.full(GRID, -np.inf)  # the largest log-wealth reached at each ε′
        self.root = np.random.SeedSequence([self.seed, _BET_WORD])  # children in order
        self.data: dict = {}
        self.plans: dict = {}
        self.used = 0  # samples over all parts
        self.refuted_at: Optional[int] = None  # ... when the wealth first reached 1/α
        self.pair: Optional[Pair] = None
        self.choice: Any = None
        self.rounds: list = []
        self.done = False  # refuted and strong: a later part draws nothing

    def segment(self, budget: int, deadline: Optional[float] = None,
                progress: Optional[Callable[[dict], None]] = None) -> Betting:
        """Bet on with at most ``budget`` more mechanism calls (module docstring); what this part
        found, its ``samples`` this part's, ``refuted_at`` counted from this part's start (None
        when the refutation came in an earlier part). A mechanism's failure is in ``error``;
        nothing here raises for it."""
        from dpaudit.errors import MechanismError, OutputChanged, TimeLimitReached

        sampler = Sampler(self.spec, self.executor, self.encoder, budget)
        res = Betting()
        ci = self.claim_i
        try:
            if not self.able or self.done:
                raise _Stop
            if not self.data:
                if budget < 2 * FIRST_ROWS * len(self.pairs):
                    raise _Stop
                sampler.probe_width(self.pairs[0].dataset, self.seed)
                first = sampler.draw_pairs(self.pairs, self.root.spawn(1)[0], FIRST_ROWS, deadline)
                for p, (yd, yp) in zip(self.pairs, first):
                    self.data[p.key] = [p, yd, yp, np.ones(FIRST_ROWS, dtype=bool)]
            while sampler.remaining >= 2 * FIRST_ROWS:
                if deadline is not None and time.monotonic() > deadline:
                    res.timed_out = True
                    break
                self._round(sampler, deadline)
                if progress is not None:
                    progress({"phase": "betting", "samples": sampler.used, "budget": budget,
                              "log_wealth": float(self.logw[ci])})
                if self.refuted_at is None and self.best[ci] >= self.threshold:
                    self.refuted_at = self.used + sampler.used
                    res.refuted_at = sampler.used
                if self.best[ci] >= self.enough and (
                        self.used + sampler.used >= AFTER * self.refuted_at
                        or self.grid[_lower_end(self.best, self.threshold)] >= STRONG):
                    self.done = True
                    break
        except (_Stop, _NoEvent):
            pass
        except Exhausted:
            res.timed_out = res.timed_out or sampler.time_cut
        except TimeLimitReached:  # the user's limit, not a fault: no verdict from this part
            res.timed_out = True
        except OutputChanged as exc:
            # the first draws (8 rows a pair) fixed an output kind a later draw left (None now
            # and then, vectors of varying length): the sampled looks fix theirs from a larger
            # first batch, and report the mechanism's error if it is one; this look stops here
            self.done = True
            res.gave_up = str(exc)
        except MechanismError as exc:  # the caller reports it (and keeps what was found)
            res.error = exc
        self.used += sampler.used
        return self._result(res, sampler)

    def _round(self, sampler: Sampler, deadline: Optional[float]) -> None:
        """One round (module docstring): choose on the draws so far, draw a batch, bet."""
        for key, (p, yd, yp, together) in self.data.items():
            if key not in self.plans:
                self.plans[key] = _plan(yd, yp, together, self.encoder.schema, self.egrid,
                                        self.claim_i, self.delta, self.alpha)
        key = _next(self.plans, self.data)
        if key is None:
            raise _NoEvent
        plan, (p, old_d, old_p, together) = self.plans[key], self.data[key]
        growth = GROWTH if plan.growth > 0.0 else EXPLORE  # a bet, or a look for one
        m = int(min(max(FIRST_ROWS, growth * old_d.shape[0]), sampler.remaining // 2))
        yd, yp = _draw(sampler, p, plan, self.root, m, deadline)
        num, den = (yd, yp) if plan.choice.numerator == 0 else (yp, yd)
        a, b = plan.choice.event.contains(num), plan.choice.event.contains(den)
        # the wealth at every ε′, draw by draw: log W_t(ε′) = Σ log(1 + λ X_i(ε′))
        xs = a[:, None].astype(float) - self.egrid[None, :] * b[:, None] - self.delta
        path = self.logw[None, :] + np.cumsum(np.log1p(plan.lams[None, :] * xs), axis=0)
        self.logw = path[-1]
        self.best = np.maximum(self.best, path.max(axis=0))
        if self.dgrid.size:
            xd = (a.astype(float) - math.exp(self.eps) * b)[:, None] - self.dgrid[None, :]
            path_d = self.logw_d[None, :] + np.cumsum(np.log1p(plan.lam * xd), axis=0)
            self.logw_d = path_d[-1]
            self.best_d = np.maximum(self.best_d, path_d.max(axis=0))
        self.pair, self.choice = p, plan.choice
        self.rounds.append({"pair": p.label, "rows": m, "paired": plan.paired, "bet": plan.lam,
                            "growth": plan.growth, "log_wealth": float(self.logw[self.claim_i])})
        # every draw chooses the pair's next bet; the rows drawn on one seed are marked
        self.data[key] = [p, np.concatenate([old_d, yd]), np.concatenate([old_p, yp]),
                          np.concatenate([together, np.full(m, plan.paired)])]
        del self.plans[key]

    def _result(self, res: Betting, sampler: Sampler) -> Betting:
        ci, enc = self.claim_i, self.encoder
        res.samples = sampler.used
        res.drawn = self.used
        res.schema = enc.schema if enc.schema is not None else sampler.probed
        res.refuted = self.refuted_at is not None
        res.log_wealth = float(self.best[ci]) if np.isfinite(self.best[ci]) else 0.0
        res.epsilon_lb = float(self.grid[_lower_end(self.best, self.threshold)])
        if self.dgrid.size:  # nothing refuted at the claimed δ: no bound on δ above 0
            refuted_d = self.best_d[0] >= self.threshold
            res.delta_lb = float(self.dgrid[_lower_end(self.best_d, self.threshold)]) if refuted_d else 0.0
        res.rounds = self.rounds
        if self.pair is not None:
            res.pair, res.choice = self.pair, self.choice
            p, yd, yp, _ = self.data[self.pair.key]
            num, den = (yd, yp) if self.choice.numerator == 0 else (yp, yd)
            a, b = self.choice.event.contains(num), self.choice.event.contains(den)
            res.counts = (int(yd.shape[0]), int(np.count_nonzero(a)), int(np.count_nonzero(b)))
            keep = min(KEEP, sampler.rows_within(KEEP_BYTES))
            res.kept = [num[:keep].tolist(), den[:keep].tolist()]
        return res


class _Stop(Exception):
    """Nothing to bet on (no pair, a claim too large, a budget too small, or already done)."""


class _NoEvent(Exception):
    """No pair has an event to bet on."""


def bet(spec: MechanismSpec, executor: Any, *, budget: int, alpha: float, seed: int,
        strong: Optional[float] = None, deadline: Optional[float] = None,
        pairs: Optional[list] = None, encoder: Optional[OutputEncoder] = None,
        progress: Optional[Callable[[dict], None]] = None) -> Betting:
    """The betting look in one part (:class:`Bettor`): on ``spec``'s point claim (ε, δ) at level
    ``alpha`` with at most ``budget`` mechanism calls (module docstring); after a refutation it
    bets on until the wealth reaches ``strong`` (default 1/α) and :data:`AFTER` times the
    samples that refuted."""
    return Bettor(spec, executor, alpha=alpha, seed=seed, strong=strong, pairs=pairs,
                  encoder=encoder).segment(budget, deadline, progress)


def look(bettor: Bettor, *, budget: int, timeout: Optional[float] = None,
         progress: Optional[Callable[[dict], None]] = None, charge: bool = True) -> Outcome:
    """A part of the betting look as a look of the sampled audit (:mod:`dpaudit.auditing.looks`):
    the logic question only, at the bettor's level α of the run's, betting on after a refutation
    until its family-wise p-value is not marginal (the bettor's ``strong``). A refutation is the
    answer's bound (method ``"betting"``); without one its bound (the confidence sequence's lower
    end, at most the claim) stands for this part only, and the looks after it go on. ``charge``:
    whether this part's answer carries the level (the first part; the later ones spend none,
    ``alpha`` 0: one wealth process, one level)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    res = bettor.segment(budget, deadline, progress)
    spec, alpha = bettor.spec, bettor.alpha
    out = Outcome(samples=res.samples, timed_out=res.timed_out, error=res.error,
                  phases={"betting": res.to_record()}, schema=res.schema, encoder=bettor.encoder)
    ans = Answer(LOGIC, alpha=alpha if charge else 0.0, validated=0, timed_out=res.timed_out)
    if res.counts is not None and res.gave_up is None:  # (gave up: the sampled looks ask afresh)
        n, x, y = res.counts
        # a refutation at the claim says the true ε is above it: a bound at least the claim's
        # next double, whatever grid point the confidence sequence's lower end fell on
        eps_lb = max(res.epsilon_lb, math.nextafter(float(spec.epsilon), math.inf)) if res.refuted \
            else min(res.epsilon_lb, float(spec.epsilon))
        ans.bound = Bound(eps_lb, res.delta_lb, x / n, y / n, cp_interval(x, n, alpha),
                          cp_interval(y, n, alpha), "betting", alpha, res.log_wealth)
        # the event as chosen, with no projected curve: its draws are the bet's, not a split's
        ans.candidate = Candidate(res.pair, replace(res.choice, curve=None))
        ans.counts = Counts(n, n, x, y)
        ans.kept = res.kept
        ans.drawn = res.drawn
        ans.validated = 1
    out.answers[LOGIC] = ans
    return out


def p_value(bound: Bound, family_alpha: float) -> float:
    """The family-wise p-value of a betting bound: (family_alpha/α)·e^−(largest log-wealth),
    capped at 1 (Ville: the largest wealth of a test supermartingale reaches 1/p with probability
    at most p; Bonferroni factor family_alpha/α, as the other looks')."""
    lw = bound.log_wealth if bound.log_wealth is not None else 0.0
    return float(min(1.0, family_alpha / bound.alpha * math.exp(-min(lw, 700.0))))
