"""Shared runs of the formal claims: every claim is solved once per test session.

``formal_results`` is one run of every registered (non-control) claim with the default seed and
limits; ``control_results`` one run of the negative controls; ``dumped_smt2`` writes every query of
both to a temporary folder, as ``dpaudit verify --smt2-dir`` does.
"""

from __future__ import annotations

import time

import pytest

from dpaudit.formal import claim_names, list_claims, verify
from dpaudit.formal.cli import write_smt2


@pytest.fixture(scope="session")
def formal_run():
    """(results, wall seconds) of one run of every non-control claim."""
    start = time.perf_counter()
    results = verify()
    return results, time.perf_counter() - start


@pytest.fixture(scope="session")
def formal_results(formal_run):
    return formal_run[0]


@pytest.fixture(scope="session")
def by_name(formal_results):
    return {r.name: r for r in formal_results}


@pytest.fixture(scope="session")
def control_results():
    controls = [c.name for c in list_claims(include_controls=True) if c.control_of]
    assert controls, "no negative controls registered"
    return verify(controls)


@pytest.fixture(scope="session")
def dumped_smt2(formal_results, control_results, tmp_path_factory):
    """The folder holding every query of both runs, and the records that produced them."""
    folder = tmp_path_factory.mktemp("smt2")
    results = list(formal_results) + list(control_results)
    n = write_smt2(results, str(folder))
    assert n == sum(len(r.queries) for r in results)
    return folder, results


@pytest.fixture(scope="session")
def all_names():
    return claim_names()
