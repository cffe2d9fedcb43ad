"""DataResponsibly/DataSynthesizer#34: Laplace noise for probabilities (2/n) added to counts (2).

Source: https://github.com/DataResponsibly/DataSynthesizer/issues/34 ("Wrong Conditional
Distributions Sensitivity", closed). PrivBayes' Algorithm 1 adds noise of scale 2(d − k)/(n ε)
to a *probability* table (sensitivity 2/n), but ``get_noisy_distribution_of_attributes`` in
``DataSynthesizer/lib/PrivBayes.py`` adds Laplace noise of scale ``noise_para`` (numpy's global generator) with
``noise_para = 2 * (num_attributes - k) / (num_tuples * epsilon)`` to the *counts*, whose
sensitivity is 2 (a replaced record leaves one cell and joins another), then normalises: the
noise is n times too small. The issue's fix is ``2 * (num_attributes - k) / epsilon``.

Re-creation: the noisy (k+1)-attribute count table of ``get_noisy_distribution_of_attributes``
with d = 2 binary attributes read from each record x in [0, 1] (x ≥ 1/2, and the second bit of
4x), k = 1, n = 10 tuples (bounded DP: one record replaced), ε = 1 for this step; counts below 0
are set to 0 and the table is normalised, as the library does. The noise call is numpy's, with no
declaration: the replay observes the counts it is added to, and its accounting says the code's own
noise supports ε = 10 on a pair where the claim is 1: an accounting note at the noise line (not an
ε lower bound: composition is an upper bound).
"""

import numpy as np

import dpaudit

EPSILON = 1.0
NUM_ATTRIBUTES, K, NUM_TUPLES = 2, 1, 10
EXPECTED = "composition_excess"
SOURCE = "DataResponsibly/DataSynthesizer#34"


def laplace_noise_parameter(k, num_attributes, num_tuples, epsilon):
    return 2 * (num_attributes - k) / (num_tuples * epsilon)


@dpaudit.mechanism(epsilon=1.0, neighbours="replace", domain=(0.0, 1.0), size=10)
def mechanism(data, rng):
    x = np.clip(np.asarray(data, dtype=float), 0.0, 1.0)
    a = (x >= 0.5).astype(int)
    b = (np.floor(x * 4) % 2).astype(int)
    counts = np.bincount(2 * a + b, minlength=4).astype(float)    # groupby(attributes).sum()
    noise_para = laplace_noise_parameter(K, NUM_ATTRIBUTES, NUM_TUPLES, EPSILON)
    counts = counts + rng.laplace(0, scale=noise_para, size=counts.size)  # replay: expected site
    counts = np.maximum(counts, 0.0)
    total = counts.sum()
    return counts / total if total > 0 else np.full(4, 0.25)
