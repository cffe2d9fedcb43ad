"""Cheats that passed the audit with exit 0 and must not: noise from a generator dpaudit did not
hand over (seeded at import from the process id or the clock), noise that becomes the same in every
process after the first releases, and membership released in the output's type. Each ends ERROR or
REFUTED; the legitimate mechanisms beside them (a generator spawned or seeded from the rng given, a
diffprivlib tool, a mechanism that always returns numpy float64) keep their verdicts. Runs through
the sandboxed ``dpaudit check`` with the ``arena`` of test_hostile.py, except where the check is
the same in process (the replay audit, the sampled audit, the encoder).
"""

from __future__ import annotations

import re
from textwrap import dedent

import numpy as np
import pytest

from .test_cheating import _check
from .test_hostile import arena  # noqa: F401

CLAIM = "@dpaudit.mechanism(epsilon=1, neighbours='add-remove', domain=(0, 1), size=10)\n"


def _module(head: str, body: str, imports: str = "") -> str:
    """A mechanism file: imports, ``head`` at import time, then ``f`` declared with the claim."""
    return ("import os, random, time\nimport numpy as np\nimport dpaudit\n" + dedent(imports)
            + dedent(head) + "\n\n" + CLAIM + dedent(body))


def _line(source: str, fragment: str) -> int:
    """The 1-based line of ``source`` holding ``fragment``."""
    return next(k for k, text in enumerate(source.splitlines(), 1) if fragment in text)


# -- noise from a generator dpaudit did not hand over ---------------------------------------------

OUTSIDE = {
    # a generator seeded at import from the process id: ~22 bits, the same in every run of a pid
    "pid": ("_g = np.random.default_rng(os.getpid())", """\
        def f(data, rng):
            return round(float(data.sum() + _g.laplace()), 3)
        """, "_g.laplace()", "process id"),
    # ... or from the clock
    "clock": ("_g = np.random.default_rng(time.time_ns())", """\
        def f(data, rng):
            return round(float(data.sum() + _g.laplace()), 3)
        """, "_g.laplace()", "clock"),
    # numpy's legacy global functions, seeded from the pid
    "numpy_global": ("np.random.seed(os.getpid() % 2**32)", """\
        def f(data, rng):
            return round(float(data.sum() + np.random.laplace()), 3)
        """, "np.random.laplace()", "process id"),
    # the random module
    "random_module": ("random.seed(os.getpid())", """\
        def f(data, rng):
            noise = random.expovariate(1.0) - random.expovariate(1.0)
            return round(float(data.sum() + noise), 3)
        """, "random.expovariate", "process id"),
    # a Generator built by hand on a PCG64
    "by_hand": ("_g = np.random.Generator(np.random.PCG64(int(time.time())))", """\
        def f(data, rng):
            return round(float(data.sum() + _g.laplace()), 3)
        """, "_g.laplace()", "clock"),
}


@pytest.mark.parametrize("name", sorted(OUTSIDE))
def test_noise_from_a_generator_not_handed_over_is_an_error_in_python(name, tmp_path):
    """The replay audit sees the draw and says where the generator was made and how it was seeded
    (was: a ``no_noise_intercepted`` limit, and NOT REFUTED by the sampling)."""
    import dpaudit.replay

    head, body, draw, seeded = OUTSIDE[name]
    source = _module(head, body)
    space: dict = {"__name__": f"cheat_{name}", "__file__": f"/nonexistent/cheat_{name}.py"}
    path = _write(tmp_path, name, source)
    space["__file__"] = str(path)
    exec(compile(source, str(path), "exec"), space)
    r = dpaudit.replay.replay_audit(space["f"], seed=3)
    assert r.verdict.value == "error", (r.verdict, r.findings)
    assert "a generator dpaudit did not hand over" in r.error
    assert f"{path.name}:{_line(source, draw)}" in r.error, r.error
    assert f"{path.name}:{_line(source, head.split('(')[0])}" in r.error, r.error
    assert seeded in r.error, r.error
    assert "\n" not in r.error


