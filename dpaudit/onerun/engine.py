"""The one-run audit: m canaries, one training run, two tests (docs/training.md).

:func:`run` (``run(spec, settings) -> OneRunResult``, no command-line code) plays the game of
Steinke, Nasr & Jagielski (NeurIPS 2023, Algorithm 1):

1. every canary is included independently with probability ½ (S, from the recorded seed);
2. ``spec.train(dataset, rng)`` trains once on the data plus the included canaries;
3. every canary (included or not) is scored on the trained model by each named score;
4. every guesser of the family (:mod:`dpaudit.onerun.guesses`: scores × both directions × guess
   counts and splits, fixed before the run) counts its correct guesses;
5. two tests (:mod:`dpaudit.onerun.bounds`) bound ε from those counts: Steinke et al.'s Theorem 3
   and the f-DP recursion of Mahloujifar, Melis & Chaudhuri (ICML 2025, Algorithm 3) with the
   (ε, δ) trade-off curve (and, from the same recursion with the Gaussian curve, μ_LB).

**Soundness.** α = 1 − confidence is split in half between the two tests and each half over the
K guessers (Bonferroni): when the mechanism meets its (ε, δ) claim for every canary's
inclusion, the run refutes it with probability at most α, whichever guesser did best, whichever
direction the scores point. No score is chosen after looking at S: the family is fixed by m and
the score names, and ties are broken by keys drawn before S is read. μ_LB is stated at the f-DP
test's share (it refutes μ-GDP below it; it does not decide the verdict, whose claim is (ε, δ)).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence, Union

import numpy as np

from dpaudit.errors import InvalidArgument
from dpaudit.onerun import bounds as B
from dpaudit.onerun.guesses import Guesser, counts, family
from dpaudit.onerun.result import OneRunBound, OneRunDetails, OneRunResult
from dpaudit.results import Verdict
from dpaudit.rng import generator, root_sequence
from dpaudit.validation import check_confidence, check_delta, check_seed

__all__ = ["OneRunSpec", "OneRunSettings", "run", "audit_scores", "STEINKE", "FDP"]

STEINKE = "Steinke, Nasr & Jagielski 2023, Theorem 3"
FDP = "Mahloujifar, Melis & Chaudhuri 2025, Algorithm 3 (the (ε, δ) trade-off curve; μ from the Gaussian one)"

Score = Callable[[Any, Any], float]


@dataclass(frozen=True)
class OneRunSpec:
    """What to audit: ``train(dataset, rng) -> model`` trained once on ``data`` (a sequence of
    records) plus the included ``canaries``; ``score`` one function ``score(model, canary)``
    or several by name (each a family of guessers); the claim (``epsilon``, ``delta``) for one
    canary's inclusion (add-remove), its ``source`` in words; ``name`` the target's name;
    ``combine(data, canaries, rng)`` builds the training set (default: the records and the
    included canaries, in a random order); ``describe`` the trainer's parameters for the record."""

    train: Callable[[Any, np.random.Generator], Any]
    data: Sequence
    canaries: Sequence
    score: Union[Score, Mapping[str, Score]]
    epsilon: float
    delta: float = 0.0
    name: str = "train"
    source: Optional[str] = None
    combine: Optional[Callable[[Sequence, list, np.random.Generator], Any]] = None
    describe: Optional[Mapping[str, Any]] = None

    def scores(self) -> dict[str, Score]:
        if callable(self.score):
            return {getattr(self.score, "__name__", "score"): self.score}
        if isinstance(self.score, Mapping) and self.score and all(callable(f) for f in self.score.values()):
            return {str(k): f for k, f in self.score.items()}
        raise InvalidArgument.bad("score", self.score, "a function score(model, canary) or a mapping of them by name")


@dataclass(frozen=True)
class OneRunSettings:
    """How to audit: the family-wise ``confidence``, the recorded ``seed``, and ``guesser`` (None:
    the default family; a :class:`~dpaudit.onerun.guesses.Guesser` fixed in advance: that one
    alone at the full α share); ``reproduce`` the line that reruns the run (the command that
    asked for it knows it); ``peer`` a function ``peer(scores_in, scores_out, alpha, delta) ->
    dict`` run on the same scores (another auditor, side by side; it decides nothing)."""

    confidence: float = 0.95
    seed: Optional[int] = None
    guesser: Optional[Guesser] = None
    reproduce: str = ""
    peer: Optional[Callable[..., Mapping[str, Any]]] = field(default=None, compare=False)


