"""Control: one DP-SGD step on a fixed batch of B = 10 examples (one replaced): per-example
gradients (x, x²) clipped to norm C, summed, Gaussian noise of σ = zC added, then divided by the
public B (Abadi et al. 2016). The sum moves by at most 2C, so the step is μ = 2/z GDP; z = 2 gives
μ = 1, which is (4.38, 1e-5)-DP: claimed (4.5, 1e-5)."""

import numpy as np

import dpaudit

EPSILON, DELTA, B, C, Z = 4.5, 1e-5, 10, 1.0, 2.0
EXPECTED = None
SOURCE = "control"


@dpaudit.mechanism(epsilon=4.5, delta=1e-05, neighbours="replace", domain=(-1.0, 1.0), size=10)
def mechanism(data, rng):
    x = np.asarray(data, dtype=float)
    per_example = np.stack([x, x * x], axis=1)
    norms = np.linalg.norm(per_example, axis=1, keepdims=True)
    clipped = per_example / np.maximum(norms / C, 1.0)
    return (clipped.sum(axis=0) + rng.normal(scale=Z * C, size=2)) / B
