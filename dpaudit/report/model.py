"""The run model: one JSON-ready dict that every report (JSON, HTML, JUnit, SARIF) is rendered from.

A *run* is what one ``dpaudit check`` or ``dpaudit audit`` produced (docs/reports.md)::

    {"format_version", "tool_version", "seed", "started", "finished", "command",
     "environment": {"python", "numpy", "scipy", "statsmodels", "hypothesis", "z3", "platform"},
     "git_commit", "audited_files": [{"path", "sha256"}, ...],
     "summary": {verdict: count, ..., "controls", "mismatches"}, "results": [record, ...]}

Each record is a result's ``to_record()`` (the common keys of :mod:`dpaudit.results`: ``kind``,
``target``, ``verdict``, ``elapsed_s``, ``reproduce``, ``error``, plus its kind's own keys). Records
of the audit suite also carry ``id`` and ``expected``; any record may carry ``location``
(``{"path": ..., "line": ...}``, the mechanism's source, used by SARIF). Reports are pure
functions of this dict (build the model, then render it).

``audited_files`` pins what was audited: the SHA-256 of each file a record names (its ``location``
path, else the file part of a ``FILE.py:FUNCTION`` target), read when the run is made, so a
reviewer can tell whether the code in front of them is the code the verdicts are about.

Only ``started``, ``finished``, ``elapsed_s`` (and the environment) vary between two runs with the
same seed; :func:`stable_view` drops them, so reproducibility is checked by comparing stable views.
"""

from __future__ import annotations

import datetime as _dt
import math
import os
import platform
import shlex
import subprocess
from typing import Any, Iterable, Mapping, Optional, Sequence

from dpaudit.errors import InvalidArgument
from dpaudit.results import FORMAT_VERSION, Verdict, jsonable

__all__ = ["make_run", "record_of", "summarise", "environment", "git_commit", "timestamp",
           "stable_view", "check_run", "VOLATILE_KEYS", "matches_expected", "relative_path",
           "location", "audited_files", "audited_path", "sha256_of"]

#: Keys whose values change from run to run even with the same seed (times and the machine).
VOLATILE_KEYS = frozenset({"started", "finished", "elapsed_s", "environment", "git_commit",
                           "tool_version", "command", "solver_time_s", "time_s", "seconds"})

#: Distributions whose versions a reviewer needs to rerun a run (import name -> distribution).
_PACKAGES = {"numpy": "numpy", "scipy": "scipy", "statsmodels": "statsmodels",
             "hypothesis": "hypothesis", "z3": "z3-solver"}


