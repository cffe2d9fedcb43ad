"""Run an untrusted mechanism in a child process: time limits, a memory cap, crash capture.

:class:`SandboxExecutor` implements :class:`dpaudit.execution.base.Executor`. One child Python process
imports the mechanism's file by path itself (with :func:`dpaudit.loader.load_mechanism`) and then
serves batch after batch (``spec.call_batch`` on the task's data, seed and count, exactly as
:class:`~dpaudit.execution.base.InProcessExecutor` does, so the same seed gives the same outputs). The child
is reused across batches and restarted only after a failure.

Whatever the mechanism does becomes a :class:`~dpaudit.errors.MechanismError` ``(cause, dataset)``
for the batch that triggered it, which the auditor turns into an ERROR verdict (STYLE.md 10):

=========================================  ====================================================
the mechanism ...                          cause
=========================================  ====================================================
raises                                     ``raised ValueError: ...``
calls ``sys.exit(n)``                      ``called sys.exit(n)``
calls ``os._exit(n)`` / dies               ``exited with status n``
segfaults / is killed                      ``crashed with SIGSEGV (segmentation fault)``
runs one call past ``call_timeout``        ``hung: one call ran longer than the per-call limit``
runs the whole run past ``total_timeout``  ``exceeded the total time limit``
allocates past ``memory``                  ``exceeded the memory cap of 2 GiB``
returns what cannot be sent back           ``returned an output that cannot be sent back``
=========================================  ====================================================

The child's stdout and stderr go to a private file (``print`` in a mechanism cannot corrupt the
channel, which is a separate pipe), and the last lines of it are appended to the cause of a crash.
The memory cap is ``RLIMIT_AS`` (address space) set in the child before the file is imported.
Numeric array outputs come back through shared memory without being copied in this process
(:mod:`dpaudit.execution.shared_outputs`), small batches travel together, and two messages are in flight at
once, so a batch-form mechanism costs little more than in process. The child's code is
:mod:`dpaudit.execution.child`.

Per-call limits are enforced in the child by a watchdog thread that interrupts the main thread
when no call has completed for ``call_timeout`` seconds (a batch-form call of ``k`` outputs is one
call); a call stuck in C code that holds the GIL cannot be interrupted that way and is stopped by
the total limit. The sandbox guards dpaudit against accidents in the audited code; it is not a
security boundary against code written to attack it.
"""

from __future__ import annotations

import math
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import time
from multiprocessing.connection import Connection
from typing import Any, Optional, Sequence

import numpy as np

from dpaudit.execution.child import KILL_GRACE, WATCHDOG_EXIT
from dpaudit.execution.shared_outputs import OutputPool
from dpaudit.errors import InvalidArgument, LoadError, MechanismError
from dpaudit.execution.base import BatchTask
from dpaudit.spec import CallForm, MechanismSpec

__all__ = ["SandboxExecutor", "DEFAULT_CALL_TIMEOUT", "DEFAULT_MEMORY", "parse_memory"]

#: Seconds one call of the mechanism may take (a batch-form call counts as one call).
DEFAULT_CALL_TIMEOUT = 30.0
#: Address-space cap of the child process, in bytes (2 GiB).
DEFAULT_MEMORY = 2 * 1024 ** 3
#: Seconds the child gets to start and import the file (on top of the per-call limit).
_START_GRACE = 15.0
#: Messages in flight at once: the child computes batch k+1 while the parent takes batch k.
_AHEAD = 2
#: A task message larger than this is never sent ahead (a full pipe could then deadlock).
_AHEAD_MAX_BYTES = 32 * 1024
#: Tasks of fewer draws than this travel together, up to this many draws per message.
_BUNDLE_SAMPLES = 16_384
_TAIL_BYTES = 4096
_TRUNCATE_AT = 1 << 20


def parse_memory(value: Any, name: str = "memory") -> int:
    """A memory size in bytes from ``2G``, ``512M``, ``1.5GiB``, ``2e9`` or an integer (≥ 64 MiB)."""
    units = {"": 1, "b": 1, "k": 1024, "kb": 1024, "kib": 1024, "m": 1024 ** 2, "mb": 1024 ** 2,
             "mib": 1024 ** 2, "g": 1024 ** 3, "gb": 1024 ** 3, "gib": 1024 ** 3,
             "t": 1024 ** 4, "tb": 1024 ** 4, "tib": 1024 ** 4}
    if isinstance(value, bool):
        raise InvalidArgument.bad(name, value, "a size such as 2G or 512M")
    if isinstance(value, (int, float)):
        number, unit = float(value), ""
    else:
        text = str(value).strip().lower().replace("_", "")
        i = len(text)
        while i > 0 and text[i - 1].isalpha():
            i -= 1
        number_text, unit = text[:i], text[i:]
        try:
            number = float(number_text)
        except ValueError:
            raise InvalidArgument.bad(name, value, "a size such as 2G or 512M") from None
        if unit not in units:
            raise InvalidArgument.bad(name, value, "a size such as 2G or 512M (units K, M, G, T)")
    size = number * units[unit]
    if not math.isfinite(size) or size < 64 * 1024 ** 2:
        raise InvalidArgument.bad(name, value, "a size of at least 64M")
    return int(size)


