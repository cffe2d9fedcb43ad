"""Small pieces shared by the reference mechanisms' classes (mixins for frozen, slotted dataclasses).

* :class:`PureAddRemove`: the claim pure ε-DP under add/remove neighbours (``epsilon`` field).
* :class:`AddRemoveNoise`: the same plus ρ = e^{−ε}, Chen, Pal and Golubchik (2016)'s α (docs/math.md#conventions), for the
  oblivious noise mechanisms (Laplace, geometric, staircase, pre-rounding).
* :class:`PiecewiseLawMethods`: ``log_prob``, ``cdf`` and ``sample`` read off ``law(data)``, a
  :class:`~dpaudit.laws.PiecewiseConstantLaw` (the quantile exponential mechanism and Duff).
"""

from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

from dpaudit.claims import Neighbours, PureDP

__all__ = ["PureAddRemove", "AddRemoveNoise", "PiecewiseLawMethods"]


class PureAddRemove:
    """Claim: ε-DP (δ = 0) for datasets one record apart (docs/math.md#neighbour-relations)."""

    __slots__ = ()

    @property
    def claim(self) -> PureDP:
        return PureDP(self.epsilon)

    @property
    def neighbours(self) -> Neighbours:
        return Neighbours.ADD_REMOVE


class AddRemoveNoise(PureAddRemove):
    """:class:`PureAddRemove` and ρ = e^{−ε} (Chen, Pal and Golubchik (2016)'s α, docs/math.md#oblivious-noise)."""

    __slots__ = ()

    @property
    def rho(self) -> float:
        """ρ = e^{−ε} (Chen, Pal and Golubchik (2016)'s α)."""
        return math.exp(-self.epsilon)


class PiecewiseLawMethods:
    """Density, cdf and exact sampler of a mechanism whose ``law(data)`` is piecewise constant
    (docs/math.md#quantile-sampler, #duff-sampler): a cell by its mass, then uniform within the cell."""

    __slots__ = ()

    def log_prob(self, data: Any, y: Any) -> np.ndarray:
        """ln p(y | data): the log-density of the cell of ``law(data)`` that holds ``y``."""
        return self.law(data).log_prob(y)

    def cdf(self, data: Any, y: Any) -> np.ndarray:
        from .exponential import piecewise_cdf

        return piecewise_cdf(self.law(data), y)

    def sample(self, data: Any, rng: np.random.Generator, size: Optional[int] = None):
        """Exact draws: a cell by its mass, then uniform in the cell; ``size=None`` gives one float."""
        from .exponential import sample_piecewise

        return sample_piecewise(self.law(data), rng, size)