def _write(folder, name: str, source: str):
    """Write the module into the test's own temporary folder (pytest removes it)."""
    path = folder / f"cheat_{name}.py"
    path.write_text(source)
    return path


@pytest.mark.slow
@pytest.mark.parametrize("name", ["pid", "numpy_global"])
def test_noise_from_a_generator_not_handed_over_is_an_error_of_dpaudit_check(arena, capfd, name):
    """The replay stage runs before the sampling: its ERROR makes the target ERROR (exit 6), whatever
    the sampling says after it."""
    head, body, draw, seeded = OUTSIDE[name]
    source = _module(head, body)
    code, rec, out = _check(arena, capfd, f"outside_{name}", source)
    assert (code, rec["verdict"]) == (6, "error"), (rec.get("error"), rec.get("replay", {}).get("error"))
    assert "a generator dpaudit did not hand over" in rec["error"]
    assert f":{_line(source, draw)}" in rec["error"] and seeded in rec["error"]
    assert "ERROR" in out
    assert "stays valid" not in rec["reproduce"]  # an ERROR has no bound (the sampling's note was kept)


def test_noise_from_a_generator_not_handed_over_is_an_error_with_replay_alone(arena, capfd):
    head, body, _, _ = OUTSIDE["clock"]
    code, rec, _ = _check(arena, capfd, "outside_clock_replay", _module(head, body), "--replay")
    assert (code, rec["verdict"]) == (6, "error"), rec.get("error")
    assert "seeded at import from the clock" in rec["error"]


DERIVED = {
    # a child generator spawned from the rng given
    "spawned": """\
        def f(data, rng):
            (child,) = rng.spawn(1)
            return round(float(data.sum() + child.laplace()), 3)
        """,
    # a generator seeded from the rng's own draws is derived from it
    "seeded_from_rng": """\
        def f(data, rng):
            g = np.random.default_rng(rng.integers(2**63))
            return round(float(data.sum() + g.laplace()), 3)
        """,
    # numpy's global state reseeded from the rng at every call: derived too (if unwise)
    "global_reseeded_from_rng": """\
        def f(data, rng):
            np.random.seed(int(rng.integers(2**32)))
            return round(float(data.sum() + np.random.laplace()), 3)
        """,
    # a legacy RandomState on the rng's bit generator (what dpaudit's diffprivlib adapter does)
    "random_state_on_bits": """\
        def f(data, rng):
            return round(float(data.sum() + np.random.RandomState(rng.bit_generator).laplace()), 3)
        """,
}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in ("global_reseeded_from_rng", "spawned") else n
                                  for n in sorted(DERIVED)])
def test_generators_derived_from_the_rng_are_not_flagged(name, tmp_path):
    import dpaudit.replay

    source = _module("", DERIVED[name])
    path = _write(tmp_path, f"derived_{name}", source)
    space: dict = {"__name__": f"derived_{name}", "__file__": str(path)}
    exec(compile(source, str(path), "exec"), space)
    r = dpaudit.replay.replay_audit(space["f"], seed=3)
    assert r.verdict.value != "error", r.error
    assert "did not hand over" not in str([f.message for f in r.findings])


def test_own_randomness_from_os_entropy_is_not_flagged(tmp_path):
    """``def f(data)`` draws its own randomness (the contract allows it): a generator seeded from
    the OS's entropy is not a cheat; the sampling audits it."""
    import dpaudit.replay

    source = _module("_g = np.random.default_rng()", """\
        def f(data):
            return round(float(data.sum() + _g.laplace()), 3)
        """)
    path = _write(tmp_path, "own_entropy", source)
    space: dict = {"__name__": "own_entropy", "__file__": str(path)}
    exec(compile(source, str(path), "exec"), space)
    r = dpaudit.replay.replay_audit(space["f"], seed=3)
    assert r.verdict.value != "error", r.error