def _describe_exit(code: int) -> str:
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        extra = {"SIGSEGV": " (segmentation fault)", "SIGBUS": " (bus error)",
                 "SIGKILL": " (killed; out of memory?)", "SIGABRT": " (aborted)",
                 "SIGFPE": " (floating-point exception)"}.get(name, "")
        return f"crashed with {name}{extra}"
    return f"exited with status {code} (os._exit or a crash in native code)"


class SandboxExecutor:
    """Runs batches of the mechanism ``function`` of the file ``path`` in one child process.

    ``call_timeout`` (seconds, per call), ``total_timeout`` (seconds from :meth:`start`, or None)
    and ``memory`` (bytes, or a string like ``"2G"``; None for no cap) are validated here.
    Use it as a context manager, or call :meth:`close`; :meth:`start` is called by the first
    :meth:`run` and raises :class:`LoadError` when the child cannot load the file.
    """

    def __init__(self, path: str, function: Optional[str] = None, *,
                 call_timeout: Optional[float] = DEFAULT_CALL_TIMEOUT,
                 total_timeout: Optional[float] = None,
                 memory: Any = DEFAULT_MEMORY) -> None:
        self.path = str(path)
        self.function = function
        self.call_timeout = _check_seconds(call_timeout, "call_timeout")
        self.total_timeout = _check_seconds(total_timeout, "total_timeout")
        self.memory = None if memory is None else parse_memory(memory)
        self.children_started = 0
        self._proc: Optional[subprocess.Popen] = None
        self._send: Optional[Connection] = None
        self._recv: Optional[Connection] = None
        self._out: Any = None                       # capture file of the child's stdout/stderr
        self._pool: Optional[OutputPool] = None     # shared buffers numeric outputs come back in
        self._deadline: Optional[float] = None
        self._ready = False

    # -- lifecycle -------------------------------------------------------------------------
    @property
    def pid(self) -> Optional[int]:
        """The running child's process id (None when no child is running)."""
        return None if self._proc is None else self._proc.pid

    def spawn(self) -> None:
        """Start the child without waiting for it: it boots and imports the file while the caller
        does other work (``dpaudit check`` imports the auditor meanwhile). :meth:`start` waits."""
        if self._proc is not None:
            return
        if self._deadline is None and self.total_timeout is not None:
            self._deadline = time.monotonic() + self.total_timeout
        if self._out is None:
            self._out = tempfile.TemporaryFile(mode="a+b", prefix="dpaudit-child-")
        if self._pool is not None:
            self._pool.close()
        self._pool = OutputPool()  # a new child opens its buffers afresh
        env = dict(os.environ)
        pkg_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        env["PYTHONPATH"] = os.pathsep.join([pkg_root] + [p for p in [env.get("PYTHONPATH")] if p])
        env["PYTHONUNBUFFERED"] = "1"        # the tail of a crash must not sit in a lost buffer
        env["PYTHONFAULTHANDLER"] = "1"      # a segfault prints the mechanism's stack to the tail
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            env.setdefault(var, "1")         # per-thread BLAS buffers would eat the memory cap
        p2c_r, p2c_w = os.pipe()
        c2p_r, c2p_w = os.pipe()
        cmd = [sys.executable, "-c", "import dpaudit.execution.child as c; c.main()",
               str(p2c_r), str(c2p_w)]
        try:
            self._proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self._out,
                                          stderr=subprocess.STDOUT, pass_fds=(p2c_r, c2p_w),
                                          env=env, close_fds=True)
        finally:
            os.close(p2c_r)
            os.close(c2p_w)
        self.children_started += 1
        self._ready = False
        self._send = Connection(p2c_w, readable=False)
        self._recv = Connection(c2p_r, writable=False)
        config = (self.path, self.function, self.call_timeout, self.memory)
        self._send.send_bytes(pickle.dumps(config))

    def start(self) -> None:
        """Start the child (unless :meth:`spawn` did) and wait until it has imported the file;
        raise LoadError if it cannot (the file's own error, or a crash or hang while importing)."""
        self.spawn()
        if self._ready:
            return
        try:
            reply = self._receive(_START_GRACE + (self.call_timeout or 0.0), None,
                                  during="importing the file")
        except MechanismError as exc:
            self._kill()
            raise LoadError(f"{self.path}: the sandbox could not import it: {exc.cause}") from None
        if reply[0] != "ready":
            self._kill()
            raise LoadError(reply[1] if reply[0] == "load_error"
                            else f"{self.path}: the sandbox child answered {reply[0]!r}")
        self._ready = True

    def close(self) -> None:
        """Stop the child and free its resources. The child holds nothing worth a polite exit
        (its output files are already unlinked), so it is killed rather than waited for."""
        self._kill()
        if self._pool is not None:
            self._pool.close()
            self._pool = None
        if self._out is not None:
            self._out.close()
            self._out = None

    def __enter__(self) -> "SandboxExecutor":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:  # pragma: no cover - best effort at interpreter exit
        try:
            self._kill()
        except Exception:
            pass

    # -- the Executor protocol --------------------------------------------------------------
    def run(self, spec: MechanismSpec, tasks: Sequence[BatchTask]) -> list[Any]:
        """Run every task in the child, in order; return the raw outputs.

        Small tasks travel together (one message and one reply for up to :data:`_BUNDLE_SAMPLES`
        draws); a large task travels alone and its numeric output comes back through a shared
        slot; two messages are in flight at a time. Raises MechanismError (cause, the failing
        task's dataset) on the first failure; the child is then stopped, and the next call starts
        a fresh one.
        """
        if not tasks:
            return []
        self._check_deadline(tasks[0])
        self.start()
        form = spec.call_form.value
        groups = _bundle(tasks)
        items = [[(t.data, _seed_state(t.seed), t.n) for t in g] for g in groups]
        biggest = max(sum(9 * len(t.data) + 100 for t in g) for g in groups)  # pickled size, roughly
        ahead = _AHEAD if biggest <= _AHEAD_MAX_BYTES else 1
        # The child's watchdog stops a hung call; this parent-side limit catches a batch call that
        # cannot be interrupted (stuck in C code).
        per_call = None
        if spec.call_form is CallForm.BATCH and self.call_timeout is not None:
            per_call = self.call_timeout + 2 * KILL_GRACE
        outputs: list[Any] = []
        lent: list[Optional[tuple]] = []
        try:
            for k in range(min(ahead, len(groups))):
                lent.append(self._send_group(form, items[k], len(groups[k])))
            for k, group in enumerate(groups):
                limit = None if per_call is None else per_call * len(group)
                reply = self._receive(limit, group[0].data, during="running a batch")
                if lent[k] is not None:
                    self._pool.release(lent[k][0])
                outputs += self._unpack(reply, lent[k], group)
                if len(lent) < len(groups):
                    j = len(lent)
                    lent.append(self._send_group(form, items[j], len(groups[j])))
        except BaseException:
            self._kill()
            raise
        self._trim_output()
        return outputs

    def _send_group(self, form: str, items: list, size: int) -> Optional[tuple]:
        """Send one message; a single-batch message borrows a shared buffer for its output."""
        buffer = self._pool.lend() if size == 1 else None
        self._send.send_bytes(pickle.dumps(("run", form, items, buffer),
                                           protocol=pickle.HIGHEST_PROTOCOL))
        return buffer

    def _check_deadline(self, task: BatchTask) -> None:
        if self._deadline is not None and time.monotonic() >= self._deadline:
            self._kill()
            raise MechanismError(f"exceeded the total time limit of {self.total_timeout:g} s",
                                 np.asarray(task.data, dtype=float))

    def _unpack(self, reply: tuple, buffer: Optional[tuple], group: list[BatchTask]) -> list[Any]:
        if reply[0] == "ok":
            return reply[1]
        if reply[0] == "ok_shared" and buffer is not None:
            return [self._pool.take(buffer[0], reply[1], reply[2])]
        if reply[0] == "error":
            data = np.asarray(group[reply[3]].data, dtype=float)
            raise MechanismError(self._with_tail(reply[1], reply[2]), data)
        raise MechanismError(f"sent back an unexpected reply {reply[0]!r}",  # pragma: no cover
                             np.asarray(group[0].data, dtype=float))

    # -- plumbing ---------------------------------------------------------------------------
    def _receive(self, limit: Optional[float], data: Any, *, during: str) -> tuple:
        """Wait for the child's next reply, at most ``limit`` seconds and within the total limit;
        ``data`` is the dataset a failure is reported on."""
        if data is not None:
            data = np.asarray(data, dtype=float)
        wait = limit
        total_bound = False
        if self._deadline is not None:
            remaining = max(0.0, self._deadline - time.monotonic())
            if wait is None or remaining < wait:
                wait, total_bound = remaining, True
        if not self._recv.poll(wait):
            if total_bound:
                raise MechanismError(self._with_tail(
                    f"exceeded the total time limit of {self.total_timeout:g} s while {during}"),
                    data)
            raise MechanismError(self._with_tail(
                f"hung: {during} took longer than {limit:g} s (per-call limit "
                f"{self.call_timeout:g} s)"), data)
        try:
            payload = self._recv.recv_bytes()
        except (EOFError, OSError):
            raise MechanismError(self._with_tail(self._death()), data) from None
        try:
            reply = pickle.loads(payload)
        except Exception as exc:
            raise MechanismError(f"returned an output that cannot be read back "
                                 f"({type(exc).__name__}: {exc})", data) from None
        if not isinstance(reply, tuple) or not reply or not isinstance(reply[0], str):
            raise MechanismError("sent back garbage instead of outputs", data)  # pragma: no cover
        return reply

    def _death(self) -> str:
        try:
            code = self._proc.wait(timeout=5.0)
        except subprocess.TimeoutExpired:  # pragma: no cover - closed its pipe but lives on
            self._kill()
            return "closed the channel to dpaudit"
        if code == WATCHDOG_EXIT:
            return (f"hung: one call ran longer than the per-call limit of {self.call_timeout:g} s "
                    f"and could not be interrupted")
        return _describe_exit(code)

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        for conn in (self._send, self._recv):
            if conn is not None:
                try:
                    conn.close()
                except OSError:  # pragma: no cover
                    pass
        self._send = self._recv = None
        if proc is not None and proc.poll() is None:
            proc.kill()
            try:
                proc.wait(timeout=5.0)
            except subprocess.TimeoutExpired:  # pragma: no cover
                pass

    def output_tail(self, max_chars: int = 300) -> str:
        """The last lines the child printed (stdout and stderr), joined by `` | ``; a fatal-signal
        dump of :mod:`faulthandler` is shortened to its first line and the innermost frame."""
        if self._out is None:
            return ""
        try:
            self._out.flush()
            size = self._out.seek(0, os.SEEK_END)
            self._out.seek(max(0, size - _TAIL_BYTES))
            text = self._out.read().decode("utf-8", "replace")
        except (OSError, ValueError):  # pragma: no cover
            return ""
        return _summarise_tail(text, self.path, max_chars)

    def _with_tail(self, cause: str, show_tail: bool = True) -> str:
        tail = self.output_tail() if show_tail else ""
        return f"{cause}; its last output: {tail}" if tail else cause

    def _trim_output(self) -> None:
        """Keep the capture file small when a healthy mechanism prints a lot."""
        try:
            if self._out is not None and self._out.seek(0, os.SEEK_END) > _TRUNCATE_AT:
                self._out.truncate(0)
        except OSError:  # pragma: no cover
            pass


