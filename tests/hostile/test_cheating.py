"""Mechanisms that cheat the audit rather than escape the sandbox:
noise seeded with a constant at import, a batch form noisier than the one-call form users call,
and a declaration forged in the sandbox child. Each must end REFUTED or ERROR, never NOT REFUTED,
while the legitimate mechanisms beside them (randomized response with p = 0.99, a discrete
Laplace, a constant, a correct batch form) stay NOT REFUTED: the checks flag a correct mechanism
with probability at most 10⁻⁶ (:mod:`dpaudit.execution.honesty`). Runs through the sandboxed
``dpaudit check`` with the ``arena`` of test_hostile.py (no process or shared-memory folder left).
"""

from __future__ import annotations

import os
import re
import signal
from textwrap import dedent

import numpy as np
import pytest

from .cases import Case
from .test_hostile import (ROOT, arena, check_reports, mechanism_file,  # noqa: F401
                           report_flags, reports, wait_until_no_tagged)

#: the claim comes from each file's declaration (test_hostile's FLAGS set --epsilon=1)
FLAGS = ("--samples=2000", "--call-timeout=5", "--timeout=60", "--quiet")
CLAIM = "@dpaudit.mechanism(epsilon={eps}, neighbours='add-remove', domain=(0, 1), size=10)\n"


def _check(arena, capfd, name: str, source: str, *flags: str) -> tuple[int, dict, str]:
    """``dpaudit check FILE:f`` in the sandbox with all four reports; (exit code, JSON record,
    stdout)."""
    from dpaudit.cli import run

    path = mechanism_file(arena, Case(name, source, 0, ""))
    paths = reports(arena["tmp"])
    code = run(["check", f"{path}:f", *FLAGS, *flags, *report_flags(paths),
                "--pass-env=DPAUDIT_HOSTILE_TAG"])
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err
    rec = check_reports(paths)
    left = wait_until_no_tagged(arena["tag"])
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, f"processes left behind: {left}"
    return int(code), rec, out


def _module(body: str, eps: float = 1.0, head: str = "") -> str:
    return ("import numpy as np\nimport dpaudit\n" + dedent(head) + "\n\n" + CLAIM.format(eps=eps)
            + dedent(body))


# -- noise seeded at import ---------------------------------------------------------------------

#: its own randomness (``f(data)``, which the contract allows): with an ``rng`` argument it ignores,
#: the replay stage makes it an ERROR before the sampling (test_cheats_caught.py)
SEEDED = _module("""\
    def f(data):
        return round(float(data.sum() + np.random.laplace()), 3)
    """, head="np.random.seed(7)")


@pytest.mark.slow
def test_noise_seeded_at_import_is_refuted_with_the_reason(arena, capfd):
    """Every fresh process releases sum + the same number: the data in the clear (was NOT
    REFUTED, with a note that the mechanism draws its own randomness)."""
    code, rec, out = _check(arena, capfd, "seeded", SEEDED)
    assert (code, rec["verdict"]) == (1, "refuted"), rec.get("error")
    assert rec["epsilon_lower_bound"] == "inf"
    event = rec["counterexample"]["event"]["text"]
    assert "its noise is the same in every fresh process (seeded at import?)" in event
    first = re.search(r"the first release on D is (\S+), on D′ (\S+) ", event)
    assert first and first.group(1) != first.group(2)
    d, d2 = rec["counterexample"]["dataset"], rec["counterexample"]["neighbour"]
    assert sum(d) != sum(d2)
    # the whole claim, on the terminal and in the record
    assert "REFUTED — ε = 1 (pure DP), add-remove neighbours, domain [0, 1], size 10;" in out
    assert rec["claim"] == {"epsilon": 1.0, "delta": 0.0, "neighbours": "add-remove",
                            "domain": [0.0, 1.0], "size": 10}


@pytest.mark.slow
@pytest.mark.parametrize("name,source,eps", [
    # randomized response on a bool with p = 0.99 (ε = ln 99): 98% of outputs agree by chance
    ("randomized_response", """\
        def f(data, rng):
            truth = bool(data.sum() >= 1.0)
            return truth if rng.random() < 0.99 else not truth
        """, 4.6),
    # a discrete Laplace (two-sided geometric) count: integers, many collisions
    ("discrete_laplace", """\
        def f(data, rng):
            p = 1 - np.exp(-1.0)
            return int(np.floor(data.sum())) + int(rng.geometric(p)) - int(rng.geometric(p))
        """, 1.0),
    # a constant: the same in every process, and private
    ("constant", """\
        def f(data, rng):
            return 3.0
        """, 1.0),
])
def test_legitimate_discrete_and_constant_mechanisms_are_not_flagged(arena, capfd, name, source, eps):
    """Controls: outputs that repeat by chance are not mistaken for noise fixed at import; the
    terminal line and the JSON claim show the domain and the size."""
    code, rec, out = _check(arena, capfd, name, _module(source, eps=eps))
    assert (code, rec["verdict"]) == (0, "not_refuted"), (rec.get("error"), rec.get("counterexample"))
    assert f"NOT REFUTED — ε = {eps:g} (pure DP), add-remove neighbours, domain [0, 1], size 10;" in out
    assert rec["claim"]["domain"] == [0.0, 1.0] and rec["claim"]["size"] == 10


