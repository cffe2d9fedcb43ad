"""Independence: every dumped SMT-LIB2 query, solved again by a fresh z3 process, gives the answer
the in-process run recorded (and so the same claim status)."""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from dpaudit.formal import verify
from dpaudit.formal.cli import write_smt2
from dpaudit.formal.independence import solve_fresh, z3_command
from dpaudit.formal.runner import combine


def _paths(folder, results):
    for r in results:
        for i, q in enumerate(r.queries, start=1):
            yield r, q, folder / r.name / f"{i:02d}-{q.name}.smt2"


@pytest.fixture(scope="module")
def one_claim_dumped(tmp_path_factory):
    """The dumped queries of one claim with sat and unsat queries (a run of every claim, which
    the slow test reads, costs each test process seconds of z3)."""
    folder = tmp_path_factory.mktemp("smt2-one")
    results = verify(["l2-2d-counterexample"])
    assert write_smt2(results, str(folder)) == len(results[0].queries)
    return folder, results


@pytest.mark.slow
def test_every_dumped_query_solved_fresh_gives_the_same_answer(dumped_smt2):
    folder, results = dumped_smt2
    jobs = list(_paths(folder, results))
    assert len(jobs) > 150
    with ThreadPoolExecutor(max_workers=2) as pool:
        answers = list(pool.map(lambda job: solve_fresh(str(job[2])), jobs))
    differ = [(r.name, q.name, q.answer, a) for (r, q, _), a in zip(jobs, answers) if a != q.answer]
    assert not differ
    # the fresh answers decide every claim exactly as the in-process run did
    fresh: dict[str, list] = {}
    for (r, q, _), a in zip(jobs, answers):
        fresh.setdefault(r.name, []).append((q, a))
    for r in results:
        fake = [type(q)(q.name, q.description, q.needs, a, 0.0, "") for q, a in fresh[r.name]]
        assert combine(fake)[0] is r.status


def test_dumped_text_is_what_the_run_recorded(one_claim_dumped):
    folder, results = one_claim_dumped
    for r, q, path in _paths(folder, results):
        assert path.read_text(encoding="utf-8") == q.smt2
        assert q.smt2.startswith(f"; dpaudit formal claim: {r.name}\n")


def test_python_fallback_fresh_solve_agrees(one_claim_dumped):
    """The fresh solve without the z3 binary (a fresh Python process) agrees too."""
    folder, results = one_claim_dumped
    cmd = [sys.executable, "-c", "import sys, z3; s = z3.Solver(); s.from_file(sys.argv[1]); "
           "print(s.check())"]
    picked = [job for job in _paths(folder, results) if job[0].name == "l2-2d-counterexample"]
    assert {q.answer for _, q, _ in picked} == {"sat", "unsat"}
    for _, q, path in picked:
        assert solve_fresh(str(path), command=cmd) == q.answer
    assert z3_command()
