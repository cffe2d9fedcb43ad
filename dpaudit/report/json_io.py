"""Canonical JSON of a run: written atomically, read back and validated.

The JSON is the canonical result (docs/ARCHITECTURE.md, "Data flow"): HTML, JUnit and SARIF are rendered from it, and
``dpaudit report RESULT.json`` re-renders them from the file alone. It is standard JSON
(``allow_nan=False``: non-finite numbers are already the strings ``"inf"``/``"nan"``, see
:func:`dpaudit.results.jsonable`), UTF-8, indented, with keys in the model's fixed order, so the
same run always serialises to the same bytes.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
import stat
from typing import Any, Mapping, Optional

from dpaudit.errors import InvalidArgument, UsageError
from dpaudit.report.model import check_run
from dpaudit.results import int_text

__all__ = ["dumps", "write_json", "read_json", "write_text", "unwritable", "check_report_paths"]


def dumps(run: Mapping[str, Any]) -> str:
    """The run as canonical JSON text (ends with a newline): objects indented two spaces per
    level, lists of scalars on one line (samples and curves stay compact and diffable)."""
    try:
        return _encode(run, 0) + "\n"
    except (TypeError, ValueError) as exc:
        raise InvalidArgument(f"run is not JSON-ready: {exc}") from None


def _scalar(x: Any) -> str:
    return json.dumps(int_text(x), ensure_ascii=False, allow_nan=False)


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


class _Refused(Exception):
    """Why a report path is refused, in a few words (the caller adds the path)."""


def _system_folder(real: str) -> bool:
    """A folder whose links are the operating system's, not a checkout's: ``/dev/stdout`` is a
    link to ``/proc/self/fd/1``, which is a link to wherever standard output goes, a file too."""
    return _inside(real, "/dev") or _inside(real, "/proc")


def _inside(real: str, root: str) -> bool:
    return real == root or real.startswith(root.rstrip("/") + "/")


def _folder_of(path: str) -> tuple[str, str]:
    """``path`` as an absolute, normalised folder and final name (``..`` taken lexically)."""
    full = os.path.normpath(os.path.abspath(path))
    return os.path.dirname(full), os.path.basename(full)


def _open_folder(folder: str, create: bool) -> tuple[int, str, bool]:
    """A file descriptor of ``folder`` opened one component at a time, its real path, and whether
    it is the whole folder (False: a component is missing and ``create`` is false; the descriptor
    is then the deepest folder that exists). A component inside the working folder (what a
    checkout controls) is opened without following a symbolic link; elsewhere (``/tmp`` as a link
    to ``/private/tmp``) links are followed. Raises _Refused, or OSError."""
    cwd = os.path.realpath(os.getcwd())
    fd = os.open("/", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    here = "/"
    try:
        for part in [p for p in folder.split("/") if p]:
            inside = _inside(here, cwd)
            flags = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | (os.O_NOFOLLOW if inside else 0)
            try:
                nfd = os.open(part, flags, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    return fd, here, False
                try:
                    os.mkdir(part, 0o777, dir_fd=fd)
                except FileExistsError:  # made meanwhile: opened (and checked) below
                    pass
                nfd = os.open(part, flags, dir_fd=fd)
            except NotADirectoryError:
                where = os.path.join(here, part)
                if inside and os.path.islink(where):
                    raise _Refused(f"{where} is a symbolic link (to {os.readlink(where)}); "
                                   f"dpaudit does not follow links inside the working folder "
                                   f"when writing reports") from None
                raise _Refused(f"{where} is not a folder") from None
            os.close(fd)
            fd = nfd
            here = _real(fd, os.path.join(here, part))
        return fd, here, True
    except BaseException:
        os.close(fd)
        raise


def _real(fd: int, fallback: str) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:  # pragma: no cover - no /proc
        return os.path.realpath(fallback)


def _final(fd: int, here: str, name: str) -> str:
    """How the final component ``name`` in the folder ``fd`` (real path ``here``) is written:
    ``"new"`` or ``"replace"`` (a temporary file renamed over it), or ``"in place"`` (a device or
    FIFO, or a link to one, under ``/dev`` or ``/proc``); raises _Refused for a folder, a FIFO,
    socket or device elsewhere, a link to anything else, a dangling
    link or a socket."""
    try:
        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return "new"
    system = _system_folder(here)
    if stat.S_ISLNK(st.st_mode):
        target = os.readlink(name, dir_fd=fd)
        try:
            to = os.stat(name, dir_fd=fd).st_mode
        except OSError:
            to = None
        if to is not None and (stat.S_ISCHR(to) or stat.S_ISFIFO(to)):
            if system:
                return "in place"
            raise _Refused(f"it is a symbolic link (to {target}); {_ONLY_FILES}")
        if to is not None and stat.S_ISREG(to) and system:
            return "in place"  # /dev/stdout redirected to a file
        dangling = " that points nowhere" if to is None else ""
        raise _Refused(f"it is a symbolic link{dangling} (to {target}); dpaudit does not follow "
                       f"links when writing reports")
    if stat.S_ISDIR(st.st_mode):
        raise _Refused("is a folder")
    if system and (stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode)):
        return "in place"
    if not stat.S_ISREG(st.st_mode):
        what = next((w for test, w in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                                       (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"))
                     if test(st.st_mode)), "not a regular file")
        raise _Refused(f"it is {what}; {_ONLY_FILES}")
    return "replace"


#: why a FIFO, socket or device (or a link to one) outside /dev and /proc is refused: a FIFO
#: without a reader blocks the writer forever, and a link planted in a checkout could point at
#: any device (``/dev/port``, ``/dev/watchdog``) that dpaudit, run as root, would write to
_ONLY_FILES = "dpaudit writes reports only to regular files (or /dev/stdout and other paths under /dev)"


def write_text(path: str | os.PathLike, text: str) -> str:
    """Write ``text`` to ``path``, creating parent folders; return the path (as given).

    A regular file (or a new path) is written atomically: a temporary file created beside it
    (``O_CREAT | O_EXCL | O_NOFOLLOW``) and renamed over it, so a failure leaves any previous file
    intact. No symbolic link is followed at the final component (a planted
    ``report.html -> site-packages/x.pth`` would write anywhere the user can), nor at a folder
    inside the working folder; a link is refused. Under ``/dev`` and ``/proc`` only, a device, a
    FIFO or a link to one (``/dev/stdout``, ``/dev/fd/3``, a terminal, a pipe) is written in
    place, opened without blocking (a pipe nobody reads is an error, not a hang): renaming over it
    would replace it with a file. Anywhere else a FIFO, socket or device is refused: a checkout
    (or the audited code, run before) could plant one to hang the run or reach a device. Text that cannot be encoded (a
    lone surrogate from a mechanism's message or a file name) is written as a backslash escape.
    Any failure raises UsageError with one line."""
    shown = os.fspath(path)
    data = text.encode("utf-8", "backslashreplace")
    folder, name = _folder_of(shown)
    fd = None
    try:
        fd, here, _ = _open_folder(folder, create=True)
        how = _final(fd, here, name)
        if how == "in place":
            _write_in_place(fd, here, name, data)
        else:
            _write_atomically(fd, name, data)
    except _Refused as exc:
        raise UsageError(f"cannot write {shown}: {exc}") from None
    except OSError as exc:
        raise UsageError(f"cannot write {shown}: {exc.strerror or exc}") from None
    finally:
        if fd is not None:
            os.close(fd)
    return shown


def _write_all(out: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(out, view):]


def _write_in_place(fd: int, here: str, name: str, data: bytes) -> None:
    """Write a device or FIFO (or what a link points at) as it is; what was opened is checked
    again, so a link swapped in after :func:`_final` cannot make this truncate a file."""
    # without blocking: a FIFO (or a pipe under /dev/fd) that nobody reads is ENXIO, not a hang
    out = os.open(name, os.O_WRONLY | os.O_NOCTTY | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=fd)
    try:
        os.set_blocking(out, True)
        mode = os.fstat(out).st_mode
        if stat.S_ISREG(mode):
            if not _system_folder(here):
                raise _Refused("it changed into a link to a file while being written; dpaudit "
                               "does not follow links when writing reports")
            if _appended(out):  # `--json - >> log`: after what the file holds, as the shell asked
                os.lseek(out, 0, os.SEEK_END)
            else:
                os.ftruncate(out, 0)
        _write_all(out, data)
    finally:
        os.close(out)


def _appended(out: int) -> bool:
    """Whether the regular file open as ``out`` is this process's stdout or stderr opened for
    appending (``>>``): a report written there through /dev/stdout goes after what it holds (it
    was truncated: the log the report was appended to was lost)."""
    import fcntl

    here = os.fstat(out)
    for fd in (1, 2):
        try:
            if os.path.samestat(os.fstat(fd), here) and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_APPEND:
                return True
        except OSError:
            continue
    return False


def _write_atomically(fd: int, name: str, data: bytes) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(100):
        tmp = f".{name}.{secrets.token_hex(6)}.tmp"
        try:
            out = os.open(tmp, flags, 0o666, dir_fd=fd)  # honours the umask
            break
        except FileExistsError:  # pragma: no cover - a name taken: draw another
            continue
    else:  # pragma: no cover
        raise FileExistsError(errno.EEXIST, "no free temporary file name")
    try:
        try:
            _write_all(out, data)
        finally:
            os.close(out)
        os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)  # replaces a link, never its target
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=fd)
        except OSError:
            pass
        raise


def unwritable(path: str | os.PathLike) -> Optional[str]:
    """Why ``path`` cannot take a report, in a few words, or None: checked before an audit runs,
    so that a report path that is a folder, lies under a file, or is a symbolic link (see
    :func:`write_text`) is one line at the start and not a lost run (or a file written elsewhere)
    at the end. (Whether the disk has room is only known when writing.)"""
    folder, name = _folder_of(os.fspath(path))
    fd = None
    try:
        fd, here, whole = _open_folder(folder, create=False)
        if whole:
            _final(fd, here, name)
    except _Refused as exc:
        return str(exc)
    except OSError as exc:
        return exc.strerror or str(exc)
    finally:
        if fd is not None:
            os.close(fd)
    if not os.access(here, os.W_OK | os.X_OK):
        return f"no permission to write in {here}"
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