@pytest.mark.statistical
def test_agreement_test_holds_its_level_on_collision_heavy_laws():
    """alpha = 1e-6 is the stated level; at that level none of 300 pairs of independent sequences
    (seed 20250125) of laws with many collisions is flagged, while two copies of one sequence of
    continuous noise are flagged at once."""
    from dpaudit.execution.honesty import ALPHA, FRESH_CALLS, _keys, agreement_p  # private: _keys, the compared form

    rng = np.random.default_rng(20250125)
    m = FRESH_CALLS
    laws = [lambda n: rng.random(n) < 0.99,                      # randomized response, p = 0.99
            lambda n: rng.random(n) < 0.5,                       # a fair bit
            lambda n: rng.geometric(0.63, n) - rng.geometric(0.63, n),  # discrete Laplace
            lambda n: np.round(rng.laplace(scale=1e-3, size=n), 2),    # a count with tiny noise
            lambda n: np.full(n, 3.0)]                           # a constant
    for law in laws:
        for _ in range(60):
            _, _, p = agreement_p(_keys(law(m)), _keys(law(m)))
            assert p > ALPHA
    seq = _keys(rng.laplace(size=m))
    assert agreement_p(seq, list(seq))[2] < 1e-20


# -- a batch form that is not the one-call form ---------------------------------------------------

RAW_ONE_CALL = _module("""\
    def f(data, rng, size=None):
        if size is None:
            return float(data.sum())
        return np.round(data.sum() + rng.laplace(size=size), 3)
    """)

HONEST_FORMS = _module("""\
    def f(data, rng, size=None):
        y = np.round(data.sum() + rng.laplace(size=1 if size is None else size), 3)
        return y if size is not None else float(y[0])
    """)


@pytest.mark.slow
def test_raw_one_call_form_beside_a_noisy_batch_form_is_an_error(arena, capfd):
    """dpaudit audited only the batch form; the raw sum users call passed (was NOT REFUTED)."""
    code, rec, out = _check(arena, capfd, "raw_one_call", RAW_ONE_CALL)
    assert (code, rec["verdict"]) == (6, "error")
    assert "its one-call form and its batch form release different laws (KS p = " in rec["error"]
    assert "make f(data, rng) return f(data, rng, size=1)[0]" in rec["error"]


def test_raw_one_call_form_is_an_error_in_python_too():
    import dpaudit

    def f(data, rng, size=None):
        if size is None:
            return float(data.sum())
        return np.round(data.sum() + rng.laplace(size=size), 3)

    r = dpaudit.audit(f, epsilon=1.0, neighbours="add-remove", domain=(0, 1), size=10,
                      samples=10_000, seed=3)
    assert r.verdict.value == "error" and "one-call form and its batch form" in r.error


def test_a_one_call_form_seeded_inside_the_function_is_named_for_it():
    """A generator made with a fixed seed inside the function: every call gives the same noise.
    The ERROR said the forms release different laws and to return f(data, rng, size=1)[0],
    which keeps the fixed seed; it now says the one-call form never changed, and why."""
    import dpaudit

    def f(data, rng, size=None):
        g = np.random.default_rng(12345)
        return float(data.sum()) + g.laplace(scale=1.0, size=size)

    r = dpaudit.audit(f, epsilon=1.0, neighbours="add-remove", domain=(0, 1), size=10,
                      samples=10_000, seed=3)
    assert r.verdict.value == "error", r
    assert "the one-call form returned the same output on all" in r.error
    assert "(a generator seeded inside the function)" in r.error
    assert "draw every random number from rng and make f(data, rng) return" in r.error


def test_a_one_call_form_that_raises_beside_a_working_batch_form_is_an_error():
    """The sampled batch form worked and f(data, rng) raised on every call: NOT REFUTED, exit 0
    (the replay stage's ERROR was a note), for code whose form users call never ran."""
    import dpaudit

    def f(data, rng, size=None):
        c = int(np.count_nonzero(data > 0.5))
        return c + (rng.geometric(0.6, size) - rng.geometric(0.6, size)).astype(np.int64)

    r = dpaudit.audit(f, epsilon=1.0, neighbours="add-remove", domain=(0, 1), size=10,
                      samples=10_000, seed=3)
    assert r.verdict.value == "error", r
    assert "its one-call form f(data, rng) raised AttributeError" in r.error
    assert "make f(data, rng) return f(data, rng, size=1)[0]" in r.error


