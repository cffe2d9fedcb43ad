"""An Opacus DP-SGD loop (CPU torch) audited in one run (docs/training.md).

    pip install 'dpaudit[opacus]'      # torch from PyPI brings several GB of CUDA wheels
    dpaudit train-audit examples/training/opacus_dpsgd.py

The model of :mod:`jax_dpsgd` in torch: ``nn.Linear(d, 1, bias=False)`` made private by Opacus's
``PrivacyEngine.make_private`` (per-sample gradients by hooks, clipping to C, noise σC on the
sum, Poisson sampling at q through its ``DPDataLoader``), the per-example loss summed
(``loss_reduction="sum"``). A Dirac canary record's loss is −⟨θ, x⟩ with x = G·e_j: its
per-sample gradient is −G·e_j, clipped by Opacus like any other.
"""

from __future__ import annotations

import numpy as np

from dpaudit.onerun import DiracCanary, OneRunSpec, dirac_canaries, dirac_sum, dpsgd_epsilon
from dpaudit.onerun.accountant import accountant_name
from dpaudit.reference.dpsgd import DELTA, FEATURES, make_data

SIGMA, CLIP, RATE, STEPS, LR, CANARIES = 3.0, 1.0, 0.1, 400, 0.5, 1000


class Model:
    def __init__(self, params: np.ndarray) -> None:
        self.params = params


def train(dataset, rng: np.random.Generator) -> Model:
    import torch
    from opacus import PrivacyEngine

    torch.manual_seed(int(rng.integers(2 ** 31)))
    d = FEATURES + CANARIES
    n = len(dataset)
    X = np.zeros((n, d), dtype=np.float32)
    y = np.zeros(n, dtype=np.float32)
    canary = np.zeros(n, dtype=np.float32)
    for i, r in enumerate(dataset):
        if isinstance(r, DiracCanary):
            X[i, r.coordinate] = r.magnitude
            canary[i] = 1.0
        else:
            X[i, :FEATURES] = r[0]
            y[i] = r[1]
    data = torch.utils.data.TensorDataset(torch.from_numpy(X), torch.from_numpy(y), torch.from_numpy(canary))
    loader = torch.utils.data.DataLoader(data, batch_size=int(round(RATE * n)))
    model = torch.nn.Linear(d, 1, bias=False)
    torch.nn.init.zeros_(model.weight)
    batch = RATE * n
    opt = torch.optim.SGD(model.parameters(), lr=LR / batch)
    model, opt, loader = PrivacyEngine().make_private(module=model, optimizer=opt, data_loader=loader,
                                                      noise_multiplier=SIGMA, max_grad_norm=CLIP,
                                                      poisson_sampling=True, loss_reduction="sum")
    steps = 0
    while steps < STEPS:
        for xb, yb, cb in loader:
            if steps >= STEPS:
                break
            opt.zero_grad()
            z = model(xb).squeeze(-1) if len(xb) else xb.sum(-1)
            logistic = torch.nn.functional.binary_cross_entropy_with_logits(z, yb, reduction="none")
            loss = torch.where(cb > 0, -z, logistic).sum()
            loss.backward()
            opt.step()
            steps += 1
    return Model(model._module.weight.detach().numpy().ravel().astype(float))


def one_run_spec() -> OneRunSpec:
    eps = dpsgd_epsilon(SIGMA, RATE, STEPS, DELTA)
    return OneRunSpec(train=train, data=make_data(), canaries=dirac_canaries(CANARIES, FEATURES),
                      score={"sum": dirac_sum}, epsilon=eps, delta=DELTA, name="opacus-dpsgd[correct]",
                      source=f"{accountant_name()}: σ = {SIGMA:g}, q = {RATE:g}, T = {STEPS}, δ = {DELTA:g}",
                      describe={"trainer": "Opacus DP-SGD (PrivacyEngine.make_private)", "bug": None,
                                "noise_multiplier": SIGMA, "sample_rate": RATE, "steps": STEPS})
