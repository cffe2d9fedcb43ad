"""The reference numpy DP-SGD logistic regression, audited in one run (docs/training.md).

    dpaudit train-audit examples/training/numpy_dpsgd.py
    dpaudit train-audit examples/training/numpy_dpsgd.py:buggy

``spec`` is the correct trainer (per-example clipping, noise σC on the sum, Poisson sampling at
the accounted rate); ``buggy`` adds the noise scaled for the mean to the sum. Both with 1,000
white-box Dirac canaries, at the accountant's claim.
"""

from dpaudit.reference.dpsgd import one_run_spec

spec = one_run_spec(None, m=1000)
buggy = one_run_spec("mean-noise", m=1000)