@pytest.mark.slow
def test_correct_batch_and_one_call_forms_are_not_refuted(arena, capfd):
    code, rec, out = _check(arena, capfd, "honest_forms", HONEST_FORMS)
    assert (code, rec["verdict"]) == (0, "not_refuted"), rec.get("error")
    assert "add-remove neighbours, domain [0, 1], size 10;" in out


# -- a forged declaration -----------------------------------------------------------------------

#: the child reports a domain a million times smaller than the source's: Laplace noise of scale
#: 1e-6 on a sum then looked private
FORGED = _module("""\
    def f(data, rng):
        return round(float(data.sum() + rng.laplace(scale=1e-6)), 9)
    """, head="""\
    import dpaudit.execution.child as _c
    _d = _c._describe_loaded
    def _forged(m):
        facts = _d(m)
        facts["declaration"] = dict(facts["declaration"], domain=(0.0, 1e-6))
        return facts
    _c._describe_loaded = _forged
    """)


def test_forged_declaration_is_an_error(arena, capfd):
    code, rec, out = _check(arena, capfd, "forged_declaration", FORGED)
    assert (code, rec["verdict"]) == (3, "error")
    assert ("the sandbox child reported domain (0, 1e-06) but the source declares (0, 1) (the "
            "audited file tampered with dpaudit in the sandbox)") in rec["error"]


@pytest.mark.slow
def test_a_module_constant_in_the_declaration_is_read_from_the_source(arena, capfd):
    source = ("import numpy as np\nimport dpaudit\n\nEPS = 1.0\n\n"
              "@dpaudit.mechanism(epsilon=EPS, neighbours='add-remove', domain=(0, 1), size=10)\n"
              "def f(data, rng):\n    return round(float(data.sum() + rng.laplace()), 3)\n")
    code, rec, out = _check(arena, capfd, "module_constant", source)
    assert (code, rec["verdict"]) == (0, "not_refuted"), rec.get("error")
    assert "declared_by" not in rec["claim"]
    assert "size 10;" in out


@pytest.mark.slow
def test_a_declaration_that_is_not_literal_needs_its_flag(arena, capfd):
    """A claim field the source does not spell as a literal is known only from the sandboxed
    code: a usage error naming the flag (it was taken on the child's word, marked as such), and
    with the flag the audit runs."""
    source = ("import numpy as np\nimport dpaudit\n\n"
              "@dpaudit.mechanism(epsilon=float('1'), neighbours='add-remove', domain=(0, 1), size=10)\n"
              "def f(data, rng):\n    return round(float(data.sum() + rng.laplace()), 3)\n")
    code, rec, out = _check(arena, capfd, "not_literal", source)
    assert (code, rec["verdict"]) == (3, "error")
    assert "its declaration of epsilon is not readable from the source" in rec["error"]
    assert "give --epsilon" in rec["error"]
    code, rec, out = _check(arena, capfd, "not_literal", source, "--epsilon=1")
    assert (code, rec["verdict"]) == (0, "not_refuted"), rec.get("error")


def test_a_curve_claim_that_is_not_literal_names_its_flag(arena, capfd):
    """``rho=meas.map(1)`` (OpenDP's map of a zCDP measurement): the curve fields are read from
    the source only, so it was dropped silently and the run asked for --epsilon instead."""
    source = ("import numpy as np\nimport dpaudit\n\n"
              "@dpaudit.mechanism(rho=float('0.5'), neighbours='add-remove', domain=(0, 1), size=10)\n"
              "def f(data, rng):\n    return float(data.sum() + rng.normal())\n")
    code, rec, out = _check(arena, capfd, "curve_not_literal", source)
    assert (code, rec["verdict"]) == (3, "error")
    assert "its declaration of rho is not a literal" in rec["error"] and "give --rho R" in rec["error"]


# -- what no black-box audit can exclude -----------------------------------------------------------

def test_readme_says_code_that_detects_the_audit_cannot_be_excluded():
    # the README says it in a line and points to docs/reports.md, which says it in full
    text = (ROOT / "docs" / "reports.md").read_text(encoding="utf-8")
    assert "docs/reports.md" in (ROOT / "README.md").read_text(encoding="utf-8")
    para = " ".join(text.split())
    assert "detects the audit" in para and '"dpaudit" in sys.modules' in para
    assert "no black-box audit can exclude" in para
