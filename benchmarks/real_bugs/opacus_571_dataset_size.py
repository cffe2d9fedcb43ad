"""meta-pytorch/opacus#571: the dataset size leaks through the normalisation of the noisy gradient.

Source: https://github.com/meta-pytorch/opacus/issues/571 ("Privacy Leakage at low sample size";
the maintainer's diagnosis: Opacus estimates ``expected_batch_size`` by multiplying the sample
rate by the dataset's length, a private quantity, and divides the noisy summed gradient by it;
see also meta-pytorch/opacus#819 on the floor in ``privacy_engine.py``). DP-SGD with Poisson
sampling adds N(0, (zC)²) to the sum of per-example gradients clipped to C, then
``p.grad = (summed_grad + noise) / expected_batch_size`` with
``expected_batch_size = int(len(dataset) * sample_rate)``: when one record more or less moves that
integer, the released gradient's noise is rescaled by the data.

Re-creation: one DP-SGD step with Poisson sampling at rate q = 0.5 over n ≤ 10 records in
[−1, 1] (add-remove), per-example gradient (x, x²) clipped to C = 1, noise multiplier z = 1, the
claim the step's (ε, δ) = (5, 1e-5) (one Gaussian step of μ = 1 is (4.4, 1e-5)-DP). The replay
freezes the Poisson mask record by record and the Gaussian draw, and finds the noisy value
divided by a value that differs between D and D′: a data-dependent noise scale, at that line.
"""

import numpy as np

import dpaudit

EPSILON, DELTA = 5.0, 1e-5
Q, C, Z = 0.5, 1.0, 1.0
EXPECTED = "data_dependent_noise_scale"
SOURCE = "meta-pytorch/opacus#571"


@dpaudit.mechanism(epsilon=5.0, delta=1e-05, neighbours="add-remove", domain=(-1.0, 1.0), size=10)
def mechanism(data, rng):
    x = np.asarray(data, dtype=float)
    batch = x[rng.random(len(x)) < Q]                         # Poisson sampling
    per_example = np.stack([batch, batch * batch], axis=1) if len(batch) else np.zeros((0, 2))
    norms = np.linalg.norm(per_example, axis=1) if len(batch) else np.zeros(0)
    clipped = per_example / np.maximum(norms / C, 1.0)[:, None] if len(batch) else per_example
    summed_grad = clipped.sum(axis=0)
    noise = rng.normal(scale=Z * C, size=2)
    expected_batch_size = int(len(x) * Q)                     # len(dataset): private
    return (summed_grad + noise) / max(expected_batch_size, 1)  # replay: expected site
