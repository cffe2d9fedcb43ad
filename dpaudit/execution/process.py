"""The sandbox child as an operating-system process: its output tail, its death, its whole group.

* :class:`OutputTail` drains the child's stdout and stderr (one pipe, read whenever dpaudit waits
  for the child) and keeps only the last :data:`TAIL_BYTES`, so a mechanism that prints without end costs nothing on disk and a
  bounded amount of memory; the tail is appended to the cause of a crash, control characters
  escaped (:func:`printable`).
* :func:`kill_tree` ends the child, every process in its process group (it runs in a session of
  its own) and every descendant found under ``/proc`` (a helper that left the group while its
  parent lived), so nothing the mechanism started outlives the audit.
* :func:`describe_exit` says how it died.
"""

from __future__ import annotations

import os
import signal
import subprocess
from typing import Any, Optional

__all__ = ["OutputTail", "kill_tree", "describe_exit", "printable", "one_line", "descendants", "TAIL_BYTES",
           "StopOnSignals", "worker_signals"]

#: Bytes of the child's output kept for error messages.
TAIL_BYTES = 4096

_CONTROL = {c: f"\\x{c:02x}" for c in range(32) if c not in (9, 10)}
_CONTROL[127] = "\\x7f"
_CONTROL.update({c: f"\\x{c:02x}" for c in range(0x80, 0xA0)})
_CONTROL.update({c: f"\\u{c:04x}" for c in range(0xD800, 0xE000)})  # lone surrogates: no encoding takes them
# line and paragraph separators, and the bidirectional controls that reorder what a reader sees
# (a "Trojan source" line): U+061C, U+200E/F, U+2028/9, U+202A-E, U+2066-9
_CONTROL.update({c: f"\\u{c:04x}" for c in (0x061C, 0x200E, 0x200F, 0x2028, 0x2029,
                                            *range(0x202A, 0x202F), *range(0x2066, 0x206A))})
_ONE_LINE = {**_CONTROL, 9: "\\t", 10: "\\n", 13: "\\r"}


def printable(text: str) -> str:
    """``text`` with control characters (ESC, NUL, CR, C1 controls) written as ``\\xNN``, lone
    surrogates (an undecodable file name, a message built from bytes), line and paragraph
    separators and bidirectional controls as ``\\uNNNN``, so nothing
    from the audited code can drive a terminal, land raw in a report or fail to encode."""
    return text.translate(_CONTROL)


def one_line(text: str) -> str:
    """:func:`printable`, with tabs and line breaks escaped too (``\\n``, ``\\r``, ``\\t``, and
    every other character that some reader takes as the end of a line: ``\\x0b``, ``\\x0c``,
    ``\\x1c``-``\\x1e``, ``\\x85``, U+2028, U+2029): for a field that must stay one line whatever
    the audited code sent (a ``.pth`` file, a log line or a Markdown table ends a line there)."""
    return text.translate(_ONE_LINE)


class OutputTail:
    """The read end of the child's output pipe (non-blocking), keeping the last
    :data:`TAIL_BYTES` bytes; :meth:`drain` takes whatever is waiting in the pipe."""

    def __init__(self, fd: int) -> None:
        os.set_blocking(fd, False)
        self._fd: Optional[int] = fd
        self._buf = bytearray()

    def fileno(self) -> int:
        return -1 if self._fd is None else self._fd

    def drain(self) -> None:
        while self._fd is not None:
            try:
                chunk = os.read(self._fd, 1 << 16)
            except BlockingIOError:
                return
            except OSError:  # pragma: no cover
                chunk = b""
            if not chunk:  # every writer is gone
                self.close()
                return
            self._buf += chunk
            if len(self._buf) > 2 * TAIL_BYTES:
                del self._buf[:-TAIL_BYTES]

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def text(self) -> str:
        self.drain()
        return bytes(self._buf[-TAIL_BYTES:]).decode("utf-8", "replace")

    def summary(self, path: str, max_chars: int = 300) -> str:
        """The last lines, joined by `` | ``; a fatal-signal dump of :mod:`faulthandler` is
        shortened to its first line and the innermost frame in the mechanism's file."""
        text = self.text()
        fatal = text.rfind("Fatal Python error:")
        lines = [ln.strip() for ln in text[: fatal if fatal >= 0 else len(text)].splitlines()
                 if ln.strip()]
        lines = lines[-4:] if fatal >= 0 else lines[-6:]
        if fatal >= 0:
            dump = text[fatal:].splitlines()
            frames = [ln.strip() for ln in dump if ln.strip().startswith("File ")]
            mine = [f for f in frames if os.path.basename(path) in f] or frames
            lines.append(dump[0].strip() + (f" ({mine[0]})" if mine else ""))
        joined = printable(" | ".join(lines))
        return joined if len(joined) <= max_chars else "..." + joined[-(max_chars - 3):]


