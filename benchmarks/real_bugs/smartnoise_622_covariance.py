"""opendp/smartnoise-sdk#622: the DP covariance is computed on the data before clipping.

Source: https://github.com/opendp/smartnoise-sdk/issues/622 ("Covariance Clipping Bug", filed by
T. Cebere, 2026, from the Re:cord-play study). ``DPcovariance.release`` in
``synth/snsynth/models/dp_covariance.py`` censors the selected columns to the declared ranges
(``censor_data``) and imputes missing values (``fill_missing``), but then computes
``covar(data.values.T)`` on the *raw* frame; the Laplace noise of each entry (drawn by inverse CDF
from uniforms, ``q_lap``) is calibrated to ``covariance_sensitivity(n, rng)`` = 2/n · (hi − lo)²,
the sensitivity of the covariance of *censored* data. A record outside the range moves the
covariance by far more.

Re-creation: one column (the covariance matrix is then the variance), n = 10 rows (the library's
``num_rows``, public: bounded DP, one record replaced), declared range [0, 1], records anywhere in
[−10, 10]. The noise function keeps the library's inverse-CDF construction; the only addition is
the ``@primitive`` line that states what the library's own code assumes: its input moves by at
most ``sens`` (the one line an auditor adds, as Re:cord-play's instrumentation does). The replay
finds the declared sensitivity exceeded at the call of the noise.
"""

import numpy as np

import dpaudit
from dpaudit.replay import primitive

EPSILON = 1.0
N = 10
LO, HI = 0.0, 1.0
EXPECTED = "sensitivity_exceeded"
SOURCE = "opendp/smartnoise-sdk#622"


def q_lap(elem, mu=0.0, b=1.0):
    """The library's inverse CDF of Laplace(mu, b)."""
    if elem < 0.5:
        return mu + b * np.log(2 * elem)
    return mu - b * np.log(2 - 2 * elem)


@primitive(sensitivity="sens", epsilon="epsilon", input="true_val", distribution="laplace")
def dp_noise_release(true_val, sens, epsilon, rng):
    """``np.array(true_val) + dp_noise(n=len(true_val), noise_scale=sens / epsilon)``."""
    u = rng.uniform(size=len(true_val))
    noise = np.array([q_lap(p, 0.0, sens / epsilon) for p in u])
    return np.array(true_val) + noise


def covariance_sensitivity(n, lo, hi):
    return 2.0 / n * (hi - lo) * (hi - lo)


@dpaudit.mechanism(epsilon=1.0, neighbours="replace", domain=(-10.0, 10.0), size=10)
def mechanism(data, rng):
    """The release of one covariance entry (the variance of the one column)."""
    new_data = np.clip(data, LO, HI)             # censor_data (kept, then not used)
    new_data = np.where(np.isnan(new_data), LO, new_data)  # fill_missing
    true_val = [float(np.cov(data))] if len(data) > 1 else [0.0]   # bug: the raw data
    sens = covariance_sensitivity(N, LO, HI)
    val = dp_noise_release(true_val, sens, EPSILON, rng)  # replay: expected site
    return float(val[0])
