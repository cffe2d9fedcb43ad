"""Run an untrusted mechanism in a child process: isolation, time limits, a memory cap, crash capture.

:class:`SandboxExecutor` implements :class:`dpaudit.execution.base.Executor`. One child Python
process, in a session and process group of its own, with a scrubbed environment and resource
limits, enters its isolation (:mod:`dpaudit.execution.isolation`: Landlock and seccomp where the
kernel has them), imports the mechanism's file by path itself (it is never imported in dpaudit's
process) and then serves batch after batch (``spec.call_batch`` on the task's data, seed and count,
exactly as :class:`~dpaudit.execution.base.InProcessExecutor` does, so the same seed gives the same
outputs), or single calls (:meth:`SandboxExecutor.call`, for the sensitivity search). The child is
reused and restarted only after a failure.

Whatever the mechanism does becomes a :class:`~dpaudit.errors.MechanismError` ``(cause, dataset)``
for the batch that triggered it, which the auditor turns into an ERROR verdict (user code failing is the mechanism's failure, never dpaudit's):

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
returns an object, not a plain value       ``returned a Release object, not a plain value; ...``
writes its own reply to dpaudit's pipe     ``sent back a malformed reply ('ok', int) ...``
writes, reads or connects where denied     ``tried to write /home/u/x (blocked by the sandbox)``
=========================================  ====================================================

Time limits hold from this process, whatever the child does: a call stuck in C code that holds
the GIL (so the child's own watchdog cannot interrupt it) is seen here, because the child counts
calls in a shared 8-byte file, and the child is killed ``call_timeout`` plus a short grace after
the last call began. A child that dies is noticed within 0.1 s even while a process it forked
keeps the pipe open. The child's stdout and stderr go to a pipe of which only the tail is kept
(:mod:`dpaudit.execution.process`); everything the child started is killed with its process group
when the batch fails or the sandbox closes, and its private folder (shared output buffers and its
``TMPDIR``) is removed. Numeric array outputs come back through shared memory without being copied
in this process (:mod:`dpaudit.execution.shared_outputs`), small batches travel together, and two
messages are in flight at once, so a batch-form mechanism costs little more than in process.
Replies are read and checked with the framing of :mod:`dpaudit.execution.wire`.
"""

from __future__ import annotations

import math
import os
import pickle
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from multiprocessing.connection import Connection, wait
from typing import Any, Optional, Sequence

import numpy as np

from dpaudit.errors import InvalidArgument, LoadError, MechanismError, TimeLimitReached
from dpaudit.execution import safe_pickle
from dpaudit.execution.base import BatchTask
from dpaudit.execution.child import ENGINE_CALL_FLOOR, KILL_GRACE, WATCHDOG_EXIT
from dpaudit.execution.isolation import WORDS_MAX, child_environment
from dpaudit.execution.shares import shared_reads, user_homes
from dpaudit.execution.process import OutputTail, StopOnSignals, describe_exit, kill_tree, printable
from dpaudit.execution.shared_outputs import OutputPool
from dpaudit.execution.wire import (MAX_REPLY_BYTES, AuditedFile, ForgedReply, Frame, TooLarge,
                                    child_text, describe_reply, error_reply, malformed,
                                    reply_limit)  # MAX_REPLY_BYTES: re-exported
from dpaudit.output_values import NotPlain, plain_outputs
from dpaudit.spec import MechanismSpec
from dpaudit.validation import check_seconds, parse_memory  # parse_memory: re-exported

__all__ = ["SandboxExecutor", "DEFAULT_CALL_TIMEOUT", "DEFAULT_MEMORY", "parse_memory",
           "SandboxFailure"]

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
#: A call in flight when the total time limit stops it is said to look stuck (it may never
#: return) after this many seconds and this many times the longest call before it.
STALLED_AFTER, STALLED_RATIO = 2.0, 20.0
#: what a file that imports from a folder the sandbox does not share can do (docs/sandbox.md)
_READ_HINT = ("; the sandbox reads the working folder, the mechanism's folder, PYTHONPATH and the "
              "installed packages only: run dpaudit from the folder the file imports from, put that "
              "folder on PYTHONPATH, or pass --isolation=process for code you trust")