def timestamp(when: Any = None) -> str:
    """An ISO 8601 UTC timestamp (``2026-11-22T07:00:00Z``) from a datetime, a POSIX time, an ISO
    string (kept as given) or ``None`` (now)."""
    if when is None:
        when = _dt.datetime.now(_dt.timezone.utc)
    if isinstance(when, str):
        return when
    if isinstance(when, (int, float)) and not isinstance(when, bool):
        when = _dt.datetime.fromtimestamp(float(when), _dt.timezone.utc)
    if isinstance(when, _dt.datetime):
        if when.tzinfo is None:
            when = when.replace(tzinfo=_dt.timezone.utc)
        return when.astimezone(_dt.timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
    raise InvalidArgument.bad("started/finished", when, "a datetime, a POSIX time or an ISO string")


#: the DP libraries whose version a reviewer needs beside a verdict on code that calls them
_LIBRARIES = {"opendp": "opendp", "diffprivlib": "diffprivlib", "python-dp": "python-dp",
              "dp-accounting": "dp-accounting"}


def environment() -> dict:
    """Versions of Python and of the numeric stack, and the platform (read from package metadata,
    so nothing heavy is imported)."""
    from importlib import metadata

    env = {"python": platform.python_version()}
    for key, dist in _PACKAGES.items():
        try:
            env[key] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            env[key] = None
    for key, dist in _LIBRARIES.items():  # the DP library a target may call: only where installed
        try:
            env[key] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            pass
    env["platform"] = platform.platform()
    return env


def git_commit(cwd: Optional[str] = None) -> Optional[str]:
    """The commit checked out in ``cwd`` (the current directory by default), or None when there is
    no git or no repository. A ``+dirty`` suffix marks uncommitted changes to tracked files."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True,
                              text=True, timeout=5)
        if head.returncode != 0:
            return None
        commit = head.stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=cwd,
                               capture_output=True, text=True, timeout=5)
        return commit + ("+dirty" if dirty.returncode == 0 and dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None


def record_of(result: Any) -> dict:
    """A result object (anything with ``to_record()``) or a record dict, as a JSON-ready record.

    The common keys are checked: a record without ``kind``, ``target`` or a valid ``verdict``
    cannot be reported and raises :class:`InvalidArgument`.
    """
    rec = jsonable(result)
    if not isinstance(rec, dict):
        raise InvalidArgument.bad("record", result, "a result with to_record() or a dict")
    for key in ("kind", "target", "verdict"):
        if key not in rec:
            raise InvalidArgument(f"record must have a {key!r} key, got keys {sorted(rec)}")
    try:
        Verdict(rec["verdict"])
    except ValueError:
        allowed = ", ".join(v.value for v in Verdict)
        raise InvalidArgument.bad("record verdict", rec["verdict"], f"one of {allowed}") from None
    for key, default in (("elapsed_s", None), ("reproduce", ""), ("error", None)):
        rec.setdefault(key, default)
    from dpaudit.report.provenance import sandboxed

    if sandboxed(rec) is not None:  # derived from the isolation, never taken as given
        rec["sandboxed"] = sandboxed(rec)
    return rec


def matches_expected(record: Mapping[str, Any]) -> Optional[bool]:
    """For a record with an ``expected`` verdict (a suite control): does the verdict equal it?
    None when the record has no expectation."""
    expected = record.get("expected")
    if expected is None:
        return None
    return record.get("verdict") == expected


def summarise(records: Sequence[Mapping[str, Any]]) -> dict:
    """Counts per verdict, the worst verdict, and how many expectations were met / missed."""
    counts = {v.value: 0 for v in Verdict}
    for r in records:
        counts[r["verdict"]] += 1
    worst = max((Verdict(r["verdict"]) for r in records), key=lambda v: v.severity, default=None)
    checked = [m for m in (matches_expected(r) for r in records) if m is not None]
    return {"total": len(records), "verdicts": counts,
            "worst": None if worst is None else worst.value,
            "with_expected": len(checked), "mismatches": sum(1 for m in checked if not m)}


def audited_path(rec: Mapping[str, Any]) -> Optional[str]:
    """The file a record is about: its ``location`` path, else the ``FILE.py`` of a
    ``FILE.py:FUNCTION`` (or ``FILE.py``) target; None when it names no file."""
    loc = rec.get("location")
    if isinstance(loc, Mapping) and isinstance(loc.get("path"), str) and loc["path"]:
        return loc["path"]
    target = rec.get("target")
    if not isinstance(target, str) or not target:
        return None
    path = target.rpartition(":")[0] if ":" in target and not target.endswith(".py") else target
    return path if path.endswith(".py") else None


def sha256_of(path: str) -> str:
    """The SHA-256 of a file's bytes (hex); OSError when it cannot be read."""
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def audited_files(records: Iterable[Mapping[str, Any]]) -> list[dict]:
    """``[{"path", "sha256"}]`` for each file the records name (:func:`audited_path`), once each in
    first-seen order; a file that cannot be read has ``"sha256": None`` and an ``"error"``."""
    out: list[dict] = []
    seen: set[str] = set()
    for rec in records:
        path = audited_path(rec)
        if path is None or path in seen:
            continue
        seen.add(path)
        try:
            out.append({"path": path, "sha256": sha256_of(path)})
        except OSError as exc:
            out.append({"path": path, "sha256": None,
                        "error": "not found" if isinstance(exc, FileNotFoundError) else (exc.strerror or str(exc))})
    return out


def _command_text(command: Any) -> str:
    if command is None:
        return ""
    if isinstance(command, str):
        return command
    return shlex.join(str(c) for c in command)


def make_run(records: Iterable[Any], *, seed: Optional[int], started: Any, finished: Any,
             command: Any, git: bool = True, fail_on_inconclusive: bool = False) -> dict:
    """The canonical run dict (module docstring) from results or records.

    ``records``: result objects with ``to_record()`` or record dicts; ``seed``: the root seed;
    ``started``/``finished``: datetimes, POSIX times or ISO strings; ``command``: the command line
    (a string or an argv list). ``git=False`` skips the git lookup (tests, foreign folders).
    """
    recs = [record_of(r) for r in records]
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise InvalidArgument.bad("seed", seed, "an integer >= 0 or None")
    from dpaudit import __version__

    gate = {"fail_on_inconclusive": True} if fail_on_inconclusive else {}
    return {
        **gate,
        "format_version": FORMAT_VERSION,
        "tool_version": __version__,
        "seed": seed,
        "started": timestamp(started),
        "finished": timestamp(finished),
        "command": _command_text(command),
        "environment": environment(),
        "git_commit": git_commit() if git else None,
        "audited_files": audited_files(recs),
        "summary": summarise(recs),
        "results": recs,
    }


def check_run(run: Any, source: str = "run") -> dict:
    """Validate a run dict read back from JSON: a mapping with a compatible ``format_version``
    (same major version) and a list of valid records. Raises :class:`InvalidArgument` naming
    ``source`` and what is wrong."""
    if not isinstance(run, Mapping):
        raise InvalidArgument(f"{source}: not a dpaudit result (expected a JSON object)")
    version = run.get("format_version")
    if not isinstance(version, str):
        raise InvalidArgument(f"{source}: not a dpaudit result (no format_version)")
    if version.split(".")[0] != FORMAT_VERSION.split(".")[0]:
        raise InvalidArgument(f"{source}: format_version {version!r} is not readable by this "
                              f"dpaudit (reads {FORMAT_VERSION.split('.')[0]}.x)")
    results = run.get("results")
    if not isinstance(results, list):
        raise InvalidArgument(f"{source}: 'results' must be a list")
    try:
        recs = [record_of(r) for r in results]
    except InvalidArgument as exc:
        raise InvalidArgument(f"{source}: {exc}") from None
    out = dict(run)
    out["results"] = recs
    out["summary"] = summarise(recs)
    out.setdefault("environment", {})
    for key in ("seed", "started", "finished", "command", "git_commit", "tool_version"):
        out.setdefault(key, None)
    return out


def stable_view(run: Any) -> Any:
    """``run`` without the keys that vary between runs with the same seed (:data:`VOLATILE_KEYS`),
    recursively: two runs reproduce each other iff their stable views are equal."""
    if isinstance(run, Mapping):
        return {k: stable_view(v) for k, v in run.items() if k not in VOLATILE_KEYS}
    if isinstance(run, list):
        return [stable_view(v) for v in run]
    return run


#: Tolerances within which two runs with one seed agree across machines: the same verdicts and
#: strings, and every number to about 12 significant digits (``abs`` covers floating-point noise
#: around a true 0, e.g. an exact δ of 7e-17 on one CPU and 6.9e-17 on another).
REPRODUCE_REL_TOL = 1e-9
REPRODUCE_ABS_TOL = 1e-12


def differences(a: Any, b: Any, rel_tol: float = REPRODUCE_REL_TOL, abs_tol: float = REPRODUCE_ABS_TOL,
                path: str = "") -> list[str]:
    """Where the stable views of two records differ: a list of ``path: a != b`` lines, empty when
    they reproduce each other. Floats compare with ``math.isclose(rel_tol, abs_tol)`` (libm and
    BLAS may round the last bits differently on another CPU); everything else compares exactly."""
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        a, b = stable_view(a), stable_view(b)
        keys = sorted(set(a) | set(b), key=str)
        return [d for k in keys for d in differences(a.get(k, _MISSING), b.get(k, _MISSING),
                                                     rel_tol, abs_tol, f"{path}.{k}" if path else str(k))]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, rel_tol, abs_tol, f"{path}[{i}]")]
    if (isinstance(a, float) or isinstance(b, float)) and isinstance(a, (int, float)) \
            and isinstance(b, (int, float)) and not isinstance(a, bool) and not isinstance(b, bool):
        if a == b or math.isclose(a, b, rel_tol=rel_tol, abs_tol=abs_tol):
            return []
    elif a == b:
        return []
    return [f"{path}: {a!r} != {b!r}"]


_MISSING = "<missing>"


def relative_path(path: str, base: Optional[str] = None) -> str:
    """``path`` relative to ``base`` (the current directory) when it lies inside it, with ``/``
    separators, so recorded locations do not depend on where the repository was cloned."""
    base = os.path.abspath(base or os.getcwd())
    full = os.path.abspath(path)
    try:
        rel = os.path.relpath(full, base)
    except ValueError:  # another drive on Windows
        return full.replace(os.sep, "/")
    if rel.startswith(".."):
        return full.replace(os.sep, "/")
    return rel.replace(os.sep, "/")


def location(source: Any) -> Optional[dict]:
    """A record's ``location`` from a spec's ``source`` ``(path, line)`` (or None): the path made
    relative to the current directory (:func:`relative_path`)."""
    if not source:
        return None
    path, line = source
    return {"path": relative_path(str(path)), "line": int(line) if line else 1}
