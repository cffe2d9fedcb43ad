"""Personalised DP with individual sensitivities (Cummings and Durfee 2020, Def 7.1, Props 7.3, 7.5) [R, docs/math.md#personalised-dp].

A mechanism M is (ε_i)-personally DP if ``P[M(D) ∈ A] ≤ e^{ε_i} P[M(D') ∈ A]`` for every individual
i, every pair of i-neighbours D, D' = D ∪ {i} and every event A; this implies (max_i ε_i)-DP.
With a scale ``b = max_i Δ_i/ε_i``:

* **Prop 7.3 (Laplace)**: ``M(D) = f(D) + Lap(b)`` is (Δ_i/b)-PDP when f has individual
  sensitivities Δ_i; Δ_i/b ≤ ε_i by the choice of b.
* **Prop 7.5 (exponential mechanism)**: over a finite output set R, ``P[M(D) = r] ∝ exp(u(D,r)/(2b))``
  is (Δ_i/b)-PDP when ``Δ_i(u) = sup_{D∌i, r} |u(D∪i, r) − u(D, r)|``: the score and the normaliser
  each contribute at most Δ_i/(2b).

Intended use (Cummings and Durfee 2020, §7): run the sensitivity preprocessing with Δ_i ∝ ε_i (for a score, on each
output separately, Remark 3.4 / 7.6) and release through these mechanisms. Individuals are the
population's members, numbered from 0, as in :class:`~.general.GeneralSPF`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpaudit.claims import Neighbours, PureDP, SensitivityBound, check_epsilon
from dpaudit.errors import InvalidArgument
from dpaudit.laws import ContinuousLaw, DiscreteLaw
from dpaudit.rng import check_generator
from dpaudit.spec import MechanismSpec
from ..exponential import em_log_probs
from ..laplace import Laplace

from .general import GeneralSPF, spf_table
from .subsets import population_mask

__all__ = ["PersonalisedLaplace", "PersonalisedExponential", "median_score"]


def _check_pairs(sensitivities: Any, epsilons: Any) -> tuple[tuple[float, ...], tuple[float, ...], float]:
    try:
        ds = tuple(float(v) for v in sensitivities)
        es = tuple(float(v) for v in epsilons)
    except (TypeError, ValueError):
        raise InvalidArgument("sensitivities and epsilons must be sequences of numbers, one per individual") from None
    if len(ds) == 0 or len(ds) != len(es):
        raise InvalidArgument(f"sensitivities and epsilons need one entry per individual and equal "
                              f"lengths, got {len(ds)} and {len(es)}")
    for k, d in enumerate(ds):
        if not math.isfinite(d) or d < 0:
            raise InvalidArgument.bad(f"sensitivities[{k}]", d, "a finite number >= 0")
    for k, e in enumerate(es):
        check_epsilon(e, f"epsilons[{k}]")
    if max(ds) == 0:
        raise InvalidArgument.bad("sensitivities", ds, "not all 0 (nothing would need noise)")
    return ds, es, max(d / e for d, e in zip(ds, es))


@dataclass(frozen=True, slots=True)
class _Personalised:
    """Individual sensitivities Δ_i and budgets ε_i, the scale b = max_i Δ_i/ε_i, and the claims
    they imply: ε_i-PDP toward individual i (``individual_epsilon(i) = Δ_i/b``), (max_i ε_i)-DP."""

    sensitivities: tuple[float, ...]
    epsilons: tuple[float, ...]
    scale: float = field(init=False)
    claim: PureDP = field(init=False, repr=False)
    sensitivity: SensitivityBound = field(init=False, repr=False)
    neighbours: Neighbours = field(init=False, repr=False, default=Neighbours.ADD_REMOVE)

    def __post_init__(self) -> None:
        ds, es, b = _check_pairs(self.sensitivities, self.epsilons)
        object.__setattr__(self, "sensitivities", ds)
        object.__setattr__(self, "epsilons", es)
        object.__setattr__(self, "scale", b)
        object.__setattr__(self, "claim", PureDP(max(es)))
        object.__setattr__(self, "sensitivity", SensitivityBound(max(ds), individual=ds))

    def individual_epsilon(self, i: int) -> float:
        return self.sensitivities[i] / self.scale


def _canonical_population(n: int, population: Any) -> np.ndarray:
    if population is None:
        return np.linspace(0.0, 1.0, n) if n > 1 else np.array([0.5])
    pop = np.asarray(population, dtype=float).reshape(-1)
    if pop.size != n:
        raise InvalidArgument.bad("population", population, f"{n} records, one per individual")
    return pop


@dataclass(frozen=True, slots=True)
class PersonalisedLaplace(_Personalised):
    """Prop 7.3: release ``value + Lap(b)``, ``b = max_i Δ_i/ε_i``; (Δ_i/b)-PDP, so ε_i-PDP.

    ``sensitivities[i]`` = Δ_i (of the released f̂), ``epsilons[i]`` = ε_i (individual i's budget).
    ``individual_epsilon(i) = Δ_i/b`` is the exact loss bound toward i. ``claim`` is the implied
    (max_i ε_i)-DP under add-remove neighbours.
    """

    @property
    def noise(self) -> Laplace:
        """The noise: Laplace of scale b (``mechanisms.laplace.Laplace`` with ε = 1, Δ = b)."""
        return Laplace(1.0, self.scale)

    def log_prob(self, value: float, y: Any) -> np.ndarray:
        """ln p(y | value) = −ln(2b) − |y − value|/b."""
        return self.noise.log_prob(value, y)

    def cdf(self, value: float, y: Any) -> np.ndarray:
        return self.noise.cdf(np.asarray(y, dtype=float) - value)

    def law(self, value: float) -> ContinuousLaw:
        """The exact output law on a database where the released function equals ``value``."""
        return self.noise.law(value)

    def sample(self, value: float, rng: np.random.Generator, size: Any = None) -> Any:
        return self.noise.sample(value, rng, size)

    def spec(self, *, population: Any = None, centre: float = 0.5) -> MechanismSpec:
        """Black-box form on the canonical query: the preprocessed mean over a population.

        Individual i holds ``population[i]`` (default: n evenly spaced records in [0, 1]) and has
        Δ_i = ``sensitivities[i]``; the query is f̂ of the mean with centre ``centre``
        (:class:`~.general.GeneralSPF`), released with Laplace(b). A dataset lists the records of
        the individuals present; records outside the population are rejected. ``f(data, rng, size)``.
        """
        pop = _canonical_population(len(self.sensitivities), population)
        query = GeneralSPF(_mean_or_nan, self.sensitivities, centre=centre, population=pop)
        mech = self

        def personalised_laplace(data, rng, size=None):
            return mech.sample(query(data), rng, size)

        return MechanismSpec.from_function(
            personalised_laplace, name="personalised-laplace(spf-mean)", epsilon=self.claim.epsilon,
            neighbours="add-remove", domain=(float(pop.min()), float(max(pop.max(), pop.min() + 1e-9))),
            size=pop.size, distribution=lambda data: mech.law(query(data)))


def _mean_or_nan(records: np.ndarray) -> float:
    return float(np.mean(records)) if records.size else math.nan


def median_score(records: np.ndarray, outputs: np.ndarray) -> np.ndarray:
    """``u(D, r) = −|C<(D, r) − C>(D, r)|`` for each output r: a median score, sensitivity 1 each."""
    x = np.asarray(records, dtype=float).reshape(-1, 1)
    r = np.asarray(outputs, dtype=float).reshape(1, -1)
    return -np.abs((x < r).sum(axis=0) - (x > r).sum(axis=0)).astype(float)


@dataclass(frozen=True, slots=True)
class PersonalisedExponential(_Personalised):
    """Prop 7.5: over ``outputs``, ``P[r] ∝ exp(u(D, r)/(2b))`` with ``b = max_i Δ_i/ε_i``; ε_i-PDP.

    ``sensitivities[i]`` = Δ_i of the score u (sup over outputs), ``epsilons[i]`` = ε_i. The laws and
    the sampler take the score vector ``u(D, ·)`` (one entry per output).
    """

    outputs: tuple

    def __post_init__(self) -> None:
        _Personalised.__post_init__(self)
        outs = tuple(self.outputs)
        if len(outs) == 0 or len(set(outs)) != len(outs):
            raise InvalidArgument.bad("outputs", self.outputs, "a non-empty sequence of distinct outputs")
        object.__setattr__(self, "outputs", outs)

    def _scores(self, scores: Any) -> np.ndarray:
        u = np.asarray(scores, dtype=float).reshape(-1)
        if u.size != len(self.outputs) or not np.all(np.isfinite(u)):
            raise InvalidArgument.bad("scores", scores, f"{len(self.outputs)} finite numbers, one per output")
        return u

    def pmf(self, scores: Any) -> np.ndarray:
        """P[r] for every output r, in the order of ``outputs``."""
        return np.exp(self.law(scores).log_pmf)

    def law(self, scores: Any) -> DiscreteLaw:
        """ln P[r] = u(D, r)/(2b) − LSE_r'(u(D, r')/(2b))."""
        return DiscreteLaw(self.outputs, em_log_probs(self._scores(scores), 1.0 / (2.0 * self.scale)))

    def log_prob(self, scores: Any, y: Any) -> np.ndarray:
        """ln P[y] (−inf for a value that is not an output)."""
        return self.law(scores).log_prob(y)

    def sample(self, scores: Any, rng: np.random.Generator, size: Any = None) -> Any:
        k = check_generator(rng).choice(len(self.outputs), size=size, p=self.pmf(scores))
        if size is None:
            return self.outputs[int(k)]
        arr = np.asarray(self.outputs)
        return (arr if arr.dtype != object and arr.ndim == 1 else np.asarray(self.outputs, dtype=object))[k]

    def spec(self, *, population: Any = None) -> MechanismSpec:
        """Black-box form on the canonical score: the preprocessed median score (:func:`median_score`).

        Individual i holds ``population[i]`` (default: n evenly spaced records in [0, 1]); the score
        of every output is preprocessed on its own to the Δ_i (Remark 3.4 / 7.6), then released by
        this mechanism. ``outputs`` must be numbers for this canonical score.
        """
        pop = _canonical_population(len(self.sensitivities), population)
        outs = np.asarray(self.outputs, dtype=float)
        table = spf_table(lambda rec: median_score(rec, outs), pop, self.sensitivities)
        mech = self

        def scores(data):
            return table.values[population_mask(pop, data)]

        def personalised_exponential(data, rng, size=None):
            return mech.sample(scores(data), rng, size)

        return MechanismSpec.from_function(
            personalised_exponential, name="personalised-exponential(spf-median-score)",
            epsilon=self.claim.epsilon, neighbours="add-remove",
            domain=(float(pop.min()), float(max(pop.max(), pop.min() + 1e-9))), size=pop.size,
            distribution=lambda data: mech.law(scores(data)))
