"""A sum whose noise primitive declares sensitivity 1 and receives 1.005: a violation only the
replay stage sees.

``laplace`` is a user's own noise primitive, declared with ``@dpaudit.primitive(sensitivity=1,
epsilon=1)``: it promises ε = 1 for inputs that one record moves by at most 1. ``total`` scales
the clipped sum by 1.005 before adding the noise (a unit conversion gone wrong), so one record
moves the primitive's input by 1.005: its true ε is 1.005, not 1 (Laplace with scale b hides a
change Δ at ε = Δ/b; Dwork, McSherry, Nissim and Smith 2006). Sampling cannot resolve ε = 1.005
from ε = 1 in any budget you would spend; the replay stage of ``dpaudit check`` reads the
primitive's input on D and D′ with its noise frozen and names the line
(``dpaudit check examples/primitive_overshoot.py``; docs/replay.md).
"""

import numpy as np

import dpaudit


@dpaudit.primitive(sensitivity=1.0, epsilon=1.0)
def laplace(value, rng):
    """Laplace noise of scale sensitivity/ε = 1 added to ``value``."""
    return value + rng.laplace(scale=1.0)


@dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0.0, 1.0), size=5, float="off")
def total(data, rng):
    """The clipped sum, scaled by 1.005 (the bug), through the primitive."""
    s = 1.005 * float(np.clip(data, 0.0, 1.0).sum())
    return laplace(s, rng)
