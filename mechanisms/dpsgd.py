"""Reference DP-SGD trainers for the one-run audit (docs/training.md): numpy logistic regression,
correct and with four bugs modelled on real ones.

The correct trainer (Abadi et al. 2016, Algorithm 1, with Poisson sampling): at each of T steps
every record is in the batch independently with probability q; each example's gradient g_i is
clipped to norm C (g_i · min(1, C/‖g_i‖)); Gaussian noise N(0, σ²C² I) is added to the sum; the
update is −η (Σ clip(g_i) + noise) / (q·N) (the expected batch size: post-processing). Its claim is
the accountant's (:func:`dpaudit.onerun.accountant.dpsgd_epsilon`) at (σ, q, T, δ), for adding or
removing one record.

The bugs (:data:`BUGS`), each audited at the same accountant's claim:

``batch-clip``     clip the batch's mean gradient to C instead of each example, with the noise
                   of the correct mean, σC/(qN) (``loss.mean().backward();
                   clip_grad_norm_(params, C)`` then per-example noise): one example moves the
                   clipped mean by up to 2C against noise σC/(qN)
``mean-noise``     noise scaled for the mean, σC/(qN), added to the sum (the division by the
                   batch size done twice): σ is (qN) times too small
``rate-mismatch``  the accountant is told q/:data:`RATE_FACTOR` (a sampling rate worked out on
                   the full dataset) while the loader samples at q
``reused-noise``   one noise vector drawn at the first step and added at every step (a noise
                   draw hoisted out of the loop): the differences between steps are noiseless

Records are ``(x, y)`` with x in the first ``features`` coordinates; white-box canaries are
:class:`dpaudit.onerun.DiracCanary` records (gradient −G·e_j on a coordinate of their own, above
the features), black-box ones :class:`dpaudit.onerun.InputCanary` records (an input and a label).
The trained :class:`Model` has the final ``params``, the per-step ``updates`` (the white-box
trajectory) and ``loss(x, y)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Optional, Sequence

import numpy as np

from dpaudit.onerun import (BLACK_BOX_SCORES, WHITE_BOX_SCORES, DiracCanary, InputCanary, OneRunSpec,
                            dirac_canaries, dpsgd_epsilon, input_canaries)
from dpaudit.onerun.accountant import accountant_name

__all__ = ["BUGS", "RATE_FACTOR", "Model", "DPSGDLogReg", "make_data", "one_run_spec", "FEATURES", "DELTA"]

BUGS = ("batch-clip", "mean-noise", "rate-mismatch", "reused-noise")
#: the rate-mismatch bug's accountant is told q / RATE_FACTOR
RATE_FACTOR = 10.0
#: real features per record, records in the data, the claim's δ
FEATURES = 8
RECORDS = 1000
DELTA = 1e-5


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))


@dataclass(frozen=True, eq=False)
class Model:
    """A trained logistic regression: ``params`` (dim), ``updates`` (steps × dim: what each step
    added to the parameters)."""

    params: np.ndarray
    updates: np.ndarray
    features: int

    def loss(self, x: np.ndarray, y: float) -> float:
        """The logistic loss on one example (x over the first coordinates)."""
        z = float(np.dot(self.params[: x.size], x))
        return float(np.logaddexp(0.0, -z) if y >= 0.5 else np.logaddexp(0.0, z))


@dataclass(frozen=True)
class DPSGDLogReg:
    """A DP-SGD logistic regression (module docstring): ``dim`` parameters (the ``features``
    first, then one per Dirac canary), noise multiplier σ, clip norm C, Poisson rate q, T steps,
    learning rate η, and ``bug`` (None or one of :data:`BUGS`)."""

    dim: int
    noise_multiplier: float = 3.0
    clip: float = 1.0
    sample_rate: float = 0.1
    steps: int = 400
    lr: float = 0.5
    features: int = FEATURES
    bug: Optional[str] = None

    def __post_init__(self) -> None:
        if self.bug is not None and self.bug not in BUGS:
            raise ValueError(f"bug must be None or one of {BUGS}, got {self.bug!r}")

    @property
    def accounted_rate(self) -> float:
        """The sampling rate the accountant is told (q, or q/RATE_FACTOR for ``rate-mismatch``)."""
        return self.sample_rate / RATE_FACTOR if self.bug == "rate-mismatch" else self.sample_rate

    def claim(self, delta: float = DELTA) -> float:
        """The ε the accountant claims at ``delta`` (:func:`dpaudit.onerun.dpsgd_epsilon`)."""
        return dpsgd_epsilon(self.noise_multiplier, self.accounted_rate, self.steps, delta)

    def describe(self) -> dict:
        return {"trainer": "numpy DP-SGD logistic regression", "bug": self.bug,
                "noise_multiplier": self.noise_multiplier, "clip": self.clip, "sample_rate": self.sample_rate,
                "accounted_rate": self.accounted_rate, "steps": self.steps, "lr": self.lr,
                "accountant": accountant_name()}

    def train(self, dataset: Sequence, rng: np.random.Generator) -> Model:
        """Train once on ``dataset`` (records and canaries, module docstring) with ``rng``."""
        rows = [r for r in dataset if not isinstance(r, (DiracCanary, InputCanary))]
        inputs = [r for r in dataset if isinstance(r, InputCanary)]
        diracs = [r for r in dataset if isinstance(r, DiracCanary)]
        f, d = self.features, self.dim
        X = np.array([np.asarray(x, float) for x, _ in rows] + [np.asarray(c.x, float) for c in inputs]).reshape(-1, f)
        y = np.array([float(t) for _, t in rows] + [c.y for c in inputs])
        coords = np.array([c.coordinate for c in diracs], dtype=np.int64)
        mags = np.array([c.magnitude for c in diracs], dtype=float)
        n_total = len(X) + len(coords)
        batch = self.sample_rate * n_total  # the expected batch size
        C, sigma = self.clip, self.noise_multiplier
        w = np.zeros(d)
        updates = np.empty((self.steps, d))
        reused = None
        for t in range(self.steps):
            take = rng.random(len(X)) < self.sample_rate
            take_c = rng.random(len(coords)) < self.sample_rate
            Xs, ys = X[take], y[take]
            g = (_sigmoid(Xs @ w[:f]) - ys)[:, None] * Xs  # per-example gradients (features only)
            cs, ms = coords[take_c], mags[take_c]
            if self.bug == "batch-clip":
                total = np.zeros(d)
                total[:f] = g.sum(axis=0)
                np.add.at(total, cs, -ms)
                mean = total / batch
                norm = np.linalg.norm(mean)
                grad = mean * min(1.0, C / norm) if norm > 0 else mean
                step = grad + rng.normal(0.0, sigma * C / batch, size=d)
            else:
                norms = np.linalg.norm(g, axis=1)
                scale = np.minimum(1.0, C / np.maximum(norms, 1e-300))
                total = np.zeros(d)
                total[:f] = (g * scale[:, None]).sum(axis=0)
                np.add.at(total, cs, -np.minimum(ms, C))  # each canary clipped to C on its own
                if self.bug == "mean-noise":
                    noise = rng.normal(0.0, sigma * C / batch, size=d)
                elif self.bug == "reused-noise":
                    if reused is None:
                        reused = rng.normal(0.0, sigma * C, size=d)
                    noise = reused
                else:
                    noise = rng.normal(0.0, sigma * C, size=d)
                step = (total + noise) / batch
            updates[t] = -self.lr * step
            w = w + updates[t]
        return Model(params=w, updates=updates, features=f)


def make_data(n: int = RECORDS, features: int = FEATURES, seed: int = 0) -> list:
    """``n`` records (x, y): x ~ N(0, I/features), y ~ Bernoulli(σ(⟨w*, x⟩)) with ‖w*‖ = 4."""
    rng = np.random.default_rng(seed)
    w_star = rng.standard_normal(features)
    w_star *= 4.0 / np.linalg.norm(w_star)
    X = rng.standard_normal((n, features)) / np.sqrt(features)
    y = (rng.random(n) < _sigmoid(X @ w_star)).astype(float)
    return [(X[i], y[i]) for i in range(n)]


def one_run_spec(bug: Optional[str] = None, m: int = 1000, canaries: str = "dirac", *, records: int = RECORDS,
                 delta: float = DELTA, data_seed: int = 0, **trainer: Any) -> OneRunSpec:
    """The one-run audit of the reference trainer with ``bug`` (None: the correct one): m
    white-box Dirac canaries scored by ``sum`` and ``spread`` (``canaries="dirac"``), or m
    black-box input canaries scored by their loss (``"input"``), at the accountant's claim."""
    if canaries == "dirac":
        model = DPSGDLogReg(dim=FEATURES + m, bug=bug, **trainer)
        cans: list = dirac_canaries(m, FEATURES)
        scores = dict(WHITE_BOX_SCORES)
    elif canaries == "input":
        model = DPSGDLogReg(dim=FEATURES, bug=bug, **trainer)
        cans = input_canaries(m, FEATURES, np.random.default_rng(data_seed + 1), scale=1.0)
        scores = dict(BLACK_BOX_SCORES)
    else:
        raise ValueError(f"canaries must be 'dirac' or 'input', got {canaries!r}")
    eps = model.claim(delta)
    name = f"dpsgd-logreg[{bug or 'correct'}, {canaries}]"
    source = (f"{accountant_name()}: σ = {model.noise_multiplier:g}, q = {model.accounted_rate:g}, "
              f"T = {model.steps}, δ = {delta:g}")
    return OneRunSpec(train=model.train, data=make_data(records, seed=data_seed), canaries=cans, score=scores,
                      epsilon=eps, delta=delta, name=name, source=source, describe=model.describe())
