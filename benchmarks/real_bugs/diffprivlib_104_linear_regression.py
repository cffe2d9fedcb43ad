"""IBM/differential-privacy-library#104 (and #105): LinearRegression uses the lower bound twice.

Sources: https://github.com/IBM/differential-privacy-library/issues/104 (item 1) and
https://github.com/IBM/differential-privacy-library/issues/105. In
``diffprivlib/models/linear_regression.py``, ``_construct_regression_obj`` sets the sensitivity of
each diagonal coefficient Σ x_i² to ``np.max(np.abs([bounds_X[0][i], bounds_X[0][i]])) ** 2``:
the lower bound twice, the upper bound never. With bounds_X = (0, 1) the sensitivity is 0, the
``LaplaceFolded`` mechanism adds no noise, and Σ x² is released exactly (#105: "(0, 100) → 0").

Not a re-creation: the installed diffprivlib (0.6.6, pinned in the ``libraries`` extra) still has
the line, and this file calls the library's public ``LinearRegression`` unchanged. The replay
records every ``randomise`` call of diffprivlib's mechanisms with the mechanism's own declared
sensitivity and ε (no user code, no decorator) and finds the diagonal coefficient's input moving
by x² against a declared sensitivity of 0, at the line of this file that calls ``fit``.
"""

import warnings

import numpy as np
from diffprivlib.models import LinearRegression

import dpaudit

EPSILON = 1.0
EXPECTED = "sensitivity_exceeded"
SOURCE = "IBM/differential-privacy-library#104 (#105)"


@dpaudit.mechanism(epsilon=1.0, neighbours="replace", domain=(0.0, 1.0), size=8)
def mechanism(data, rng):
    """The coefficient of a one-feature regression of y = 0.5 on x (records x in [0, 1])."""
    X = np.asarray(data, dtype=float).reshape(-1, 1)
    y = np.full(len(data), 0.5)
    model = LinearRegression(epsilon=EPSILON, bounds_X=(0.0, 1.0), bounds_y=(0.0, 1.0),
                             fit_intercept=False, random_state=int(rng.integers(2**31)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, y)  # replay: expected site
    return float(model.coef_.reshape(-1)[0])