def descendants(pid: int) -> list[int]:
    """Every live descendant of ``pid`` (from the parent links under ``/proc``)."""
    children: dict[int, list[int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:  # pragma: no cover - no /proc
        return []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        children.setdefault(int(fields[1]), []).append(int(name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def kill_tree(proc: Optional[subprocess.Popen]) -> None:
    """SIGKILL the child, its process group and its descendants; reap the child."""
    if proc is None:
        return
    tree = descendants(proc.pid) if proc.returncode is None else []
    try:
        os.killpg(proc.pid, signal.SIGKILL)   # the child leads its own session and group
    except (ProcessLookupError, PermissionError):
        pass
    for pid in tree:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        proc.wait(timeout=5.0)
    except subprocess.TimeoutExpired:  # pragma: no cover - unkillable (D state)
        pass


def describe_exit(code: int) -> str:
    """How a child that exited with ``code`` (negative: a signal) died, in words."""
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        extra = {"SIGSEGV": " (segmentation fault)", "SIGBUS": " (bus error)",
                 "SIGKILL": " (killed; out of memory?)", "SIGABRT": " (aborted)",
                 "SIGFPE": " (floating-point exception)",
                 "SIGXCPU": " (CPU time limit)", "SIGXFSZ": " (file size limit)"}.get(name, "")
        return f"crashed with {name}{extra}"
    return f"exited with status {code} (os._exit or a crash in native code)"


class StopOnSignals:
    """While it is installed (``dpaudit check``, ``dpaudit audit``), SIGTERM and SIGHUP stop the
    run as Ctrl-C does (KeyboardInterrupt in the main thread, naming the signal): the processes
    started are killed on the way out, every report is written with what was computed, and
    dpaudit exits 4. A second signal while that happens is ignored. Processes forked to run
    audited code reset these signals (they would raise the interrupt in a worker)."""

    _SIGNALS = ("SIGTERM", "SIGHUP", "SIGINT")

    def __init__(self) -> None:
        self.received: Optional[str] = None
        self._old: dict = {}
        for name in self._SIGNALS:
            sig = getattr(signal, name, None)
            if sig is not None:
                try:
                    self._old[sig] = signal.signal(sig, self._handle)
                except (ValueError, OSError):  # not the main thread
                    pass

    def _handle(self, signum: int, frame: Any) -> None:
        if self.received is not None:
            return
        self.received = "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name
        raise KeyboardInterrupt(self.received)

    def restore(self) -> None:
        for sig, old in self._old.items():
            try:
                signal.signal(sig, old)
            except (ValueError, OSError, TypeError):  # pragma: no cover
                pass


def worker_signals() -> None:
    """In a process forked to run audited code: SIGTERM and SIGHUP back to their defaults and
    SIGINT ignored, whatever handlers the parent had (:class:`StopOnSignals` would raise the
    interrupt inside the worker, where it printed tracebacks and could leave a lock held); the
    parent, which the terminal's Ctrl-C reaches, stops its workers."""
    for name, how in (("SIGTERM", signal.SIG_DFL), ("SIGHUP", signal.SIG_DFL),
                      ("SIGINT", signal.SIG_IGN)):
        sig = getattr(signal, name, None)
        if sig is not None:
            signal.signal(sig, how)