def _check_claim(epsilon: Any, delta: Any) -> tuple[float, float]:
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not math.isfinite(float(epsilon)) \
            or float(epsilon) < 0:
        raise InvalidArgument.bad("epsilon", epsilon, "a finite number >= 0")
    return float(epsilon), check_delta(delta)


def run(spec: OneRunSpec, settings: OneRunSettings = OneRunSettings()) -> OneRunResult:
    """Train once with half the canaries in, score them, bound ε (module docstring). A trainer or
    score that raises (or a score that is not a finite number) gives an ERROR result."""
    start = time.perf_counter()
    epsilon, delta = _check_claim(spec.epsilon, spec.delta)
    confidence, seed = check_confidence(settings.confidence), check_seed(settings.seed)
    scorers = spec.scores()
    canaries = list(spec.canaries)
    m = len(canaries)
    if m < 1:
        raise InvalidArgument.bad("canaries", m, "at least one canary")
    include_seq, train_seq, tie_seq = root_sequence(seed).spawn(3)
    include_rng = generator(include_seq)
    included = include_rng.random(m) < 0.5
    chosen = [c for c, s in zip(canaries, included) if s]
    train_s = None
    try:
        if spec.combine is not None:
            dataset = spec.combine(spec.data, chosen, include_rng)
        else:
            dataset = list(spec.data) + chosen
            dataset = [dataset[i] for i in include_rng.permutation(len(dataset))]
        t0 = time.perf_counter()
        model = spec.train(dataset, generator(train_seq))
        train_s = time.perf_counter() - t0
        scores = {}
        for name, f in scorers.items():
            values = np.asarray([float(f(model, c)) for c in canaries], dtype=float)
            bad = np.flatnonzero(~np.isfinite(values))
            if bad.size:
                raise ValueError(f"score {name!r} gave {values[bad[0]]} for canary {int(bad[0])}")
            scores[name] = values
    except Exception as exc:  # the audited training failed: an ERROR verdict, never a traceback
        return OneRunResult(
            target=spec.name, epsilon=epsilon, delta=delta, verdict=Verdict.ERROR, confidence=confidence,
            canaries=m, included=int(included.sum()), epsilon_lower_bound=None, steinke=None, fdp=None,
            reproduce=settings.reproduce, elapsed_s=time.perf_counter() - start,
            error=f"{type(exc).__name__}: {exc}", seed=seed, source=spec.source,
            details=OneRunDetails(guessers=0, guess_family="none", scores={}, train_s=train_s,
                                  trainer=spec.describe, failure=f"{type(exc).__name__}: {exc}"))
    return audit_scores(scores, included, epsilon=epsilon, delta=delta, confidence=confidence, seed=seed,
                        guesser=settings.guesser, target=spec.name, source=spec.source,
                        reproduce=settings.reproduce, peer=settings.peer, train_s=train_s,
                        trainer=spec.describe, tie_rng=generator(tie_seq), started=start)


def _test(name: str, claim_refuted: bool, values: list, alpha: float, level: float,
          ceiling: float, extra: Optional[dict] = None) -> OneRunBound:
    eps, arg = B.best(values)
    g, (r, v) = arg if arg is not None else (None, (None, None))
    return OneRunBound(source=name, epsilon_lower_bound=eps, alpha=alpha, level=level,
                       refutes_claim=claim_refuted, guesser=None if g is None else g.to_record(),
                       guesses=r, correct=v, ceiling=ceiling, **(extra or {}))


