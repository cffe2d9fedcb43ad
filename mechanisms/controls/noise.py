"""Broken variants of the oblivious noise mechanisms of Chen, Pal and Golubchik (2016) (docs/math.md#oblivious-noise): negative controls.

Each is the seed's own misprint made executable, or one classic implementation slip, with the
claim it makes; an audit of each is expected to REFUTE it (``audits/noise.py``):

* :func:`laplace_eq6_spec`: Laplace noise read off Chen, Pal and Golubchik (2016) eq (6) as printed, whose exponent lacks ε:
  the scale is Δ whatever ε is, so a claim of ε = 0.5 is really ε = 1 (docs/math.md#e8).
* :func:`geometric_eq10_spec`: the quantised geometric with ratio ρ per step d instead of
  ρ^{d/Δ} (Chen, Pal and Golubchik (2016) eq (10), docs/math.md#e10): with d = Δ/4 the true ε is 4ε.
* :func:`prerounding_fine_spec`: pre-rounding onto a grid finer than the noise step (Δ/2 instead
  of Δ): neighbours land on disjoint lattices, an infinite privacy loss (docs/math.md#pre-rounding needs rounding
  cells of width Δ).
* :func:`collusion_spec`: the colluders' median of k = 5 releases presented as one ε-DP release;
  composition makes it up to 5ε-DP (Chen, Pal and Golubchik (2016) §5.3, docs/math.md#e16).
"""

from __future__ import annotations

import numpy as np

from dpaudit.spec import MechanismSpec
from ..collusion import collusion_median
from ..geometric import Geometric
from ..laplace import SNAP_BITS, Laplace, snapped_sum_units
from ..prerounding import PreRounding

__all__ = ["canonical_sum", "laplace_eq6_spec", "geometric_eq10_spec", "prerounding_fine_spec", "collusion_spec"]


def canonical_sum(data) -> float:
    """The canonical sum query of the reference mechanisms (records clamped to [0, 1])."""
    return snapped_sum_units(data, 1.0) * 2.0 ** -SNAP_BITS


def laplace_eq6_as_printed(data, rng, size=None):
    """Chen, Pal and Golubchik (2016) eq (6) as printed: density (ε/2Δ)·exp(−|z|/Δ), i.e. noise of scale Δ for every ε."""
    return canonical_sum(data) + rng.laplace(scale=1.0, size=size)


def laplace_eq6_spec() -> MechanismSpec:
    return MechanismSpec.from_function(
        laplace_eq6_as_printed, name="Laplace per Chen, Pal and Golubchik (2016) eq (6) as printed (claims ε=0.5)",
        epsilon=0.5, neighbours="add-remove", domain=(0.0, 1.0), size=10,
        distribution=lambda data: Laplace(1.0).law(canonical_sum(data)))


_EQ10 = Geometric(4.0, sensitivity=1.0, step=0.25)   # ratio ρ per step of Δ/4: ε_true = 4ε


def _quarter_sum(data) -> float:
    x = np.clip(np.asarray(data, dtype=float), 0.0, 1.0)
    return float(np.rint(x / 0.25).sum() * 0.25)


def geometric_eq10_as_printed(data, rng, size=None):
    """Chen, Pal and Golubchik (2016) eq (10) as printed: step d = Δ/4 with ratio ρ = e^{-ε} per step (should be ρ^{d/Δ})."""
    return _EQ10.sample(_quarter_sum(data), rng, size)


def geometric_eq10_spec() -> MechanismSpec:
    return MechanismSpec.from_function(
        geometric_eq10_as_printed, name="quantised Geometric per Chen, Pal and Golubchik (2016) eq (10) (claims ε=1)",
        epsilon=1.0, neighbours="add-remove", domain=(0.0, 1.0), size=10,
        distribution=lambda data: _EQ10.law(_quarter_sum(data), 1e-200))


_PRE = PreRounding(1.0)


def prerounding_fine_grid(data, rng, size=None):
    """Pre-rounding onto the grid Δ/2 = 5 (cells too fine), then Δ·K noise with K geometric."""
    q = min(max(canonical_sum(data) * 10.0, -10.0), 10.0)   # the query on [−10, 10], sensitivity Δ = 10
    m = np.floor(q / 5.0 + 0.5) * 5.0
    return m + 10.0 * _PRE.noise.noise_steps(rng, size)


def prerounding_fine_spec() -> MechanismSpec:
    return MechanismSpec.from_function(
        prerounding_fine_grid, name="pre-rounding onto a grid finer than the noise step (claims ε=1)",
        epsilon=1.0, neighbours="add-remove", domain=(0.0, 1.0), size=6)


_LAP = Laplace(1.0)


def collusion_median_of_five(data, rng, size=None):
    """Five colluders each receive an ε-DP Laplace release; their median is released as if ε-DP."""
    n = 1 if size is None else size
    out = collusion_median(_LAP.sample(canonical_sum(data), rng, (n, 5)), axis=1)
    return float(out[0]) if size is None else out


def collusion_spec() -> MechanismSpec:
    return MechanismSpec.from_function(
        collusion_median_of_five, name="median of 5 colluders' Laplace releases (claims ε=1)",
        epsilon=1.0, neighbours="add-remove", domain=(0.0, 1.0), size=10)
