"""One DP-SGD step that adds the noise of the mean (σC/B) to the clipped sum: LOGIC BUG.

Claim: ε = 1, δ = 1e-5, add-remove neighbours, records x in [−3, 3], B = 8 records.
The model, clipping and release are those of dpsgd_step_ok.py (per-example clip to C = 1, sum,
w₁ = w₀ − η·noisy/B, σ = √(2 ln(1.25/δ))/ε = 4.845), but the noise has standard deviation σC/B
(the mean's) while it is added to the sum: Δ/σ_used = B/σ = 8/4.845 = 1.651 (Abadi et al. 2016,
Alg. 1 adds N(0, σ²C²) to the sum). The exact Gaussian trade-off (Balle and Wang 2018, Thm 8,
μ = 1.651) gives the true ε = 7.914 at δ = 1e-5.
"""
import math

import numpy as np

import dpaudit

EPSILON = 1.0
DELTA = 1e-5
CLIP = 1.0
BATCH = 8
LR = 0.5
W0 = np.array([0.1, -0.2])
NOISE_MULTIPLIER = math.sqrt(2.0 * math.log(1.25 / DELTA)) / EPSILON
TRUE_EPSILON = 7.914
CORRECT = False
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
    noise_std = NOISE_MULTIPLIER * CLIP / BATCH
    shape = 2 if size is None else (size, 2)
    noisy = clipped.sum(axis=0) + rng.normal(scale=noise_std, size=shape)
    return W0 - LR * noisy / BATCH