def audit_scores(scores: Union[np.ndarray, Mapping[str, np.ndarray]], included: Any, *, epsilon: float,
                 delta: float = 0.0, confidence: float = 0.95, seed: Optional[int] = None,
                 guesser: Optional[Guesser] = None, target: str = "scores", source: Optional[str] = None,
                 reproduce: str = "", peer: Optional[Callable[..., Mapping[str, Any]]] = None,
                 train_s: Optional[float] = None, trainer: Optional[Mapping[str, Any]] = None,
                 tie_rng: Optional[np.random.Generator] = None, started: Optional[float] = None,
                 bounds: bool = True) -> OneRunResult:
    """The two tests on scores already computed: ``scores`` (one array, or arrays by name, one
    value per canary) and ``included`` (bool per canary: the S of the run). ``bounds=False``
    decides the verdict at the claim only (no ε_LB by bisection, no ceilings: the calibration
    runs). Module docstring for the rest."""
    start = time.perf_counter() if started is None else started
    epsilon, delta = _check_claim(epsilon, delta)
    confidence = check_confidence(confidence)
    if not isinstance(scores, Mapping):
        scores = {"score": scores}
    scores = {str(k): np.asarray(v, dtype=float).ravel() for k, v in scores.items()}
    included = np.asarray(included, dtype=bool).ravel()
    m = included.size
    if m < 1 or any(v.size != m for v in scores.values()):
        raise InvalidArgument.bad("scores", {k: v.size for k, v in scores.items()},
                                  f"one score per canary ({m} canaries)")
    if tie_rng is None:
        tie_rng = generator(root_sequence(seed).spawn(3)[2])
    ties = tie_rng.random(m)
    if guesser is not None:
        if guesser.score not in scores or guesser.guesses > m or min(guesser.k_plus, guesser.k_minus) < 0:
            raise InvalidArgument.bad("guesser", guesser, f"a score of {sorted(scores)} and at most {m} guesses")
        guessers: tuple = (guesser,)
    else:
        guessers = family(m, list(scores))
    k = len(guessers)
    alpha = 1.0 - confidence
    a_st, a_fdp = alpha / 2, alpha / 2
    lv_st, lv_fdp = a_st / k, a_fdp / k
    found = list(zip(guessers, counts(scores, included, guessers, ties)))
    claim_inv = B.approx_dp_inverse(epsilon, delta)
    st_refutes = any(B.steinke_p_value(m, r, v, epsilon, delta) <= lv_st for _, (r, v) in found)
    fdp_refutes = any(B.fdp_rejects(claim_inv, m, r, v, lv_fdp) for _, (r, v) in found)
    promising = [(g, rv) for g, rv in found if rv[0] > 0 and rv[1] * 2 > rv[0]]
    if bounds:
        fam_sizes = tuple(sorted({g.guesses for g in guessers}))
        ceil = B.ceilings(m, fam_sizes, delta, lv_st, lv_fdp)
        st_vals = [(B.steinke_epsilon(m, r, v, delta, lv_st), (g, (r, v))) for g, (r, v) in promising]
        fdp_vals = [(B.fdp_epsilon(m, r, v, delta, lv_fdp), (g, (r, v))) for g, (r, v) in promising]
        mu_vals = [(B.gdp_mu(m, r, v, lv_fdp), (g, (r, v))) for g, (r, v) in promising]
    else:
        ceil = {"steinke": math.nan, "fdp": math.nan, "mu": None, "gdp_epsilon": None}
        st_vals, fdp_vals, mu_vals = [], [], []
    mu, _ = B.best(mu_vals)
    # a bound above the claim refutes it too: a mechanism meeting (ε, δ) meets every larger ε, so
    # the tail bound at any ε′ ≥ ε applies (the p-value is the smallest over ε′ ≥ ε)
    st_refutes = st_refutes or B.best(st_vals)[0] > epsilon
    fdp_refutes = fdp_refutes or B.best(fdp_vals)[0] > epsilon
    steinke = _test(STEINKE, st_refutes, st_vals, a_st, lv_st, ceil["steinke"])
    fdp = _test(FDP, fdp_refutes, fdp_vals, a_fdp, lv_fdp, ceil["fdp"],
                {"mu_lower_bound": mu if bounds else None,
                 "gdp_epsilon": (B.gdp_epsilon(mu, delta) if delta > 0 else None) if bounds else None,
                 "ceiling_mu": ceil["mu"], "ceiling_gdp_epsilon": ceil["gdp_epsilon"]})
    verdict = Verdict.REFUTED if (st_refutes or fdp_refutes) else Verdict.NOT_REFUTED
    summary = {name: {"mean_included": float(v[included].mean()) if included.any() else None,
                      "mean_excluded": float(v[~included].mean()) if (~included).any() else None}
               for name, v in scores.items()}
    peer_rec = None
    if peer is not None:
        first = scores[next(iter(scores))]
        try:
            peer_rec = dict(peer(first[included], first[~included], alpha, delta))
        except Exception as exc:  # another auditor failing says nothing about the claim
            peer_rec = {"error": f"{type(exc).__name__}: {exc}"}
    return OneRunResult(
        target=target, epsilon=epsilon, delta=delta, verdict=verdict, confidence=confidence, canaries=m,
        included=int(included.sum()),
        epsilon_lower_bound=max(steinke.epsilon_lower_bound, fdp.epsilon_lower_bound) if bounds else None,
        steinke=steinke, fdp=fdp, reproduce=reproduce, elapsed_s=time.perf_counter() - start, seed=seed,
        source=source, peer=peer_rec,
        details=OneRunDetails(guessers=k, guess_family="pre-registered" if guesser is not None else "family",
                              scores=summary, train_s=train_s, trainer=trainer))

