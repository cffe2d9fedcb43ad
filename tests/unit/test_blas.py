"""The auditor computes with one BLAS thread and gives the process back as it found it."""

import numpy as np
import scipy.linalg  # noqa: F401  (loads scipy's own OpenBLAS too)

from dpaudit.execution.blas import openblas_libraries, single_blas_thread


def test_single_blas_thread_caps_and_restores():
    libs = openblas_libraries()
    assert libs, "numpy's bundled OpenBLAS should be found in /proc/self/maps"
    before = [get() for _, get in libs]
    with single_blas_thread() as n:
        assert n == len(libs)
        assert [get() for _, get in libs] == [1] * len(libs)
        a = np.arange(9.0).reshape(3, 3)
        assert (a @ a)[0, 0] == 15.0
    assert [get() for _, get in libs] == before