def test_own_randomness_seeded_from_the_pid_is_an_error(tmp_path):
    """... but seeded from the process id it is the same in every run of that pid."""
    import dpaudit.replay

    source = _module("_g = np.random.default_rng(os.getpid())", """\
        def f(data):
            return round(float(data.sum() + _g.laplace()), 3)
        """)
    path = _write(tmp_path, "own_pid", source)
    space: dict = {"__name__": "own_pid", "__file__": str(path)}
    exec(compile(source, str(path), "exec"), space)
    r = dpaudit.replay.replay_audit(space["f"], seed=3)
    assert r.verdict.value == "error" and "process id" in r.error, (r.verdict, r.error)


@pytest.mark.slow
@pytest.mark.parametrize("target", [
    "lib:diffprivlib:tools.mean(epsilon=1, bounds=(0, 1))",
    "lib:diffprivlib:mechanisms.Laplace(epsilon=1, sensitivity=1)",
])
def test_library_targets_are_not_flagged(arena, capfd, target):
    """diffprivlib draws from ``secrets`` or from the RandomState dpaudit's adapter builds on the
    rng's bit generator: neither is a generator dpaudit did not hand over."""
    pytest.importorskip("diffprivlib")
    from dpaudit.cli import run

    code = run(["check", target, "--samples=2000", "--quiet", "--timeout=60"])
    out, err = capfd.readouterr()
    assert "did not hand over" not in out + err
    assert code in (0, 1, 2), out + err


# -- noise fixed after the first releases ---------------------------------------------------------

#: the first 1,000 releases of a process use the rng given; every later one the same sequence in
#: every process (a generator seeded with a constant): sum + a number an attacker knows
LATE_FIXED = _module("""\
    _g = np.random.default_rng(7)
    _calls = [0]
    """, """\
    def f(data, rng):
        _calls[0] += 1
        noise = rng.laplace() if _calls[0] <= 1000 else _g.laplace()
        return round(float(data.sum() + noise), 3)
    """)


@pytest.mark.slow
def test_noise_fixed_after_the_first_releases_is_an_error(arena, capfd):
    """The first outputs compared between processes were the first 64 to 128: noise that changes
    source after them passed (NOT REFUTED). The reproducibility of the outputs on the seed is now
    checked at positions spread over the whole run."""
    code, rec, out = _check(arena, capfd, "late_fixed", LATE_FIXED, "--samples=20000")
    assert (code, rec["verdict"]) == (6, "error"), (rec["verdict"], rec.get("error"))
    assert "stopped being a function of the rng" in rec["error"], rec["error"]
    found = re.search(r"between releases ([\d,]+) and ([\d,]+) of the audit", rec["error"])
    assert found and int(found.group(2).replace(",", "")) <= 20_000, rec["error"]


def test_noise_fixed_after_the_first_releases_is_an_error_in_python():
    import dpaudit

    state = {"calls": 0}
    fixed = np.random.default_rng(7)

    def f(data, rng):
        state["calls"] += 1
        noise = rng.laplace() if state["calls"] <= 1000 else fixed.laplace()
        return round(float(data.sum() + noise), 3)

    r = dpaudit.audit(f, epsilon=1.0, neighbours="add-remove", domain=(0, 1), size=10,
                      samples=20_000, seed=3)
    assert r.verdict.value == "error", (r.verdict, r.error)
    assert "stopped being a function of the rng" in r.error


def test_a_reproducible_mechanism_passes_the_checkpoints():
    import dpaudit

    def f(data, rng):
        return round(float(data.sum() + rng.laplace()), 3)

    r = dpaudit.audit(f, epsilon=1.0, neighbours="add-remove", domain=(0, 1), size=10,
                      samples=20_000, seed=3)
    assert r.verdict.value == "not_refuted", (r.verdict, r.error)


