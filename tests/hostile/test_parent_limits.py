"""dpaudit's own process stays within bounds whatever the sandbox child sends, and only plain
values are audited (docs/sandbox.md: what comes back to dpaudit).

The child runs the audited code, which can patch dpaudit's modules there and write any bytes to
the reply pipe: every bound below holds in dpaudit's process (dpaudit/execution/safe_pickle.py,
dpaudit/execution/sandbox.py, dpaudit/output_values.py). Each test failed on the code before:
a 25-byte reply made dpaudit allocate 2 GiB, texts of any length were kept, forged replies, a
thread bomb and outputs near ±1e308 ended as "internal error in dpaudit" (exit 4), and an object
or a float subclass carrying the exact sum was audited by its repr or its float: NOT REFUTED.
"""

from __future__ import annotations

import json
import os
import pickle
import resource
import subprocess
import sys
import time
from textwrap import dedent

import numpy as np
import pytest

from dpaudit.execution import safe_pickle
from .test_hostile import ROOT, arena, reports, report_flags  # noqa: F401 (arena is a fixture)

FLAGS = ("--epsilon=1", "--samples=2000", "--call-timeout=5", "--timeout=60", "--quiet")

#: write ``reply`` (a Python expression) framed as dpaudit's replies are, to the reply pipe only
#: (the child's second argument), then go on as if nothing happened
FORGE = dedent("""\
    import os, pickle, struct, sys

    def forge(reply):
        payload = reply if isinstance(reply, bytes) else pickle.dumps(reply)
        os.write(int(sys.argv[2]), struct.pack("!i", len(payload)) + payload)
    """)


def _check(arena, source: str, *extra: str) -> tuple[int, dict, str]:
    """``dpaudit check`` in this process (the mechanism in the sandbox child)."""
    from dpaudit.cli import run

    path = arena["tmp"] / "mech.py"
    path.write_text(source)
    out = arena["tmp"] / "r.json"
    code = run(["check", f"{path}:f", *FLAGS, *extra, f"--json={out}"])
    (rec,) = json.loads(out.read_text())["results"]
    return int(code), rec


def _no_traceback(capfd) -> str:
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err and "internal error" not in out + err, out + err
    assert "Warning" not in out + err, out + err  # no raw numpy warning reaches the terminal
    return out + err


# -- what a reply may allocate before it is decoded ------------------------------------------

def _global(module: str, name: str, *args_pickle: bytes) -> bytes:
    """A hand-written pickle calling ``module.name`` on the pickled arguments."""
    body = b"".join(args_pickle)
    return (b"\x80\x04\x8c" + bytes([len(module)]) + module.encode() + b"\x8c" + bytes([len(name)])
            + name.encode() + b"\x93(" + body + b"tR.")


def _arg(value) -> bytes:
    return pickle.dumps(value, protocol=4)[2:-1]  # the value's opcodes, without PROTO and STOP


@pytest.mark.parametrize("payload", [
    _global("builtins", "bytearray", _arg(1 << 31)),            # 2 GiB of zeros from 25 bytes
    # sizes that stay affordable where they are built (the code before built them)
    _global("builtins", "set", _global("builtins", "range", _arg(10 ** 7))[2:-1]),
    _global("fractions", "Fraction", _arg("1e100000")),         # a 100,000-digit integer
    _global("decimal", "Decimal", _arg("1e999999999999")),
    _global("numpy", "dtype", _arg("V2147483648")),
    _global("numpy._core.multiarray", "_reconstruct", _arg(np.ndarray), _arg((1 << 31,)), _arg(b"b")),
    _global("numpy.ma.core", "_mareconstruct", _arg(np.ma.MaskedArray), _arg(np.ndarray), _arg((1 << 20,)),
            _arg("f8")),
    _global("dpaudit.execution.safe_pickle", "array", _arg("<f8"), _arg((1 << 28,)), _arg(b"")),
    _global("dpaudit.execution.safe_pickle", "array", _arg("V8"), _arg((1,)), _arg(b"x" * 8)),
    _global("dpaudit.execution.safe_pickle", "array", _arg("(100000,100)f8"), _arg(None), _arg(b"")),
    _global("dpaudit.execution.safe_pickle", "array", _arg("|O"), _arg((1 << 30,)), _arg([0])),
], ids=["bytearray", "set-range", "fraction-exponent", "decimal-exponent", "dtype-itemsize",
        "ndarray-shape", "masked-array", "array-shape", "array-void", "array-subarray",
        "object-array"])
def test_no_reply_allocates_more_than_its_bytes(payload):
    t0 = time.monotonic()
    with pytest.raises(pickle.UnpicklingError):
        safe_pickle.loads(payload)
    assert time.monotonic() - t0 < 1.0


