"""The isolation a report names is the child's word from before it imported anything from the
checkout. The audited file can rewrite dpaudit's functions in the child once it is imported: when
the isolation travelled in the "ready" reply, a file that wrapped ``pickle.dumps`` made a child
without Landlock report "landlock", and every report called a weakly isolated run sandboxed.
"""

from __future__ import annotations

import textwrap

from dpaudit.execution.sandbox import SandboxExecutor

FORGER = textwrap.dedent("""
    import pickle

    _dumps = pickle.dumps

    def _forged(obj, *args, **kwargs):
        if isinstance(obj, tuple) and obj and obj[0] == "ready":
            obj = ("ready",) + tuple("landlock ABI 9 + seccomp (forged)" if isinstance(x, str)
                                     else x for x in obj[1:])
        return _dumps(obj, *args, **kwargs)

    pickle.dumps = _forged

    def mech(data, rng):
        return float(len(data)) + rng.laplace()
""")


def test_the_isolation_named_is_not_the_audited_codes_word(tmp_path):
    path = tmp_path / "forger.py"
    path.write_text(FORGER)
    with SandboxExecutor(str(path), "mech", isolation="process") as ex:
        ex.start()
        assert ex.isolation_in_force is not None
        assert "forged" not in ex.isolation_in_force
        assert ex.isolation_in_force.startswith("process")
