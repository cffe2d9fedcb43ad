"""A sandboxed mechanism must not run code in dpaudit's own process through what it sends back.

``pickle.loads`` runs whatever callable a pickle names, so a child reply read with it was a way out
of the sandbox: a mechanism that wrote a crafted pickle naming ``os.system`` to its reply pipe, or
returned an object whose ``__reduce__`` names it, ran that command in dpaudit's process (found by
a probe: the marker file was created). dpaudit now reads replies with a restricted unpickler
(dpaudit/execution/safe_pickle.py), and the child sends values of unknown classes as their name
and repr (dpaudit/execution/described.py).
"""

from __future__ import annotations

import pickle
from textwrap import dedent

import pytest

from dpaudit.execution import safe_pickle

FLAGS = ("--epsilon=1", "--samples=1000", "--call-timeout=5", "--timeout=60", "--quiet")


def _check(tmp_path, source: str) -> tuple[int, str]:
    from dpaudit.cli import run

    path = tmp_path / "mech.py"
    path.write_text(source)
    out = tmp_path / "r.json"
    code = run(["check", f"{path}:f", *FLAGS, f"--json={out}"])
    import json

    rec = json.loads(out.read_text())["results"][0]
    return int(code), rec


@pytest.mark.slow
def test_a_crafted_reply_written_to_the_pipe_is_refused(tmp_path):
    marker = tmp_path / "escaped"
    code, rec = _check(tmp_path, dedent(f"""\
        import os, pickle, stat, struct

        class R:
            def __reduce__(self):
                return (os.system, ("touch {marker}",))

        def f(data, rng):
            payload = pickle.dumps(("ok", [R()]))
            message = struct.pack("!i", len(payload)) + payload
            for fd in range(3, 256):  # every pipe this process can write to
                try:
                    if stat.S_ISFIFO(os.fstat(fd).st_mode):
                        os.write(fd, message)
                except OSError:
                    pass
            return 0.0
        """))
    assert not marker.exists(), "the sandboxed mechanism ran a command in dpaudit's process"
    assert (code, rec["verdict"]) == (6, "error"), rec
    assert "refused" in rec["error"] and "system" in rec["error"], rec["error"]


@pytest.mark.slow
def test_an_object_whose_reduce_names_a_command_never_runs_it(tmp_path):
    marker = tmp_path / "escaped"
    code, rec = _check(tmp_path, dedent(f"""\
        import os

        class Evil:
            def __reduce__(self):
                return (os.system, ("touch {marker}",))

        Evil.__module__ = "collections"  # not the audited file's, as far as a name tells

        def f(data, rng):
            return Evil()
        """))
    assert not marker.exists(), "the sandboxed mechanism ran a command in dpaudit's process"
    assert rec["verdict"] == "error", rec  # not a plain value (it was once audited by its repr)


@pytest.mark.parametrize("value", [
    1.5, 3, "x", None, (1, 2.0), [1, [2]], {"a": 1}, {1, 2}, frozenset({3}), 1 + 2j, b"x",
])
def test_plain_outputs_read_back_as_they_were(value):
    assert safe_pickle.loads(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)) == value


def test_numpy_and_standard_values_read_back_and_anything_else_is_refused():
    import datetime as dt
    from decimal import Decimal
    from fractions import Fraction

    import numpy as np

    # numpy values travel in dpaudit's own checked form (safe_pickle.pack; no Opaque any more:
    # plain values only); a numpy number comes back as that numpy number, never as the Python one
    # (np.float64(0.0) and 0.0 are two forms of output, and the difference carried data)
    values = [np.arange(3.0), np.longdouble(1.5), np.array(["a"]), np.datetime64("2020-01-01"),
              Decimal("1.5"), Fraction(1, 3), dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc),
              dt.timedelta(seconds=2)]
    for v in values:
        back = safe_pickle.loads(pickle.dumps(safe_pickle.pack(v), protocol=pickle.HIGHEST_PROTOCOL))
        assert type(back) is type(v) and (np.array_equal(back, v) if isinstance(v, np.ndarray) else back == v)
    for v in (np.float64(1.5), np.int8(3)):
        back = safe_pickle.loads(pickle.dumps(safe_pickle.pack(v), protocol=pickle.HIGHEST_PROTOCOL))
        assert back == v and type(back) is type(v)
    import collections

    with pytest.raises(safe_pickle.RefusedGlobal, match="posix.system|os.system"):
        import os

        safe_pickle.loads(pickle.dumps(("ok", [_Reduce(os.system, ("true",))])))
    with pytest.raises(safe_pickle.RefusedGlobal, match="collections.Counter"):
        safe_pickle.loads(pickle.dumps(collections.Counter("ab")))


class _Reduce:
    def __init__(self, func, args):
        self.func, self.args = func, args

    def __reduce__(self):
        return (self.func, self.args)
