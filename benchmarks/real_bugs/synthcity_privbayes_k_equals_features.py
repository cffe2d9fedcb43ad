"""synthcity's PrivBayes: the noise scale 2(n_features − K)/(n ε) is 0 when K = n_features.

Sources: T. Cebere, D. Erb, D. Desfontaines, A. Bellet, J. Fitzsimons, "Privacy in theory, bugs
in practice: a grey-box auditing framework of differential privacy libraries" (PETS 2026,
arXiv:2602.17454), §4.3.3, as reduced in ObliviousAI/dp-recorder ``tests/test_noise_miscalibration.py``;
the code: vanderschaarlab/synthcity ``src/synthcity/plugins/privacy/plugin_privbayes.py``,
``_laplace_noise_parameter(n_items, n_features) = 2 * (n_features - self.K) / (n_items *
self.epsilon)``, used by ``_get_noisy_counts_for_attributes`` as
Laplace noise of scale ``noise_para`` from numpy's global generator added to the counts. With a network degree K
equal to the number of features the scale is 0: the counts are released exactly.

Re-creation: ``_get_noisy_counts_for_attributes`` on two binary features read from each record x
in [0, 1], K = n_features = 2, n = 10 records (one replaced), ε = 1. The replay sees numpy's
Laplace call with scale 0 on counts that move between D and D′: data released without noise, at
the noise line.
"""

import numpy as np

import dpaudit

EPSILON, K, N_FEATURES, N_ITEMS = 1.0, 2, 2, 10
EXPECTED = "unnoised_release"
SOURCE = "Cebere et al., PETS 2026 (arXiv:2602.17454) §4.3.3; synthcity plugin_privbayes.py"


def laplace_noise_parameter(n_items, n_features, k, epsilon):
    return 2 * (n_features - k) / (n_items * epsilon)


@dpaudit.mechanism(epsilon=1.0, neighbours="replace", domain=(0.0, 1.0), size=10)
def mechanism(data, rng):
    x = np.clip(np.asarray(data, dtype=float), 0.0, 1.0)
    cells = 2 * (x >= 0.5).astype(int) + (np.floor(x * 4) % 2).astype(int)
    counts = np.bincount(cells, minlength=4).astype(float)
    noise_para = laplace_noise_parameter(len(x), N_FEATURES, K, EPSILON)
    noisy = counts + rng.laplace(0, scale=noise_para, size=counts.size)  # replay: expected site
    return np.maximum(noisy, 0.0)
