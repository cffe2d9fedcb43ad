"""Built-in canaries and their scores.

* White-box gradient canaries (:class:`DiracCanary`): a record whose per-example gradient is
  −G·e_j whatever the parameters, on a coordinate j no real record touches, one coordinate per
  canary: the Dirac canary of Nasr, Hayes, Steinke, Balle, Tramèr, Jagielski, Carlini & Terzis
  (USENIX Security 2023, Section 4), inserted into one run as Steinke, Nasr & Jagielski (2023,
  Section 6) do. A trainer supports them by giving such a record that gradient (the linear loss
  −G·⟨θ, e_j⟩ does it in any autodiff framework). G defaults far above any clip norm, so every
  path that skips per-example clipping shows. Scores read the trained model: :func:`dirac_sum`
  (how far θ_j moved, the final model), :func:`dirac_spread` (the range of θ_j's per-step
  updates: the model's recorded ``updates``, the white-box trajectory).
* Black-box input canaries (:class:`InputCanary`): an input with a random label; the score is
  minus the model's loss on it (:func:`loss_score`).

A model read by these scores has ``params`` (the final parameter vector), and for the others
``updates`` (steps × parameters: what each step added) or ``loss(x, y)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np

__all__ = ["DiracCanary", "InputCanary", "dirac_canaries", "input_canaries", "dirac_sum", "dirac_spread",
           "loss_score", "WHITE_BOX_SCORES", "BLACK_BOX_SCORES", "DIRAC_MAGNITUDE"]

#: the gradient norm of a Dirac canary: far above any clip norm in use
DIRAC_MAGNITUDE = 1.0e4


@dataclass(frozen=True, slots=True)
class DiracCanary:
    """Canary ``index``: per-example gradient −``magnitude``·e_``coordinate`` (module docstring)."""

    index: int
    coordinate: int
    magnitude: float = DIRAC_MAGNITUDE


@dataclass(frozen=True, slots=True)
class InputCanary:
    """Canary ``index``: the input ``x`` with the label ``y``."""

    index: int
    x: tuple
    y: float


def dirac_canaries(m: int, first_coordinate: int, magnitude: float = DIRAC_MAGNITUDE) -> list[DiracCanary]:
    """``m`` Dirac canaries on coordinates ``first_coordinate`` … ``first_coordinate + m − 1``."""
    return [DiracCanary(i, first_coordinate + i, float(magnitude)) for i in range(int(m))]


def input_canaries(m: int, dim: int, rng: np.random.Generator, scale: float = 1.0) -> list[InputCanary]:
    """``m`` inputs uniform on the sphere of radius ``scale`` in ``dim`` dimensions, each with a
    label drawn uniformly from {0, 1} (nothing in the data predicts it)."""
    x = rng.standard_normal((int(m), int(dim)))
    x *= scale / np.linalg.norm(x, axis=1, keepdims=True)
    y = rng.integers(0, 2, size=int(m))
    return [InputCanary(i, tuple(map(float, x[i])), float(y[i])) for i in range(int(m))]


def dirac_sum(model: Any, canary: DiracCanary) -> float:
    """θ_j of the trained model (j the canary's coordinate, which started at 0): the sum of every
    step's update along e_j. An included canary's gradient −G·e_j pushes θ_j up."""
    return float(np.asarray(model.params)[canary.coordinate])


def dirac_spread(model: Any, canary: DiracCanary) -> float:
    """max − min over steps of the update along e_j (``model.updates[:, j]``): 0 for a coordinate
    whose updates never change, the clipped gradient's size when the canary was sampled in some
    steps and not in others."""
    u = np.asarray(model.updates)[:, canary.coordinate]
    return float(u.max() - u.min()) if u.size else 0.0


def loss_score(model: Any, canary: InputCanary) -> float:
    """Minus the model's loss on the canary (a member is expected to have a lower loss)."""
    return -float(model.loss(np.asarray(canary.x, dtype=float), canary.y))


#: the white-box scores of Dirac canaries, by name
WHITE_BOX_SCORES: Mapping[str, Callable[[Any, Any], float]] = {"sum": dirac_sum, "spread": dirac_spread}
#: the black-box score of input canaries
BLACK_BOX_SCORES: Mapping[str, Callable[[Any, Any], float]] = {"loss": loss_score}
