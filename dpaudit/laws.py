"""Exact output laws of mechanisms, for white-box (exact) audits, and the reference-mechanism protocol.

A reference mechanism's ``law(x)`` (a spec's ``distribution(data)``) returns one of:

* :class:`DiscreteLaw`: finitely many atoms with their log-probabilities (an infinite support,
  e.g. the two-sided geometric on ℤ, is truncated where the tail is negligible and the neglected
  mass is recorded in ``tail_mass``);
* :class:`PiecewiseConstantLaw`: a density that is constant on the cells of ``edges`` and zero
  outside (the quantile exponential mechanism, Duff, the staircase);
* :class:`ContinuousLaw`: a frozen ``scipy.stats`` continuous distribution with the points where
  its log-density is not smooth (``breakpoints``), e.g. the Laplace centre;
* or a frozen ``scipy.stats`` distribution directly (continuous or discrete); :func:`as_law`
  converts it.

Every law answers ``log_prob(y)``: the log-probability of the output ``y`` (log-pmf of an atom, or
log-density of a point), −inf off the support.

:class:`ReferenceMechanism` is what a reference mechanism (``dpaudit.reference``) offers an exact
audit: one name and one argument order for the output law, the input ``x`` first (a dataset, or
the query value for an oblivious noise mechanism) and the output ``y`` second:
``log_prob(x, y) = law(x).log_prob(y)``.

:mod:`dpaudit.estimators.exact` computes the exact privacy loss and hockey-stick divergence
between two such laws.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Hashable, Optional, Protocol, Union, runtime_checkable

import numpy as np

from dpaudit.errors import InvalidArgument

__all__ = ["DiscreteLaw", "PiecewiseConstantLaw", "ContinuousLaw", "Law", "as_law", "ReferenceMechanism"]


@dataclass(frozen=True, slots=True, eq=False)
class DiscreteLaw:
    """P[Y = atoms[k]] = exp(log_pmf[k]); ``tail_mass`` bounds the mass on atoms not listed."""

    atoms: tuple
    log_pmf: np.ndarray
    tail_mass: float = 0.0

    def __post_init__(self) -> None:
        lp = np.asarray(self.log_pmf, dtype=float).reshape(-1)
        atoms = tuple(self.atoms)
        if len(atoms) != lp.size:
            raise InvalidArgument(f"DiscreteLaw needs one log_pmf per atom, got {len(atoms)} atoms "
                                  f"and {lp.size} log-probabilities")
        if len(set(atoms)) != len(atoms):
            raise InvalidArgument("DiscreteLaw atoms must be distinct")
        object.__setattr__(self, "atoms", atoms)
        object.__setattr__(self, "log_pmf", lp)

    @classmethod
    def from_pmf(cls, atoms: Any, pmf: Any, tail_mass: float = 0.0) -> "DiscreteLaw":
        with np.errstate(divide="ignore"):
            return cls(tuple(_hashable(a) for a in atoms), np.log(np.asarray(pmf, dtype=float)), tail_mass)

    def as_dict(self) -> dict[Hashable, float]:
        return dict(zip(self.atoms, self.log_pmf.tolist()))

    def log_prob(self, y: Any) -> np.ndarray:
        """ln P[Y = y] for one output (an atom) or a sequence of outputs (−inf for a non-atom)."""
        table = self.as_dict()
        try:
            hit = table.get(_hashable(y))
        except TypeError:                       # an unhashable sequence of outputs
            hit = None
        if hit is not None or not isinstance(y, (list, tuple, np.ndarray)):
            return np.asarray(-np.inf if hit is None else hit, dtype=float)
        return np.array([table.get(_hashable(v), -np.inf) for v in y], dtype=float)


@dataclass(frozen=True, slots=True, eq=False)
class PiecewiseConstantLaw:
    """Density exp(log_density[k]) on [edges[k], edges[k+1]); zero outside [edges[0], edges[-1]].

    ``tail_mass`` bounds the probability outside the listed cells (for a truncated infinite support).
    """

    edges: np.ndarray
    log_density: np.ndarray
    tail_mass: float = 0.0

    def __post_init__(self) -> None:
        e = np.asarray(self.edges, dtype=float).reshape(-1)
        ld = np.asarray(self.log_density, dtype=float).reshape(-1)
        if e.size != ld.size + 1:
            raise InvalidArgument(f"PiecewiseConstantLaw needs len(edges) == len(log_density) + 1, "
                                  f"got {e.size} and {ld.size}")
        if not np.all(np.isfinite(e)) or np.any(np.diff(e) < 0):
            raise InvalidArgument("PiecewiseConstantLaw edges must be finite and non-decreasing")
        object.__setattr__(self, "edges", e)
        object.__setattr__(self, "log_density", ld)

    def log_prob(self, y: Any) -> np.ndarray:
        """ln f(y): the log-density of the cell that holds ``y`` (−inf outside the listed cells)."""
        y = np.asarray(y, dtype=float)
        k = np.searchsorted(self.edges, y, side="right") - 1
        inside = (k >= 0) & (k < self.log_density.size)
        out = np.full(y.shape, -np.inf)
        out[inside] = self.log_density[k[inside]]
        return out

    def total_mass(self) -> float:
        return float(np.sum(np.diff(self.edges) * np.exp(self.log_density)))


@dataclass(frozen=True, slots=True, eq=False)
class ContinuousLaw:
    """A frozen ``scipy.stats`` continuous distribution and the non-smooth points of its log-density."""

    dist: Any
    breakpoints: tuple = field(default=())

    def log_prob(self, y: Any) -> np.ndarray:
        """ln f(y), the frozen distribution's ``logpdf``."""
        return np.asarray(self.dist.logpdf(np.asarray(y, dtype=float)), dtype=float)