def _bundle(tasks: Sequence[BatchTask]) -> list[list[BatchTask]]:
    """Consecutive tasks grouped so that small ones share a message (at most
    :data:`_BUNDLE_SAMPLES` draws per group); a task at least that large goes alone."""
    groups: list[list[BatchTask]] = []
    total = _BUNDLE_SAMPLES
    for t in tasks:
        if t.n >= _BUNDLE_SAMPLES or total + t.n > _BUNDLE_SAMPLES:
            groups.append([t])
            total = t.n
        else:
            groups[-1].append(t)
            total += t.n
    return groups


def _seed_state(seq: np.random.SeedSequence) -> tuple:
    """What rebuilds ``seq`` exactly (20x cheaper to pickle than the SeedSequence itself)."""
    return (seq.entropy, seq.spawn_key, seq.pool_size, seq.n_children_spawned)


def _summarise_tail(text: str, path: str, max_chars: int) -> str:
    fatal = text.rfind("Fatal Python error:")
    lines = [ln.strip() for ln in text[: fatal if fatal >= 0 else len(text)].splitlines() if ln.strip()]
    lines = lines[-4:] if fatal >= 0 else lines[-6:]
    if fatal >= 0:
        dump = text[fatal:].splitlines()
        frames = [ln.strip() for ln in dump if ln.strip().startswith("File ")]
        mine = [f for f in frames if os.path.basename(path) in f] or frames
        lines.append(dump[0].strip() + (f" ({mine[0]})" if mine else ""))
    joined = " | ".join(lines)
    return joined if len(joined) <= max_chars else "..." + joined[-(max_chars - 3):]


def _check_seconds(value: Any, name: str) -> Optional[float]:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(float(value)) or float(value) <= 0:
        raise InvalidArgument.bad(name, value, "a finite number of seconds > 0, or None")
    return float(value)
