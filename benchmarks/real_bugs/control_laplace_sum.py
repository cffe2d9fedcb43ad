"""Control: a clamped sum with Laplace noise of scale U/ε (ε-DP under add/remove; Dwork, McSherry,
Nissim and Smith 2006). The replay must report no violation and no finding."""

import numpy as np

import dpaudit

EPSILON, U = 1.0, 1.0
EXPECTED = None
SOURCE = "control"


@dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0.0, 1.0), size=10)
def mechanism(data, rng):
    return float(np.clip(data, 0.0, U).sum() + rng.laplace(scale=U / EPSILON))
