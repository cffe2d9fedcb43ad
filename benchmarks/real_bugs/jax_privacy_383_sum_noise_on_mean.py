"""google-deepmind/jax_privacy#383: Gaussian noise calibrated to a clipped *sum* added to the *mean*.

Source: https://github.com/google-deepmind/jax_privacy/issues/383. ``examples/jax_api_example.py``
sets ``stddev = noise_multiplier * clipped_grad.sensitivity(REPLACE_ONE)``, the sensitivity of the
sum of clipped per-example gradients, then privatises ``mean_grads = grads / batch_size``: the
noise is ``batch_size`` times larger than the mean needs. The issue says so itself: the example
over-noises; it is a correctness (utility) bug in the DP path, not a privacy violation.

Re-creation: a fixed batch of B = 10 examples (REPLACE_ONE: one example replaced), each a record
x in [−1, 1] with the per-example gradient (x, x²) clipped to norm C = 1; the sum's sensitivity
under replace-one is 2C; σ = z · 2C with z = √(2 ln(1.25/δ))/ε (the classical calibration for
(ε, δ)); the noise is added to the mean. The replay observes the input of the Gaussian call (the
mean, moving by at most 2C/B) and reports, as a note, that on every pair tried the noise supports
about a tenth of the claimed ε: calibrated to a larger quantity than the one it is added to. It is
not, and is not reported as, a privacy violation.
"""

import math

import numpy as np

import dpaudit

EPSILON, DELTA = 1.0, 1e-5
B, C = 10, 1.0
Z = math.sqrt(2 * math.log(1.25 / DELTA)) / EPSILON
EXPECTED = "calibration_slack"
SOURCE = "google-deepmind/jax_privacy#383"


def clip_by_norm(g, c):
    norm = np.linalg.norm(g, axis=1, keepdims=True)
    return g / np.maximum(norm / c, 1.0)


@dpaudit.mechanism(epsilon=1.0, delta=1e-05, neighbours="replace", domain=(-1.0, 1.0), size=10)
def mechanism(data, rng):
    x = np.asarray(data, dtype=float)
    per_example = clip_by_norm(np.stack([x, x * x], axis=1), C)
    grads = per_example.sum(axis=0)                  # clipped_grad: a sum
    stddev = Z * 2.0 * C                             # noise_multiplier * sensitivity(REPLACE_ONE)
    mean_grads = grads / B                           # the example divides first ...
    return mean_grads + rng.normal(scale=stddev, size=2)  # replay: expected site
