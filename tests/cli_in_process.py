"""``dpaudit`` run through its entry point inside the test's own process.

Most command-line tests are about flags, reports and messages, not about the process boundary. A
``python -m dpaudit`` subprocess costs each of them the interpreter's start and dpaudit's imports
(about 1.5 CPU s, most of a small check), which the test worker has already paid. This runs
:func:`dpaudit.cli.run` (what ``python -m dpaudit`` runs, less the final ``SystemExit``) with the
working folder, environment, ``sys.stdout`` and ``sys.stderr`` of a fresh process and gives back
what ``subprocess.run(..., capture_output=True, text=True)`` would: the exit code and both texts.
The sandboxed target still runs in its own child process. Tests of the process itself (signals,
closed stdout, the installed script, what a child prints to the terminal) keep their subprocess.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys


def dpaudit(*args, cwd=None, env=None) -> subprocess.CompletedProcess:
    """``dpaudit ARGS`` in this process, as ``subprocess.run([python, -m, dpaudit, *ARGS],
    cwd=cwd, env=os.environ | {CI: 1} | env, capture_output=True, text=True)`` would give it."""
    from dpaudit.cli import run

    argv = [str(a) for a in args]
    out, err = io.StringIO(), io.StringIO()
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    saved_path, saved_hook = list(sys.path), sys.unraisablehook
    try:
        os.environ.update({"CI": "1", **{k: str(v) for k, v in (env or {}).items()}})
        if cwd is not None:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = int(run(argv))
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        sys.path[:] = saved_path
        sys.unraisablehook = saved_hook
    return subprocess.CompletedProcess([sys.executable, "-m", "dpaudit", *argv], code,
                                       out.getvalue(), err.getvalue())


def dpaudit_process(*args, cwd=None, env=None, timeout=300) -> subprocess.CompletedProcess:
    """``python -m dpaudit ARGS`` in a fresh process (environment as :func:`dpaudit`'s): for the
    tests whose subject is the process, or that change a file between two runs (this process
    keeps a file it imported: :func:`dpaudit.loader.import_file` caches by path)."""
    return subprocess.run([sys.executable, "-m", "dpaudit", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "CI": "1", **{k: str(v) for k, v in (env or {}).items()}})