Law = Union[DiscreteLaw, PiecewiseConstantLaw, ContinuousLaw]


def _hashable(a: Any) -> Hashable:
    if isinstance(a, np.generic):
        return a.item()
    if isinstance(a, np.ndarray):
        return tuple(a.tolist())
    return a


def as_law(obj: Any, tail: float = 1e-15) -> Law:
    """Convert a frozen scipy distribution to a :data:`Law` (laws pass through unchanged).

    A discrete scipy distribution is listed on its integer support between its ``tail`` quantiles
    (the neglected mass, at most 2·tail, goes to ``tail_mass``).
    """
    if isinstance(obj, (DiscreteLaw, PiecewiseConstantLaw, ContinuousLaw)):
        return obj
    dist = getattr(obj, "dist", None)
    if dist is None:
        raise InvalidArgument.bad("distribution", obj, "a dpaudit law or a frozen scipy.stats distribution")
    from scipy import stats

    if isinstance(dist, stats.rv_discrete):
        lo, hi = obj.ppf(tail), obj.isf(tail)
        lo = obj.support()[0] if not np.isfinite(lo) else lo
        hi = obj.support()[1] if not np.isfinite(hi) else hi
        if not (np.isfinite(lo) and np.isfinite(hi)):
            raise InvalidArgument("cannot list the support of a discrete distribution with infinite quantiles")
        ks = np.arange(int(lo), int(hi) + 1)
        lp = obj.logpmf(ks)
        tail_mass = float(max(0.0, 1.0 - np.exp(lp).sum()))
        return DiscreteLaw(tuple(int(k) for k in ks), lp, tail_mass)
    return ContinuousLaw(obj, ())


@runtime_checkable
class ReferenceMechanism(Protocol):
    """A mechanism with its claim, an exact sampler and its exact output law.

    ``x`` is the mechanism's input: a dataset, or for an oblivious noise mechanism the value of the
    query it perturbs; ``y`` is an output (a scalar or an array of outputs). Implementations:
    every mechanism in ``dpaudit.reference`` (Laplace, geometric, staircase, pre-rounding, the
    exponential mechanisms, Duff, the smooth-sensitivity medians, the personalised mechanisms).
    """

    @property
    def claim(self) -> Any:
        """The privacy claim (:class:`~dpaudit.claims.PureDP` or :class:`~dpaudit.claims.ApproxDP`)."""

    def law(self, x: Any) -> Law:
        """The exact output law given ``x``."""

    def log_prob(self, x: Any, y: Any) -> np.ndarray:
        """ln P[M(x) = y] (a pmf) or ln p_{M(x)}(y) (a density), elementwise in ``y``."""

    def sample(self, x: Any, rng: np.random.Generator, size: Optional[int] = None) -> Any:
        """Exact draws of M(x) from ``rng``: one output when ``size`` is None, else ``size`` of them."""
