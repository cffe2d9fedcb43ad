"""A JAX DP-SGD loop (jax_privacy's per-example clipping) audited in one run (docs/training.md).

    pip install 'dpaudit[jax]'
    dpaudit train-audit examples/training/jax_dpsgd.py

Logistic regression on the reference data (``dpaudit.reference.dpsgd.make_data``), Poisson
sampling at q, per-example clipping to C with ``jax_privacy.clipping.clipped_grad``, Gaussian
noise σC on the sum, T steps; its claim is the accountant's at (σ, q, T, δ). The canaries are
white-box Dirac canaries: a canary record's loss is the linear −G·⟨θ, e_j⟩, so its gradient is
−G·e_j on a coordinate of its own, clipped like any other example's. Batches are padded to a fixed
size (padding has weight 0) so the step compiles once. ``BUG = "mean-noise"`` adds the noise of
the mean (σC/(qN)) to the sum instead, and the same audit refutes it.
"""

from __future__ import annotations

import numpy as np

from dpaudit.onerun import DiracCanary, OneRunSpec, dirac_canaries, dirac_sum, dpsgd_epsilon
from dpaudit.onerun.accountant import accountant_name
from dpaudit.reference.dpsgd import DELTA, FEATURES, make_data

SIGMA, CLIP, RATE, STEPS, LR, CANARIES = 3.0, 1.0, 0.1, 400, 0.5, 1000
BUG = None


class Model:
    def __init__(self, params: np.ndarray) -> None:
        self.params = params


def train(dataset, rng: np.random.Generator, bug=BUG) -> Model:
    import jax
    import jax.numpy as jnp
    from jax_privacy.clipping import clipped_grad

    d = FEATURES + CANARIES
    n = len(dataset)
    X = np.zeros((n, d))
    y = np.zeros(n)
    canary = np.zeros(n)
    for i, r in enumerate(dataset):
        if isinstance(r, DiracCanary):
            X[i, r.coordinate] = r.magnitude
            canary[i] = 1.0
        else:
            X[i, :FEATURES] = r[0]
            y[i] = r[1]
    batch = RATE * n
    cap = int(batch + 8 * np.sqrt(batch) + 8)

    def loss(w, x, t, c, keep):
        z = jnp.dot(w, x)
        logistic = jnp.logaddexp(0.0, z) - t * z
        return keep * jnp.where(c > 0, -z, logistic)  # a canary: −G⟨θ, e_j⟩ (x = G e_j)

    grad_sum = clipped_grad(loss, l2_clip_norm=CLIP, batch_argnums=(1, 2, 3, 4), keep_batch_dim=False)

    @jax.jit
    def step(w, xb, tb, cb, kb, noise):
        g = grad_sum(w, xb, tb, cb, kb)
        return w - LR * (g + noise) / batch

    w = jnp.zeros(d)
    for _ in range(STEPS):
        idx = np.flatnonzero(rng.random(n) < RATE)[:cap]
        pad = cap - idx.size
        take = np.r_[idx, np.zeros(pad, dtype=int)]
        keep = np.r_[np.ones(idx.size), np.zeros(pad)]
        scale = SIGMA * CLIP / batch if bug == "mean-noise" else SIGMA * CLIP
        noise = rng.normal(0.0, scale, size=d)
        w = step(w, X[take], y[take], canary[take], keep, noise)
    return Model(np.asarray(w))


def one_run_spec(bug=BUG) -> OneRunSpec:
    eps = dpsgd_epsilon(SIGMA, RATE, STEPS, DELTA)
    return OneRunSpec(train=lambda ds, rng: train(ds, rng, bug), data=make_data(),
                      canaries=dirac_canaries(CANARIES, FEATURES), score={"sum": dirac_sum},
                      epsilon=eps, delta=DELTA, name=f"jax-dpsgd[{bug or 'correct'}]",
                      source=f"{accountant_name()}: σ = {SIGMA:g}, q = {RATE:g}, T = {STEPS}, δ = {DELTA:g}",
                      describe={"trainer": "JAX DP-SGD (jax_privacy.clipping.clipped_grad)", "bug": bug,
                                "noise_multiplier": SIGMA, "sample_rate": RATE, "steps": STEPS})
