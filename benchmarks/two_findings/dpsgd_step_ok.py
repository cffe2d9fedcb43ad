"""One DP-SGD step of a tiny logistic regression: CORRECT logic, porous on doubles.

Claim: ε = 1, δ = 1e-5, add-remove neighbours, records (features) x in [−3, 3], 8 records.
Model p(y = 1 | x) = sigmoid(w·(x, 1)) with w₀ = (0.1, −0.2), label y = 1[x > 0]. Per-example
gradients (p − y)·(x, 1) are clipped to L2 norm C = 1, summed, and N(0, σ²C²I) is added with
σ = √(2 ln(1.25/δ))/ε = 4.845 (Abadi et al. 2016, CCS, Alg. 1; the Gaussian mechanism of Dwork and
Roth 2014, Thm A.1, for L2 sensitivity C under add-remove); the release is w₁ = w₀ − η·noisy/B.
Sensitivity C is reached (x = 3: ‖g‖ = 0.475·√10 = 1.50 > C). True ε at δ = 1e-5 from the exact
Gaussian trade-off (Balle and Wang 2018, Thm 8, Δ/σ = 1/4.845): 0.751.
"""
import math

import numpy as np

import dpaudit

EPSILON = 1.0
DELTA = 1e-5
CLIP = 1.0
BATCH = 8            # expected batch size, public
LR = 0.5
W0 = np.array([0.1, -0.2])
NOISE_MULTIPLIER = math.sqrt(2.0 * math.log(1.25 / DELTA)) / EPSILON
TRUE_EPSILON = 0.751
CORRECT = True
NOISE = "continuous"
OUTPUT = "float"


def per_example_grads(x):
    feats = np.stack([x, np.ones_like(x)], axis=1)
    y = (x > 0).astype(float)
    p = 1.0 / (1.0 + np.exp(-(feats @ W0)))
    return (p - y)[:, None] * feats


@dpaudit.mechanism(epsilon=EPSILON, delta=DELTA, neighbours="add-remove", domain=(-3.0, 3.0), size=8)
def dpsgd_step(data, rng, size=None):
    grads = per_example_grads(data)
    norms = np.linalg.norm(grads, axis=1, keepdims=True)
    clipped = grads / np.maximum(1.0, norms / CLIP)
    total = clipped.sum(axis=0)
    shape = 2 if size is None else (size, 2)
    noisy = total + rng.normal(scale=NOISE_MULTIPLIER * CLIP, size=shape)
    return W0 - LR * noisy / BATCH
