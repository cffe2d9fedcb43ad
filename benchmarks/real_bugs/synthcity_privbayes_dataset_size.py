"""synthcity's PrivBayes: the dataset size, a private quantity, sets the noise scale.

Sources: T. Cebere et al., "Privacy in theory, bugs in practice: a grey-box auditing framework of
differential privacy libraries" (PETS 2026, arXiv:2602.17454): the first synthcity issue, the
dataset size used as if it were public (ObliviousAI/dp-recorder ``tests/test_buggy_private_mean.py``
reduces it); the code: vanderschaarlab/synthcity
``src/synthcity/plugins/privacy/plugin_privbayes.py``, where ``_get_noisy_counts_for_attributes``
calls ``self._laplace_noise_parameter(*raw_data.shape)``, i.e. ``2 * (n_features - K) /
(n_items * epsilon)`` with ``n_items`` the number of rows of the private data. Under add-remove
neighbours (one record more or less, the unbounded DP the dataset size is private under) the
noise's scale follows the data.

Re-creation: the same noisy count table with K = 1 < n_features = 2, n ≤ 10 records, one record
added or removed, ε = 1. The replay sees the Laplace call's scale differ between D and D′: a
data-dependent noise scale at the noise line.
"""

import numpy as np

import dpaudit

EPSILON, K, N_FEATURES = 1.0, 1, 2
EXPECTED = "data_dependent_noise_scale"
SOURCE = "Cebere et al., PETS 2026 (arXiv:2602.17454); synthcity plugin_privbayes.py"


def laplace_noise_parameter(n_items, n_features, k, epsilon):
    return 2 * (n_features - k) / (n_items * epsilon)


@dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0.0, 1.0), size=10)
def mechanism(data, rng):
    x = np.clip(np.asarray(data, dtype=float), 0.0, 1.0)
    cells = 2 * (x >= 0.5).astype(int) + (np.floor(x * 4) % 2).astype(int)
    counts = np.bincount(cells, minlength=4).astype(float)
    noise_para = laplace_noise_parameter(max(len(x), 1), N_FEATURES, K, EPSILON)
    noisy = counts + rng.laplace(0, scale=noise_para, size=counts.size)  # replay: expected site
    return np.maximum(noisy, 0.0)