#: Seconds between two looks at the child while waiting for its reply.
_POLL = 0.1
#: Open files and extra processes the child may have.
_NOFILE, _PROCESSES = 1024, 64
#: The child's first code (``python -I -c``, argv: fd in, fd out, the folder holding this
#: dpaudit): this very dpaudit package, loaded from that folder without putting the folder on the
#: import path (it may be the working folder), then :func:`dpaudit.execution.child.main`.
_BOOT = ("import sys; from importlib.machinery import PathFinder; "
         "from importlib.util import module_from_spec; "
         "spec = PathFinder.find_spec('dpaudit', [sys.argv[3]]); "
         "sys.modules['dpaudit'] = package = module_from_spec(spec); "
         "spec.loader.exec_module(package); "
         "from dpaudit.execution.child import main; main()")


def _occupy_standard_fds() -> None:
    """Put /dev/null on any of fds 0-2 that is closed (dpaudit run with ``>&-``), so that no pipe
    to the child takes a standard number and is clobbered when the child's stdout is set up."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)


def _private_root() -> Optional[str]:
    """Where the child's private folder goes: ``$DPAUDIT_SANDBOX_DIR``, else ``/dev/shm`` (memory,
    so shared outputs cost no disk), else the temporary folder."""
    chosen = os.environ.get("DPAUDIT_SANDBOX_DIR")
    if chosen:
        return chosen
    return "/dev/shm" if os.access("/dev/shm", os.W_OK) else None


class SandboxFailure(BaseException):
    """A plain call (:meth:`SandboxExecutor.call`) failed in a way that ends the search: the
    child crashed, hung, ran out of time or tripped its isolation. A BaseException, so that the
    search's handling of the function's own exceptions lets it through. ``forged``: the child sent
    a reply no honest child sends (:class:`~dpaudit.execution.wire.ForgedReply`); ``time_limit``:
    the run's total time limit stopped the call (TimeLimitReached: the user's limit, not a fault
    of the function)."""

    def __init__(self, cause: str, forged: bool = False, time_limit: bool = False) -> None:
        super().__init__(cause)
        self.cause = cause
        self.forged = forged
        self.time_limit = time_limit


class SandboxExecutor:
    """Runs the mechanism ``function`` of the file ``path`` in one isolated child process.

    ``call_timeout`` (seconds, per call), ``total_timeout`` (seconds from :meth:`spawn`, or None)
    and ``memory`` (bytes, or a string like ``"2G"``; None for no cap) are validated here;
    ``isolation`` is ``"strict"`` (Landlock and seccomp where available, else the process only) or
    ``"process"``; ``pass_env`` names environment variables the child may see besides the few
    Python needs. Use it as a context manager, or call :meth:`close`; :meth:`start` is called by
    the first :meth:`run` and raises :class:`LoadError` when the child cannot load the file.
    After :meth:`start`, :attr:`isolation_in_force` says what the child got and :attr:`facts`
    describes the mechanism (its name, declaration, call form, source line).
    """

    def __init__(self, path: str, function: Optional[str] = None, *,
                 call_timeout: Optional[float] = DEFAULT_CALL_TIMEOUT,
                 total_timeout: Optional[float] = None,
                 memory: Any = DEFAULT_MEMORY, isolation: str = "strict",
                 pass_env: Sequence[str] = (), stated_timeout: Optional[float] = None) -> None:
        self.path = str(path)
        self.function = function
        self.call_timeout = check_seconds(call_timeout, "call_timeout")
        self.total_timeout = check_seconds(total_timeout, "total_timeout")
        #: the limit as the user gave it, for messages (``total_timeout`` may add dpaudit's grace)
        self.stated_timeout = stated_timeout if stated_timeout is not None else self.total_timeout
        self.memory = None if memory is None else parse_memory(memory)
        if isolation not in ("strict", "process"):
            raise InvalidArgument.bad("isolation", isolation, "'strict' or 'process'")
        self.isolation = isolation
        self.pass_env = tuple(pass_env)
        self.children_started = 0
        self.isolation_in_force: Optional[str] = None
        self.facts: dict = {}
        #: the audited file as this process read it before any child ran (wire.AuditedFile)
        self.audited: Optional[AuditedFile] = None
        self._proc: Optional[subprocess.Popen] = None
        self._send: Optional[Connection] = None
        self._recv: Optional[Connection] = None
        self._tail: Optional[OutputTail] = None
        self._pool: Optional[OutputPool] = None     # shared buffers numeric outputs come back in
        #: close() runs once at a time: a signal's handler and the fresh-process check's thread
        #: may both close the same executor (each buffer's descriptor is closed once)
        self._closing = threading.RLock()  # re-entrant: a signal handler on a closing thread
        self._workdir: Optional[str] = None         # the child's private folder
        self._calls: Optional[int] = None    # a descriptor of the child's call counter file
        self._tried: Optional[int] = None    # the read end of the audit hook's pipe
        self._deadline: Optional[float] = None
        #: the longest a call of the mechanism took so far (seconds; from the child's call counter)
        self._longest = 0.0
        self._ready = False

    # -- lifecycle -------------------------------------------------------------------------
    @property
    def pid(self) -> Optional[int]:
        """The running child's process id, also its process group (None when none runs)."""
        return None if self._proc is None else self._proc.pid

    def spawn(self) -> None:
        """Start the child without waiting for it: it boots and imports the file while the caller
        does other work. :meth:`start` waits."""
        if self._proc is not None:
            return
        if self._deadline is None and self.total_timeout is not None:
            self._deadline = time.monotonic() + self.total_timeout
        if self.audited is None:  # read here, before the audited code runs anywhere
            self.audited = AuditedFile.read(self.path)
        self._clean_workdir()
        self._workdir = tempfile.mkdtemp(prefix="dpaudit-sandbox-", dir=_private_root())
        tmp = os.path.join(self._workdir, "tmp")
        os.mkdir(tmp)
        counter = os.path.join(self._workdir, "calls")
        with open(counter, "wb") as fh:
            fh.write(bytes(8))
        # read with pread, never mapped: the child can shrink the file, and a mapped page past
        # the end is SIGBUS in dpaudit's own process (killed, no report)
        self._calls = os.open(counter, os.O_RDONLY | os.O_CLOEXEC)
        self._pool = OutputPool(self._workdir)
        env = child_environment(self.pass_env)
        pkg_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        # `python -I`: neither the working folder nor PYTHONPATH is on the child's import path
        # until it is isolated; the user's PYTHONPATH entries are added then (config)
        pythonpath = [os.path.abspath(p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        env.update(TMPDIR=tmp, HOME=tmp)
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            env.setdefault(var, "1")            # per-thread BLAS buffers would eat the memory cap
        _occupy_standard_fds()
        p2c_r, p2c_w = os.pipe()
        c2p_r, c2p_w = os.pipe()
        out_r, out_w = os.pipe()
        tried_r, tried_w = os.pipe()  # the audit hook's line per blocked attempt (isolation.Attempts)
        # -u: the tail of a crash must not sit in a lost buffer; faulthandler: a segfault prints
        # the mechanism's stack; -B: no bytecode written
        cmd = [sys.executable, "-I", "-u", "-B", "-X", "faulthandler", "-c", _BOOT,
               str(p2c_r), str(c2p_w), pkg_root]
        try:
            self._proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out_w,
                                          stderr=out_w, pass_fds=(p2c_r, c2p_w, tried_w), env=env,
                                          close_fds=True, start_new_session=True,
                                          cwd=self._workdir)
        except BaseException:
            os.close(tried_r)
            raise
        finally:
            for fd in (p2c_r, c2p_w, out_w, tried_w):
                os.close(fd)
        os.set_blocking(tried_r, False)
        self._tried = tried_r
        if self._tail is not None:
            self._tail.close()
        self._tail = OutputTail(out_r)
        self.children_started += 1
        self._ready = False
        self.isolation_in_force = None  # this child's own word, read in start()
        self._send = Connection(p2c_w, readable=False)
        self._recv = Connection(c2p_r, writable=False)
        os.set_blocking(c2p_r, False)  # read a piece at a time, under the time limits (_receive)
        cpu = None if self.total_timeout is None else self.total_timeout * (os.cpu_count() or 1) + 30
        target = os.path.abspath(os.path.expanduser(self.path))  # the child works in its own folder
        homes = sorted(user_homes())
        shared = shared_reads(os.getcwd(), target, pkg_root, pythonpath, homes)
        config = {"path": self.path, "target": target, "function": self.function,
                  "call_timeout": self.call_timeout,
                  "memory": self.memory, "cpu": cpu, "nofile": _NOFILE, "processes": _PROCESSES,
                  "isolation": self.isolation, "workdir": self._workdir, "counter": counter,
                  "readable": shared.reads, "listed": shared.listed, "held": shared.held,
                  "homes": homes,
                  "pythonpath": pythonpath, "attempts": tried_w}
        self._send.send_bytes(pickle.dumps(config))

    def _tried_line(self) -> Optional[str]:
        """The first attempt the child's audit hook wrote to its pipe since the child started
        (each is a line), or the news that the audited code closed that pipe; None when neither.
        The hook writes before the call that it names returns, so whatever a batch tried is in
        the pipe by the time its reply is."""
        if self._tried is None:
            return None
        try:
            raw = os.read(self._tried, 4096)
        except BlockingIOError:
            return None
        except OSError:  # pragma: no cover
            return None
        if raw:
            return printable(raw.decode("utf-8", "replace").split("\n", 1)[0][:1200])
        if (self.isolation_in_force or "").startswith("landlock") and self._proc is not None \
                and self._proc.poll() is None:  # only a strict child has the hook that writes here
            return ("closed the channel that names its blocked attempts (the audited code "
                    "tampered with the sandbox)")
        return None

    def start(self) -> None:
        """Start the child (unless :meth:`spawn` did) and wait until it has imported the file;
        raise LoadError if it cannot (the file's own error, or a crash or hang while importing)."""
        self.spawn()
        if self._ready:
            return
        try:
            told = self._receive(_START_GRACE, None, during="entering its isolation", per_call=False)
            if told[0] == "isolated" and len(told) == 2 and isinstance(told[1], str) \
                    and len(told[1]) <= WORDS_MAX:
                # said before the child imported anything from the checkout: the only word on
                # the isolation in force that the audited code could not have rewritten
                self.isolation_in_force = told[1]
                reply = self._receive(_START_GRACE + (self.call_timeout or 0.0), None,
                                      during="importing the file", per_call=False)
            else:
                reply = told
        except MechanismError as exc:
            self._kill()
            hint = _READ_HINT if str(exc.cause).startswith("tried to read ") else ""
            raise LoadError(f"{self.path}: the sandbox could not import it: {exc.cause}{hint}") from None
        if self.isolation_in_force is None:
            self._kill()
            raise LoadError(f"{self.path}: the sandbox child did not say which isolation it "
                            f"entered before importing the file")
        if reply[0] == "load_error" and len(reply) == 2 and isinstance(reply[1], str):
            self._kill()
            raise LoadError(child_text(reply[1]))
        if reply[0] != "ready" or len(reply) != 3 or not isinstance(reply[2], dict):
            self._kill()
            raise LoadError(f"{self.path}: the sandbox child answered "
                            f"{printable(describe_reply(reply))} instead of its description "
                            f"(the audited file tampered with dpaudit in the sandbox)")
        self.facts = dict(reply[2])
        self.facts["source"] = self._source(self.facts.get("source"))
        self._ready = True

    def _source(self, source: Any) -> Optional[tuple]:
        """The function's first line as the child described it, kept only when it is a line of
        the audited file as this process read it (it becomes the location of every report);
        None otherwise (a function defined in another file, or a description the audited code
        forged)."""
        if self.audited is None or type(source) not in (tuple, list) or len(source) != 2:
            return None
        line = self.audited.line_of(source[0], source[1])
        return None if line is None else (self.audited.path, line)

    def close(self) -> None:
        """Stop the child and everything it started, and remove its private folder (safe to call
        again, and from two threads at once)."""
        with self._closing:
            self._kill()
            if self._tail is not None:
                self._tail.close()
                self._tail = None
            if self._pool is not None:
                pool, self._pool = self._pool, None
                pool.close()
            self._clean_workdir()

    def __enter__(self) -> "SandboxExecutor":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:  # pragma: no cover - best effort at interpreter exit
        try:
            self.close()
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
        self._check_deadline(tasks[0].data)
        self.start()
        form = spec.call_form.value
        groups = _bundle(tasks)
        items = [[(t.data, _seed_state(t.seed), t.n) for t in g] for g in groups]
        biggest = max(sum(9 * len(t.data) + 100 for t in g) for g in groups)  # pickled size, roughly
        ahead = _AHEAD if biggest <= _AHEAD_MAX_BYTES else 1
        outputs: list[Any] = []
        lent: list[Optional[tuple]] = []
        try:
            for k in range(min(ahead, len(groups))):
                lent.append(self._send_group(form, items[k], len(groups[k])))
            for k, group in enumerate(groups):
                reply = self._receive(None, group[0].data, during="running a batch")
                if lent[k] is not None:
                    self._pool.release(lent[k][0])
                outputs += self._unpack(reply, lent[k], group)
                if len(lent) < len(groups):
                    j = len(lent)
                    lent.append(self._send_group(form, items[j], len(groups[j])))
        except BaseException:
            self._kill()
            raise
        return outputs

    def call(self, *args: Any) -> Any:
        """One plain call ``f(*args)`` in the child (the sensitivity search); returns its value.
        What ``f`` raises comes back as :class:`RaisedInChild`; a crash, hang, time-out or
        isolation trip raises :class:`SandboxFailure` (the child is then stopped)."""
        data = np.asarray(args[0], dtype=float) if args else None
        try:
            self._check_deadline(data)
            self.start()
            self._post(pickle.dumps(("call", args), protocol=pickle.HIGHEST_PROTOCOL), data)
            reply = self._receive(None, data, during="calling the function")
            if reply[0] == "value" and len(reply) == 2:
                try:  # the value as the encoder would check it
                    return plain_outputs([reply[1]])[0]
                except NotPlain as exc:
                    raise MechanismError(exc.cause, data) from None
            if reply[0] == "raised" and len(reply) == 3 and isinstance(reply[1], str) \
                    and isinstance(reply[2], str) and reply[1].isidentifier() \
                    and len(reply[1]) <= 200:
                raise RaisedInChild.make(reply[1], child_text(reply[2]))
            if reply[0] == "error" and error_reply(reply, 1):
                raise MechanismError(self._with_tail(child_text(reply[1]), reply[2]), data)
            raise ForgedReply(malformed(reply), data)
        except MechanismError as exc:
            self._kill()
            raise SandboxFailure(exc.cause, isinstance(exc, ForgedReply),
                                 isinstance(exc, TimeLimitReached)) from None

    def run_engine(self, name: str, options: dict, limit: Optional[float] = None) -> dict:
        """Run the evidence engine ``name`` (``"dpaudit.MODULE:FUNCTION"``, e.g. the replay audit's
        :func:`dpaudit.replay.audit.replay_record`) on the function in the child, where it lives,
        with ``options`` (plain values only); return the record the child sent, a dict that the
        caller must check (:func:`dpaudit.replay.command.record_from_child`): it is the word of
        the side that runs the audited code. A crash, hang, time-out or isolation trip, or a
        failure the record cannot hold, raises :class:`SandboxFailure` (the child is then
        stopped); the run's total time limit, TimeLimitReached."""
        try:
            self._check_deadline(None)
            self.start()
            self._post(pickle.dumps(("engine", str(name), dict(options)),
                                    protocol=pickle.HIGHEST_PROTOCOL), None)
            reply = self._receive(limit, None, during="running the replay audit",
                                  call_floor=ENGINE_CALL_FLOOR)
            if reply[0] == "record" and len(reply) == 2 and type(reply[1]) is dict:
                return reply[1]
            if reply[0] == "error" and error_reply(reply, 1):
                raise MechanismError(self._with_tail(child_text(reply[1]), reply[2]), None)
            raise ForgedReply(malformed(reply, "a record"), None)
        except TimeLimitReached:
            self._kill()
            raise
        except MechanismError as exc:
            self._kill()
            raise SandboxFailure(exc.cause, isinstance(exc, ForgedReply)) from None

    def _send_group(self, form: str, items: list, size: int) -> Optional[tuple]:
        """Send one message; a single-batch message borrows a shared buffer for its output."""
        buffer = self._pool.lend() if size == 1 else None
        self._post(pickle.dumps(("run", form, items, buffer), protocol=pickle.HIGHEST_PROTOCOL),
                   items[0][0])
        return buffer

    def _post(self, payload: bytes, data: Any) -> None:
        """Send one message; a child that has closed its end (it died, or the audited code closed
        the pipe) is the mechanism's failure, not dpaudit's."""
        try:
            self._send.send_bytes(payload)
        except OSError:
            raise MechanismError(self._with_tail(self._death()),
                                 None if data is None else np.asarray(data, dtype=float)) from None

    def _check_deadline(self, data: Any) -> None:
        if self._deadline is not None and time.monotonic() >= self._deadline:
            self._kill()
            raise TimeLimitReached(f"exceeded the total time limit of {self.stated_timeout:g} s",
                                   None if data is None else np.asarray(data, dtype=float))

    def _unpack(self, reply: tuple, buffer: Optional[tuple], group: list[BatchTask]) -> list[Any]:
        """The outputs of each batch of ``group`` from the child's reply. The reply was written
        by the sandboxed side, which runs the audited code: every part of it is checked here (a
        forged reply of another shape is the mechanism's error, never dpaudit's)."""
        first = np.asarray(group[0].data, dtype=float)
        if reply[0] == "ok" and len(reply) == 2:
            batches = reply[1]
            if type(batches) is not list or len(batches) != len(group):
                raise ForgedReply(malformed(reply, f"outputs of {len(group)} batches"), first)
            for out, task in zip(batches, group):
                if not (type(out) is list or (type(out) is np.ndarray and out.ndim >= 1)) \
                        or len(out) != task.n:
                    raise ForgedReply(malformed(reply, f"{task.n:,} outputs"),
                                      np.asarray(task.data, dtype=float))
            return batches
        if reply[0] == "ok_shared" and len(reply) == 3 and buffer is not None:
            # the dtype and the shape come from the sandboxed side: numbers only, and only what
            # the buffer holds
            try:
                if not isinstance(reply[1], str) or len(reply[1]) > 32 or type(reply[2]) is not tuple \
                        or len(reply[2]) > 32:
                    raise ValueError("no dtype and shape")
                dt = np.dtype(reply[1])
                shape = tuple(int(k) for k in reply[2])
                if dt.kind not in "biufcmM" or dt.fields is not None or dt.subdtype is not None \
                        or min(shape, default=0) < 0 or not shape or shape[0] != group[0].n:
                    raise ValueError(f"dtype {dt.str}, shape {shape}")
                if math.prod(shape) * dt.itemsize > reply_limit(self.memory):
                    raise ValueError(f"{math.prod(shape) * dt.itemsize:,} bytes, more than the "
                                     f"{reply_limit(self.memory):,} dpaudit reads")
                return [self._pool.take(buffer[0], dt.str, shape)]
            except (TypeError, ValueError, IndexError, OverflowError) as exc:
                raise ForgedReply(child_text(f"sent back a malformed shared output ({exc})"),
                                  first) from None
        if reply[0] == "error" and error_reply(reply, len(group)):
            data = np.asarray(group[reply[3]].data, dtype=float)
            raise MechanismError(self._with_tail(child_text(reply[1]), reply[2]), data)
        raise ForgedReply(malformed(reply), first)

    # -- plumbing ---------------------------------------------------------------------------
    def _receive(self, limit: Optional[float], data: Any, *, during: str,
                 per_call: bool = True, call_floor: float = 0.0) -> tuple:
        """Wait for the child's next reply; ``data`` is the dataset a failure is reported on.

        Fails (MechanismError) when ``limit`` seconds pass, the total limit is reached, the child
        dies, or (``per_call``) no call of the mechanism began or ended for the per-call limit
        plus a grace (a call that the child's watchdog could not interrupt)."""
        if data is not None:
            data = np.asarray(data, dtype=float)
        started = time.monotonic()
        stuck = None
        if per_call and self.call_timeout is not None:
            # later than the child's own watchdog would end it, so its message wins when it can
            per = max(self.call_timeout, call_floor)
            stuck = per + min(KILL_GRACE, per) + 0.5 + 2 * _POLL
        seen, since = (self._call_count(), started) if self._calls is not None else (0, started)
        frame = Frame(reply_limit(self.memory))
        while True:
            stopped = stop_received()
            if stopped is not None:
                raise KeyboardInterrupt(stopped)
            ready = wait([self._recv, self._tail], _POLL) if self._tail.fileno() >= 0 \
                else wait([self._recv], _POLL)
            if self._tail in ready:
                self._tail.drain()
            # the reply is read here a piece at a time, under the limits below: a child that sends
            # a length and then stalls cannot hold dpaudit in a blocking read
            if self._recv in ready and self._read_into(frame, data):
                break
            now = time.monotonic()
            if self._proc.poll() is not None:
                # it replied, then died: take the reply first (what is left in the pipe)
                while self._recv.poll(0):
                    if self._read_into(frame, data):
                        break
                if frame.done:
                    break
                raise MechanismError(self._with_tail(self._death()), data)
            if self._deadline is not None and now >= self._deadline:
                limited = TimeLimitReached(self._with_tail(
                    f"exceeded the total time limit of {self.stated_timeout:g} s while {during}"),
                    data)
                if stuck is not None:
                    limited.stalled = self._stalled(now - since)
                raise limited
            if limit is not None and now - started >= limit:
                raise MechanismError(self._with_tail(f"hung: {during} took longer than "
                                                     f"{limit:g} s"), data)
            if stuck is not None:
                calls = self._call_count()
                if calls > seen:
                    self._longest = max(self._longest, (now - since) / (calls - seen))
                if calls != seen:
                    seen, since = calls, now
                elif now - since >= stuck:
                    raise MechanismError(self._with_tail(
                        f"hung: one call ran longer than the per-call limit of "
                        f"{self.call_timeout:g} s and could not be interrupted (stopped by "
                        f"dpaudit)"), data)
        payload = frame.body()
        try:
            reply = safe_pickle.loads(payload)
        except safe_pickle.RefusedGlobal as exc:
            raise ForgedReply(child_text(
                f"sent back an object that names {exc} (refused: dpaudit reads back numbers, "
                f"texts, containers and numpy arrays only, so nothing the sandboxed code chose "
                f"runs in dpaudit's process)"), data) from None
        except safe_pickle.TooLarge as exc:
            raise ForgedReply(f"sent back {exc}, refused before it was read (the audited code "
                              f"wrote to dpaudit's pipe or replaced dpaudit's functions in the "
                              f"sandbox)", data) from None
        except Exception as exc:
            raise MechanismError(child_text(f"returned an output that cannot be read back "
                                            f"({type(exc).__name__}: {exc})"), data) from None
        if not isinstance(reply, tuple) or not reply or not isinstance(reply[0], str):
            raise ForgedReply("sent back garbage instead of outputs", data)  # pragma: no cover
        tried = self._tried_line() if reply[0] not in ("error", "load_error") else None
        if tried is not None:  # named by the hook even where the audited code silenced the child
            raise MechanismError(tried, data)
        return reply

    def _read_into(self, frame: "Frame", data: Any) -> bool:
        """Read what the reply pipe holds into ``frame``; True once a whole message is in."""
        try:
            chunk = os.read(self._recv.fileno(), frame.wanted())
        except BlockingIOError:
            return False
        except OSError:
            raise MechanismError(self._with_tail(self._death()), data) from None
        if not chunk:  # end of file: the child closed its end
            raise MechanismError(self._with_tail(self._death()), data)
        try:
            return frame.feed(chunk)
        except TooLarge as exc:  # said plainly (honest outputs too large, or a forged length),
            self._kill()           # and an ERROR wherever it arrives, as any reply dpaudit refuses
            raise ForgedReply(
                f"returned outputs too large to read: a reply of {exc.size:,} bytes, more than the "
                f"{exc.limit:,} bytes ({exc.limit >> 20:,} MiB) dpaudit reads at once (a release of "
                f"millions of values; return a summary, or fewer values per call)", data) from None
        except ValueError as exc:
            self._kill()
            raise ForgedReply(printable(f"sent back a malformed reply ({exc})"), data) from None

    def _death(self) -> str:
        try:
            code = self._proc.wait(timeout=5.0)
        except subprocess.TimeoutExpired:  # pragma: no cover - closed its pipe but lives on
            self._kill()
            return "closed the channel to dpaudit"
        if code == WATCHDOG_EXIT:
            how = (f"hung: one call ran longer than the per-call limit of {self.call_timeout:g} s "
                   f"and could not be interrupted")
        else:
            how = describe_exit(code)
        tried = self._tried_line()  # what its audit hook named, even if the child died before
        return f"{tried}; then {how}" if tried else how

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        for conn in (self._send, self._recv):
            if conn is not None:
                try:
                    conn.close()
                except OSError:  # pragma: no cover
                    pass
        self._send = self._recv = None
        kill_tree(proc)
        if self._tail is not None and proc is not None:
            self._tail.drain()
        self._ready = False

    def _stalled(self, running: float) -> Optional[str]:
        """What to say of the call in flight when the total time limit stops it: that it may
        never return, when it has run :data:`STALLED_AFTER` seconds and :data:`STALLED_RATIO`
        times the longest call before it (a time limit below the per-call limit cannot tell a
        hang from a slow call; this says which it looks like), else None."""
        if self._longest <= 0 or running < max(STALLED_AFTER, STALLED_RATIO * self._longest):
            return None
        return (f"one call had run {running:.3g} s without returning (the longest before it: "
                f"{self._longest:.2g} s), so it may never return; a --timeout above the per-call "
                f"limit of {self.call_timeout:g} s tells a hang from a slow call")

    def _call_count(self) -> int:
        """The child's call counter (8 native bytes at the start of ``calls``); -1 once the file
        is shorter (the audited code shrank it): no progress from then on."""
        raw = os.pread(self._calls, 8, 0)
        return int.from_bytes(raw, sys.byteorder) if len(raw) == 8 else -1

    def _clean_workdir(self) -> None:
        if self._calls is not None:
            os.close(self._calls)
            self._calls = None
        if self._tried is not None:
            os.close(self._tried)
            self._tried = None
        if self._workdir is not None:
            remove_tree(self._workdir)
            self._workdir = None

    def output_tail(self, max_chars: int = 300) -> str:
        """The last lines the child printed (stdout and stderr), joined by `` | ``, control
        characters escaped."""
        return "" if self._tail is None else self._tail.summary(self.path, max_chars)

    def _with_tail(self, cause: str, show_tail: bool = True) -> str:
        tail = self.output_tail() if show_tail else ""
        return f"{cause}; its last output: {tail}" if tail else cause


def stop_received() -> Optional[str]:
    """The signal (``"SIGTERM"``, ``"SIGHUP"``, ``"Ctrl-C"``) that the
    :class:`~dpaudit.execution.process.StopOnSignals` installed in this process has received, or
    None (none installed, or no signal yet).

    Its handler raises KeyboardInterrupt wherever the main thread is, and ignores any later
    signal; an interrupt raised inside code that swallows every exception is lost. The first
    import of ``numpy.random._generator`` (and of other Cython modules with memoryviews) is such
    code: it registers Cython's memoryview types with ``collections.abc.Sequence`` and ignores
    any failure, and ``dpaudit check`` makes that import while the sandbox child boots. A SIGTERM
    landing there left the audit running to its ``--timeout``. :meth:`SandboxExecutor._receive`
    asks this at each look at the child and raises the interrupt again, so a stop is never lost
    for longer than one poll of the sandbox."""
    for name in StopOnSignals._SIGNALS:
        sig = getattr(signal, name, None)
        owner = getattr(signal.getsignal(sig), "__self__", None) if sig is not None else None
        if isinstance(owner, StopOnSignals) and owner.received is not None:
            return owner.received
    return None


def remove_tree(path: str) -> None:
    """Remove the child's private folder whatever the audited code left in it, never raising.

    ``shutil.rmtree`` is recursive in Python before 3.12: 3,000 nested folders made it raise
    RecursionError (an internal error of dpaudit, the verdict lost, the folder left in
    /dev/shm), and a folder the code made unreadable (``chmod 0``) was skipped without
    capabilities. What rmtree leaves is removed by coreutils after its permissions are restored
    (``rm`` walks any depth with ``openat``)."""
    try:
        shutil.rmtree(path, ignore_errors=True)
    except BaseException:  # noqa: BLE001 - RecursionError included: cleanup never fails dpaudit
        pass
    if not os.path.lexists(path):
        return
    for cmd in (["chmod", "-R", "u+rwx", "--", path], ["rm", "-rf", "--one-file-system", "--", path]):
        try:
            subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=60, check=False)
        except (OSError, subprocess.SubprocessError):
            return


class RaisedInChild(Exception):
    """What the function raised in the child, re-raised here under the same class name."""

    _classes: dict = {}

    @classmethod
    def make(cls, name: str, message: str) -> "RaisedInChild":
        klass = cls._classes.get(name)
        if klass is None:
            klass = cls._classes[name] = type(name, (cls,), {})
        return klass(message)


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