@pytest.mark.slow
def test_a_25_byte_reply_does_not_make_dpaudit_allocate_2_gib(arena):
    mech = arena["tmp"] / "bomb.py"
    mech.write_text(FORGE + dedent(f"""\
        def f(data, rng):
            forge({_global("builtins", "bytearray", _arg(1 << 31))!r})
            return 0.0
        """))
    paths = reports(arena["tmp"])
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    done = subprocess.run([sys.executable, "-m", "dpaudit", "check", f"{mech}:f", *FLAGS,
                           "--memory=256M", *report_flags(paths)], capture_output=True, text=True,
                          timeout=120, env=dict(os.environ, PYTHONPATH=str(ROOT)), cwd=arena["work"])
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    assert done.returncode == 6, done.stdout + done.stderr
    rec = json.loads(paths["json"].read_text())["results"][0]
    assert "builtins.bytearray (refused" in rec["error"]
    assert peak_kib < 1024 * 1024 or peak_kib == before, f"peak {peak_kib} KiB"


def test_the_reply_cap_follows_the_memory_cap(arena):
    from dpaudit.execution.sandbox import MAX_REPLY_BYTES, reply_limit

    assert MAX_REPLY_BYTES == 128 << 20 and reply_limit(None) == MAX_REPLY_BYTES
    assert reply_limit(256 << 20) == 64 << 20
    code, rec = _check(arena, FORGE + dedent("""\
        import struct, time
        def f(data, rng):
            os.write(int(sys.argv[2]), struct.pack("!i", 100 << 20))
            time.sleep(5)
        """), "--memory=256M")
    assert (code, rec["verdict"]) == (6, "error")
    assert "more than the 67,108,864 bytes (64 MiB) dpaudit reads" in rec["error"], rec["error"]


# -- forged replies ----------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("reply", [
    '("ok", 5)', '("ok", [[0.0], [0.0]])', '("error",)', *[pytest.param(r, marks=pytest.mark.slow) for r in (
        '("ok",)', '("ready", 1, "landlock", {})', '("error", None, True, 0)', '("error", 5, True, 0)',
        '("error", "x", True, 99)', '("ok_shared", "<f8", (10,))', '("value", 1.0)')],
])
def test_a_forged_reply_is_the_mechanisms_error(arena, capfd, reply):
    code, rec = _check(arena, FORGE + dedent(f"""\
        import time
        def f(data, rng):
            forge({reply})
            time.sleep(0.5)
            return 0.0
        """))
    _no_traceback(capfd)
    assert (code, rec["verdict"]) == (6, "error"), rec["error"]
    assert "malformed" in rec["error"] and "\n" not in rec["error"], rec["error"]


# -- threads -----------------------------------------------------------------------------------

@pytest.mark.slow
def test_a_thread_bomb_at_import_is_the_mechanisms_error(arena, capfd):
    code, rec = _check(arena, dedent("""\
        import threading, time
        for _ in range(20000):
            try:
                threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
            except Exception:
                break

        def f(data, rng):
            return round(float(data.sum() + rng.laplace()), 3)
        """))
    _no_traceback(capfd)
    assert (code, rec["verdict"]) == (6, "error"), rec["error"]
    assert "thread" in rec["error"], rec["error"]


# -- texts and post-call work ------------------------------------------------------------------

@pytest.mark.slow
def test_a_long_text_output_is_an_error_in_the_sandbox_and_in_process(arena, capfd):
    source = "def f(data, rng):\n    return f'{data.sum() + rng.laplace():.3f}' + 'y' * 20000\n"
    for flags in ((), ("--in-process",)):
        code, rec = _check(arena, source, *flags)
        _no_traceback(capfd)
        assert (code, rec["verdict"]) == (6, "error"), rec["error"]
        assert ("returned a text of 20,00" in rec["error"]
                and "dpaudit audits texts of at most 4,096 (an output is a release, not a log)"
                in rec["error"]), rec["error"]


@pytest.mark.slow
def test_the_text_of_a_batch_is_bounded(arena, capfd):
    code, rec = _check(arena, dedent("""\
        def f(data, rng, size=None):
            out = [f"{x:.3f}" + "y" * 4000 for x in rng.laplace(size=1 if size is None else size)]
            return out if size is not None else out[0]
        """), "--samples=100000", "--timeout=300")  # on a loaded machine 60 s ended it first
    _no_traceback(capfd)
    assert (code, rec["verdict"]) == (6, "error"), rec["error"]
    assert "characters of text in one batch" in rec["error"], rec["error"]