# -- membership in the output's type --------------------------------------------------------------

#: each releases the same noisy value on D and on D′, but in another observable form (α = 0.05
#: of the audit, seed 3)
TYPE_LEAKS = {
    "int_or_float": """\
        def f(data, rng):
            y = int(round(float(data.sum() + rng.laplace(scale=50.0))))
            return y if len(data) == 10 else float(y)
        """,
    "numpy_scalar_or_float": """\
        def f(data, rng):
            y = np.float64(round(float(data.sum() + rng.laplace(scale=50.0)), 2))
            return y if len(data) == 10 else float(y)
        """,
    "tuple_or_list": """\
        def f(data, rng):
            y = (round(float(data.sum() + rng.laplace(scale=50.0)), 2), 1.0)
            return y if len(data) == 10 else list(y)
        """,
    "dict_key_order": """\
        def f(data, rng):
            a, b = np.round(rng.laplace(scale=50.0, size=2), 2).tolist()
            return {"a": a, "b": b} if len(data) == 10 else {"b": b, "a": a}
        """,
    "dtype": """\
        def f(data, rng):
            y = np.round(data.sum() + rng.laplace(scale=50.0, size=2))  # whole numbers: exact in float32
            return y if len(data) == 10 else y.astype(np.float32)
        """,
    "shape": """\
        def f(data, rng):
            y = np.round(data.sum() + rng.laplace(scale=50.0, size=4), 2)
            return y.reshape(2, 2) if len(data) == 10 else y.reshape(4, 1)
        """,
}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in ("dict_key_order", "dtype", "shape", "tuple_or_list") else n
                                  for n in sorted(TYPE_LEAKS)])
def test_membership_released_in_the_type_is_refuted(name):
    """The value is noisier than the claim needs (scale 50); only its type tells D from D′ (was NOT
    REFUTED: 3 and 3.0 were one value)."""
    import dpaudit

    space: dict = {"np": np}
    exec(dedent(TYPE_LEAKS[name]), space)
    r = dpaudit.audit(space["f"], epsilon=1.0, neighbours="add-remove", domain=(0, 1), size=10,
                      samples=20_000, seed=3)
    assert r.verdict.value == "refuted", (r.verdict, r.error)


@pytest.mark.slow
def test_membership_released_in_the_type_is_refuted_by_dpaudit_check(arena, capfd):
    code, rec, _ = _check(arena, capfd, "type_leak", _module("", TYPE_LEAKS["int_or_float"]),
                          "--samples=20000")
    assert (code, rec["verdict"]) == (1, "refuted"), (rec["verdict"], rec.get("error"))


def test_one_form_audits_as_before():
    """A mechanism that always returns numpy float64 is encoded exactly as its values; a batch
    array of float64 too (the fast path), and a clamp that returns a Python float at its ends
    keeps its values at the other outputs."""
    from dpaudit.outputs import OutputEncoder

    rng = np.random.default_rng(20250601)
    values = rng.laplace(size=1000)
    enc = OutputEncoder()
    assert np.array_equal(enc.encode([np.float64(v) for v in values], None), values)
    assert np.array_equal(enc.encode(values, None), values)
    # a value and another of another type: two outputs, never one
    enc = OutputEncoder()
    a = enc.encode([3.0, 2.5, 3], None)
    assert a[0] != a[2] or np.isnan(a[0]) != np.isnan(a[2])
    assert a[1] == 2.5


def test_categories_keep_their_type():
    from dpaudit.outputs import OutputEncoder
    from dpaudit.spec import OutputKind

    # 1 and numpy's 1 compare equal and hash alike: as categories they were one atom
    enc = OutputEncoder(OutputKind.DISCRETE)
    codes = enc.encode(["x", 1, np.int64(1), 1, "y"], None)
    assert codes.tolist() == [0.0, 1.0, 3.0, 1.0, 2.0]
