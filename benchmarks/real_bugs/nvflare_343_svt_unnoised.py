"""NVIDIA/NVFlare#343: SVTPrivacy releases some selected weights without noise.

Source: https://github.com/NVIDIA/NVFlare/issues/343 ("SVTPrivacy might be incorrect?",
confirmed as a bug by the maintainers). In ``nvflare/app_common/filters/svt_privacy.py`` the
sparse vector technique selects the ``accepted`` coordinates of the model update ``delta_w``, then
a draw of ``n_upload`` of them from numpy's global generator keeps a random subset (with
replacement), adds noise to that subset only and zeroes the rejected ``candidate_idx``: every
accepted coordinate that the choice left out keeps its raw value in the released ``delta_w``.

Re-creation: the filter's ``process`` body on a vector of d = 10 update values in [−1, 1]
(``linf`` neighbours: each coordinate moves by at most 1), with gamma = 1, tau = 0.1, fraction =
0.5, epsilon = noise_var = 1 and ``rng`` in place of ``np.random``; the claim is the filter's three
budgets added up. With every noisy value frozen, the released ``delta_w`` still differs between D
and D′ in a coordinate that does not move when the noise is perturbed: it is released without
noise, at the line that returns ``delta_w``.
"""

import numpy as np

import dpaudit

FRACTION, EPS_1, EPS_3, GAMMA, TAU = 0.5, 1.0, 1.0, 1.0, 0.1
D = 10
N_UPLOAD = min(np.ceil(D * FRACTION), float(D))
EPS_2 = EPS_1 * (2.0 * N_UPLOAD) ** (2.0 / 3.0)
EXPECTED = "unnoised_release"
SOURCE = "NVIDIA/NVFlare#343"


# ε = EPS_1 + EPS_2 + EPS_3, written out: dpaudit check reads the claim from the source
@dpaudit.mechanism(epsilon=6.641588833612778, neighbours="linf", domain=(-1.0, 1.0), size=10)
def mechanism(data, rng):
    delta_w = np.array(data, dtype=float)
    n_upload = N_UPLOAD
    lambda_rho = GAMMA * 2.0 / EPS_1
    threshold = TAU + rng.laplace(scale=lambda_rho)
    lambda_nu = GAMMA * 4.0 * n_upload / EPS_2
    accepted, candidate_idx = [], np.arange(delta_w.size)
    _clipped_w = np.abs(np.clip(delta_w, a_min=-GAMMA, a_max=GAMMA))
    while len(accepted) < n_upload:
        nu_i = rng.laplace(scale=lambda_nu, size=candidate_idx.shape)
        above_threshold = (_clipped_w[candidate_idx] + nu_i) >= threshold
        accepted += candidate_idx[above_threshold].tolist()
        candidate_idx = candidate_idx[~above_threshold]
    accepted = rng.choice(accepted, size=np.int64(n_upload))      # the bug: a subset
    noise = rng.laplace(scale=GAMMA * 2.0 / EPS_3, size=accepted.shape)
    delta_w[accepted] = np.clip(delta_w[accepted] + noise, a_min=-GAMMA, a_max=GAMMA)
    delta_w[candidate_idx] = 0.0
    return delta_w  # replay: expected site
