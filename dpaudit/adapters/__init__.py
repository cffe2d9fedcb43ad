"""Adapters: a DP library's measurement, mechanism or algorithm as a dpaudit spec with the
library's own claim, written in one line per target::

    from dpaudit.adapters import diffprivlib, opendp, pydp

    diffprivlib.target("tools.mean", epsilon=1, bounds=(0, 1))        # n public: one record replaced
    opendp.target(space >> dp.t.then_sum() >> dp.m.then_laplace(scale=1.0))   # map(1), its metric
    pydp.target("BoundedSum", epsilon=1, lower_bound=0, upper_bound=1)

Each returns a :class:`LibrarySpec` (a :class:`dpaudit.MechanismSpec` that also names the library
and its version) for :func:`dpaudit.audit` or a suite audit. The libraries are optional (the
``dpaudit[libraries]`` extra) and imported only when an adapter is used; a missing one is a
:class:`MissingLibrary` error with the install command. The library-independent parts (metric and
measure names to neighbour relations and claims, ρ-zCDP to (ε, δ)) live in
:mod:`dpaudit.adapters.common`.
"""

from __future__ import annotations

from dpaudit.adapters.common import (
    TESTED_VERSIONS,
    LibrarySpec,
    MissingLibrary,
    require,
    zcdp_epsilon,
)

__all__ = ["LibrarySpec", "MissingLibrary", "TESTED_VERSIONS", "require", "zcdp_epsilon"]
