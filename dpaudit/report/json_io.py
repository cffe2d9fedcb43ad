"""Canonical JSON of a run: written atomically, read back and validated.

The JSON is the canonical result (DESIGN.md): HTML, JUnit and SARIF are rendered from it, and
``dpaudit report RESULT.json`` re-renders them from the file alone. It is standard JSON
(``allow_nan=False``: non-finite numbers are already the strings ``"inf"``/``"nan"``, see
:func:`dpaudit.results.jsonable`), UTF-8, indented, with keys in the model's fixed order, so the
same run always serialises to the same bytes.
"""

from __future__ import annotations

import json
import os
from typing import Any, Mapping, Optional

from dpaudit.errors import InvalidArgument, UsageError
from dpaudit.report.model import check_run

__all__ = ["dumps", "write_json", "read_json", "write_text", "unwritable", "check_report_paths"]


def dumps(run: Mapping[str, Any]) -> str:
    """The run as canonical JSON text (ends with a newline): objects indented two spaces per
    level, lists of scalars on one line (samples and curves stay compact and diffable)."""
    try:
        return _encode(run, 0) + "\n"
    except (TypeError, ValueError) as exc:
        raise InvalidArgument(f"run is not JSON-ready: {exc}") from None


def _scalar(x: Any) -> str:
    return json.dumps(x, ensure_ascii=False, allow_nan=False)


def _encode(x: Any, level: int) -> str:
    pad, inner = "  " * level, "  " * (level + 1)
    if isinstance(x, Mapping):
        if not x:
            return "{}"
        items = (f"{inner}{_scalar(str(k))}: {_encode(v, level + 1)}" for k, v in x.items())
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    if isinstance(x, (list, tuple)):
        if all(not isinstance(v, (Mapping, list, tuple)) for v in x):
            return "[" + ", ".join(_scalar(v) for v in x) + "]"
        return "[\n" + ",\n".join(f"{inner}{_encode(v, level + 1)}" for v in x) + f"\n{pad}]"
    return _scalar(x)


def write_text(path: str | os.PathLike, text: str) -> str:
    """Write ``text`` to ``path``, creating parent folders; return the path (as given).

    A regular file (or a new path) is written atomically: a temporary file renamed over it, so a
    failure leaves any previous file intact. A symbolic link is followed, and the file it points
    to is the one replaced (the link stays). A path that exists and is not a regular file (a
    device such as ``/dev/stdout``, a FIFO) is written in place: renaming over it would replace
    the device or FIFO itself with a file. Text that cannot be encoded (a lone surrogate from a
    mechanism's message or a file name) is written as a backslash escape. Any failure raises
    UsageError with one line."""
    shown = os.fspath(path)
    path = os.path.realpath(shown)
    try:
        if os.path.exists(path) and not os.path.isfile(path) and not os.path.isdir(path):
            with open(path, "w", encoding="utf-8", errors="backslashreplace", newline="\n") as fh:
                fh.write(text)
            return shown
        folder = os.path.dirname(path)
        os.makedirs(folder, exist_ok=True)
        tmp = os.path.join(folder, f".{os.path.basename(path)}.{os.getpid()}.tmp")
        try:
            with open(tmp, "w", encoding="utf-8", errors="backslashreplace", newline="\n") as fh:
                fh.write(text)  # honours the umask
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
    except OSError as exc:
        raise UsageError(f"cannot write {shown}: {exc.strerror or exc}") from None
    return shown


def unwritable(path: str | os.PathLike) -> Optional[str]:
    """Why ``path`` cannot take a report, in a few words, or None: checked before an audit runs,
    so that a report path that is a folder, or lies under a file, is one line at the start and
    not a lost run at the end. (Whether the disk has room is only known when writing.)"""
    target = os.path.realpath(os.fspath(path))
    if os.path.isdir(target):
        return "is a folder"
    folder = os.path.dirname(target)
    while folder and not os.path.exists(folder):
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    if folder and os.path.exists(folder) and not os.path.isdir(folder):
        return f"{folder} is not a folder"
    if folder and not os.access(folder, os.W_OK | os.X_OK):
        return f"no permission to write in {folder}"
    return None


def check_report_paths(paths: Mapping[str, Any]) -> None:
    """UsageError naming the first report (``{format: path or None}``) that :func:`unwritable`
    refuses: called before any audit runs."""
    for fmt, where in paths.items():
        why = None if where is None else unwritable(where)
        if why is not None:
            raise UsageError(f"cannot write the {fmt} report to {where}: {why}")


def write_json(run: Mapping[str, Any], path: str | os.PathLike) -> str:
    """Write the canonical JSON of ``run`` to ``path``."""
    return write_text(path, dumps(run))


def read_json(path: str | os.PathLike) -> dict:
    """Read a run saved by :func:`write_json` and validate it (UsageError with one clear line when
    the file is missing, not JSON, or not a compatible dpaudit result)."""
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{path}: is a folder, not a result file") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not a dpaudit result (not UTF-8 text)") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        return check_run(data, source=path)
    except InvalidArgument as exc:
        raise UsageError(str(exc)) from None
