"""Shared runs of the formal claims: every claim is solved once per test session.

``formal_results`` is one run of every registered (non-control) claim with the default seed and
limits; ``control_results`` one run of the negative controls; ``dumped_smt2`` writes every query of
both to a temporary folder, as ``dpaudit verify --smt2-dir`` does.

Under pytest-xdist a session fixture runs once per worker, and the formal tests spread over all of
them: each worker solved every claim again (about 4 CPU s each, the same deterministic results).
The first worker to need a run now leaves it, pickled, in the run's shared temporary folder and the
others read it there (pytest-xdist's documented way of running a session fixture once).
"""

from __future__ import annotations

import os
import pickle
import time
from typing import Any, Callable

import pytest

from dpaudit.formal import claim_names, list_claims, verify
from dpaudit.formal.cli import write_smt2


def _once(tmp_path_factory, name: str, compute: Callable[[], Any]) -> Any:
    """``compute()``, computed by one process of this test run and shared with the others: a
    plain run computes it; an xdist worker takes the run's lock in the folder that every worker's
    temporary folder is in, and reads what an earlier worker left there, else computes it and
    leaves it for the next."""
    try:
        import fcntl
    except ImportError:  # no flock (Windows): every process computes its own
        return compute()
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return compute()
    shared = tmp_path_factory.getbasetemp().parent  # the controller's folder, one per test run
    data = shared / f"{name}.pickle"
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if data.is_file():
            return pickle.loads(data.read_bytes())
        value = compute()
        partial = data.with_suffix(".partial")
        partial.write_bytes(pickle.dumps(value))
        partial.replace(data)
        return value


def _timed_run():
    start = time.perf_counter()
    results = verify()
    return results, time.perf_counter() - start


@pytest.fixture(scope="session")
def formal_run(tmp_path_factory):
    """(results, wall seconds) of one run of every non-control claim."""
    return _once(tmp_path_factory, "formal_run", _timed_run)


@pytest.fixture(scope="session")
def formal_results(formal_run):
    return formal_run[0]


@pytest.fixture(scope="session")
def by_name(formal_results):
    return {r.name: r for r in formal_results}


@pytest.fixture(scope="session")
def control_results(tmp_path_factory):
    controls = [c.name for c in list_claims(include_controls=True) if c.control_of]
    assert controls, "no negative controls registered"
    return _once(tmp_path_factory, "control_results", lambda: verify(controls))


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