@pytest.mark.slow
def test_a_50_mb_repr_does_not_run_past_the_per_call_limit(arena, capfd):
    t0 = time.monotonic()
    code, rec = _check(arena, dedent("""\
        class Big:
            def __init__(self, v):
                self.v = v
            def __repr__(self):
                return "x" * 50_000_000

        def f(data, rng):
            return Big(float(data.sum() + rng.laplace()))
        """), "--call-timeout=1")
    _no_traceback(capfd)
    assert time.monotonic() - t0 < 20
    assert (code, rec["verdict"]) == (6, "error") and "not a plain value" in rec["error"]


@pytest.mark.slow
def test_post_call_work_counts_against_the_per_call_limit(arena, capfd):
    # the audited code slows the child's reply after the calls end: dpaudit's process stops it
    t0 = time.monotonic()
    code, rec = _check(arena, dedent("""\
        import time
        import dpaudit.execution.child as child

        class Slow:
            HIGHEST_PROTOCOL = 5
            def dumps(self, *args, **kwargs):
                time.sleep(1000)

        child.pickle = Slow()

        def f(data, rng):
            return round(float(data.sum() + rng.laplace()), 3)
        """), "--call-timeout=1")
    _no_traceback(capfd)
    assert time.monotonic() - t0 < 20
    assert (code, rec["verdict"]) == (3, "error") and "hung" in rec["error"], rec["error"]


# -- plain values only: the cheating mechanisms ------------------------------------------------

REPR_HIDES_THE_SUM = dedent("""\
    class Release:
        def __init__(self, noisy, exact):
            self.noisy, self.exact = noisy, exact
        def __repr__(self):
            return f"Release({self.noisy})"

    def f(data, rng):
        s = float(data.sum())
        return Release(round(s + rng.laplace(scale=100)), s)
    """)
FLOAT_CARRIES_THE_SUM = dedent("""\
    class FloatWithExact(float):
        pass

    def f(data, rng):
        s = float(data.sum())
        v = FloatWithExact(round(s + rng.laplace(), 3))
        v.exact = s
        return v
    """)


@pytest.mark.slow
@pytest.mark.parametrize("source,said", [
    pytest.param(REPR_HIDES_THE_SUM, "Release object, not a plain value", marks=pytest.mark.slow),
    (FLOAT_CARRIES_THE_SUM, "FloatWithExact, a subclass of float carrying more than its "
                            "value (attributes: exact); dpaudit audits plain values only: return "
                            "float(x)"),
], ids=["repr-hides-the-sum", "float-carries-the-sum"])
def test_a_cheating_output_is_an_error_never_not_refuted(arena, capfd, source, said):
    for flags in ((), ("--in-process",)):
        code, rec = _check(arena, source, *flags)
        _no_traceback(capfd)
        assert (code, rec["verdict"]) == (6, "error"), rec
        assert said in rec["error"], rec["error"]
    import importlib.util

    import dpaudit

    path = arena["tmp"] / "cheat_module.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("cheat_module", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["cheat_module"] = module  # its classes pickle by name, as a real module's do
    try:
        spec.loader.exec_module(module)
        result = dpaudit.audit(module.f, epsilon=1.0, samples=2000, seed=1)
    finally:
        del sys.modules["cheat_module"]
    assert result.verdict.value == "error" and said in (result.error or ""), result


# -- outputs near ±1e308 -----------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("body,exit_code", [
    ("return 1e308 if rng.random() < 0.5 else -1e308", 0),
    pytest.param("return (1e308 if rng.random() < 0.5 else -1e308, float(data.sum()))", 1, marks=pytest.mark.slow),
    pytest.param("return (-1e308, 1e308, float(data.sum()) * 1e308)", 1, marks=pytest.mark.slow),
    pytest.param("return None if rng.random() < 0.3 else (1e308 if rng.random() < 0.5 else -1e308, "
                 "float(data.sum()))", 1, marks=pytest.mark.slow),
], ids=["alone", "beside-the-sum", "sum-times-1e308", "mixed"])
def test_outputs_near_1e308_are_audited_like_1e200(arena, capfd, body, exit_code):
    # 5,000 samples reach the score fits whose overflow this guards (their old mean and standard
    # deviation fail the three refuted cases at 2,000, 5,000 and 20,000 alike), and the exact sum
    # beside the output is refuted at any of them
    code, rec = _check(arena, f"def f(data, rng):\n    {body}\n", "--samples=5000", "--seed=7")
    _no_traceback(capfd)
    assert code == exit_code, rec
    if exit_code == 1:
        assert rec["verdict"] == "refuted"
