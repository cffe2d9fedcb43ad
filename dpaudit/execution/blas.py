"""One BLAS thread while dpaudit computes (OpenBLAS, as bundled by numpy and scipy wheels).

Two reasons. *Speed*: dpaudit runs several processes at once (audit-suite workers, the fork
executor, benchmark pools); each OpenBLAS starts a pool with one spinning thread per core, so on a
2-core machine two audits doing matrix work (the logistic score of vector outputs) thrash: two SVT
audits took 92 s side by side instead of 28 s with one BLAS thread each. *Reproducibility*:
OpenBLAS sums in an order that depends on its thread count, so the same seed could choose a
different event on a machine with more cores. :func:`single_blas_thread` caps every loaded OpenBLAS
at one thread and restores the previous counts on exit, so a user's own process is left as it was.

This is what ``threadpoolctl`` does in general; dpaudit needs only OpenBLAS on Linux: the loaded
libraries are found by name in ``/proc/self/maps``. Elsewhere it does nothing.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
from typing import Iterator

__all__ = ["single_blas_thread", "openblas_libraries", "cap_worker"]

# (setter, getter) symbol names: plain OpenBLAS, and the scipy-openblas builds of numpy / scipy
_SYMBOLS = (("openblas_set_num_threads", "openblas_get_num_threads"),
            ("scipy_openblas_set_num_threads64_", "scipy_openblas_get_num_threads64_"),
            ("scipy_openblas_set_num_threads", "scipy_openblas_get_num_threads"),
            ("openblas_set_num_threads64_", "openblas_get_num_threads64_"))


def openblas_libraries() -> list[tuple]:
    """(setter, getter) ctypes functions of every OpenBLAS loaded in this process."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as fh:
            names = {ln.split()[-1] for ln in fh.read().splitlines() if ln.split()}
    except OSError:
        return []
    out = []
    for path in sorted(p for p in names if p.startswith("/") and "openblas" in p.rsplit("/", 1)[-1].lower()):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for set_name, get_name in _SYMBOLS:
            setter, getter = getattr(lib, set_name, None), getattr(lib, get_name, None)
            if setter is not None and getter is not None:
                setter.argtypes, getter.restype = [ctypes.c_int], ctypes.c_int
                out.append((setter, getter))
                break
    return out


@contextlib.contextmanager
def single_blas_thread() -> Iterator[int]:
    """Run the block with one OpenBLAS thread; yields how many libraries were capped."""
    libs = openblas_libraries()
    before = [getter() for _, getter in libs]
    for setter, _ in libs:
        setter(1)
    try:
        yield len(libs)
    finally:
        for (setter, _), n in zip(libs, before):
            setter(max(1, int(n)))


def cap_worker() -> None:
    """Pool initializer for forked workers: one BLAS thread for the worker's whole life (the
    parent already runs one process per core), also for libraries loaded later."""
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[name] = "1"
    for setter, _ in openblas_libraries():
        setter(1)
