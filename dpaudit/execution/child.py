"""The child side of :mod:`dpaudit.execution.sandbox`: import the mechanism's file, then serve batches.

Started as ``python -I -c BOOT FD_IN FD_OUT ROOT`` (``sandbox._BOOT`` loads this dpaudit from
ROOT) in its own session and its private folder, with its stdout and stderr going to a pipe whose
tail the parent keeps; neither the working folder nor ``PYTHONPATH`` is on its import path. It
reads its configuration (path, function, per-call limit, resource limits, isolation level, private
folder, the user's ``PYTHONPATH``) from FD_IN, sets its resource limits, enters its isolation
(:mod:`dpaudit.execution.isolation`) having imported only the standard library's essentials, then
imports numpy and the rest of dpaudit, and the file with :func:`dpaudit.loader.load_mechanism`
(the only place it is ever imported),
answers ``("isolated", isolation)`` before it imports anything from the checkout, then
``("ready", pid, facts)`` (or ``load_error``), and then serves messages:
``("run", call_form, batches, buffer)`` runs batches through
:meth:`dpaudit.spec.MechanismSpec.call_batch`, exactly as the in-process executor does (a message
carries one or more batches ``(data, seed state, n)``); ``("call", args)`` makes one plain call
(the sensitivity search) and answers ``("value", out)`` or ``("raised", type, message)``.

Replies: ``("ok", [outputs, ...])`` (pickled), ``("ok_shared", dtype, shape)`` (the one batch's
numeric array, copied into the shared buffer the parent lent, :mod:`dpaudit.execution.shared_outputs`), or
``("error", cause, show_tail, index)`` naming the batch of the message that failed. A call that makes no
progress for the per-call limit is interrupted by a watchdog thread (:class:`CallTimeout` raised in
the main thread); one that ignores the interruption is ended with exit status
:data:`WATCHDOG_EXIT`.
"""

from __future__ import annotations

import os
import pickle
import signal
import struct
import sys
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Optional

if TYPE_CHECKING:  # bound by _import_after_isolation(), once the child is isolated
    from multiprocessing.connection import Connection

    import numpy as np

    from dpaudit.errors import LoadError, MechanismError
    from dpaudit.execution.described import opaque_outputs
    from dpaudit.execution.shared_outputs import BufferWriter
    from dpaudit.rng import generator

__all__ = ["main", "CallTimeout", "WATCHDOG_EXIT", "KILL_GRACE", "ENGINE_CALL_FLOOR", "describe_size"]

#: Exit status of a child whose watchdog gave up on a call that ignored the interruption.
WATCHDOG_EXIT = 86
#: Seconds a call gets to react to the watchdog's interruption before the child exits.
KILL_GRACE = 2.0
#: While an evidence engine runs in the child, the watchdog's limit is at least this: the engine's
#: own work between two calls of the function (comparing the runs, reading every generator's state,
#: one call traced line by line) is dpaudit's, and under load it took longer than a tight
#: ``--call-timeout`` and was reported as the mechanism hanging
ENGINE_CALL_FLOOR = 2.0


class CallTimeout(BaseException):
    """Raised in the child's main thread by the watchdog (a BaseException, so that a mechanism's
    ``except Exception`` cannot swallow it; marked as dpaudit's interruption, so an engine run
    in the child, :func:`_engine`, lets it through instead of reporting the mechanism raised
    it)."""

    dpaudit_interrupt = True


def describe_size(n: int) -> str:
    """``2 GiB``, ``512 MiB`` or ``N bytes``."""
    for unit, scale in (("GiB", 1024 ** 3), ("MiB", 1024 ** 2)):
        if n >= scale:
            return f"{n / scale:g} {unit}"
    return f"{n} bytes"


def hung(call_timeout: Optional[float]) -> str:
    return f"hung: one call ran longer than the per-call limit of {call_timeout:g} s"


class _Watchdog:
    """Interrupts the main thread when no call has started or ended for ``limit`` seconds while a
    batch runs. ``calls`` is bumped by the wrapped mechanism (two integer stores per call)."""

    def __init__(self, limit: float, shared: Optional[memoryview] = None) -> None:
        self.limit = limit
        self.calls = 0
        self.shared = shared   # the same count, read by the parent's own per-call limit
        self.busy = False      # a batch is running (set and cleared by the main loop)
        self.raised = False    # the interruption was raised during this batch
        self.main_id = threading.main_thread().ident
        signal.signal(signal.SIGUSR1, self._on_signal)
        threading.Thread(target=self._loop, name="dpaudit-watchdog", daemon=True).start()

    def _on_signal(self, signum: int, frame: Any) -> None:
        if self.busy and not self.raised:  # once per batch: never while handling the first
            self.raised = True
            raise CallTimeout()

    def begin(self) -> None:
        self.raised = False
        self.busy = True

    def _loop(self) -> None:
        tick = min(0.5, self.limit / 10)
        seen, since, fired_at = self.calls, time.monotonic(), None
        while True:
            time.sleep(tick)
            now, calls = time.monotonic(), self.calls
            if not self.busy or (calls != seen and fired_at is None):
                seen, since, fired_at = calls, now, None
            elif fired_at is None and now - since >= self.limit:
                fired_at = now
                signal.pthread_kill(self.main_id, signal.SIGUSR1)
            elif fired_at is not None and now - fired_at >= min(KILL_GRACE, self.limit):
                os._exit(WATCHDOG_EXIT)

    def wrap(self, func: Any) -> Any:
        shared = self.shared

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            if shared is not None:
                shared[0] += 1
            try:
                return func(*args, **kwargs)
            finally:
                self.calls += 1
                if shared is not None:
                    shared[0] += 1

        return counted


def _cause(exc: MechanismError, call_timeout: Optional[float], memory: Optional[int]) -> str:
    root = exc.__cause__
    if isinstance(root, CallTimeout):
        return hung(call_timeout)
    if isinstance(root, MemoryError):
        cap = f" of {describe_size(memory)}" if memory is not None else ""
        detail = str(root).splitlines()[0] if str(root) else ""
        return f"exceeded the memory cap{cap} (MemoryError{': ' + detail if detail else ''})"
    return exc.cause


def _describe_loaded(loaded: Any) -> dict:
    """What the parent needs to know about the mechanism without importing its file."""
    import inspect

    from dpaudit.spec import _call_form, _source, declaration_of

    decl = declaration_of(loaded.func)
    fields = None
    if decl is not None:
        fields = {"epsilon": decl.epsilon, "delta": decl.delta, "size": decl.size,
                  "neighbours": None if decl.neighbours is None else decl.neighbours.value,
                  "domain": None if decl.domain is None else (decl.domain.lo, decl.domain.hi),
                  "output": None if decl.output is None else decl.output.value}
    try:
        form, form_error = _call_form(loaded.func).value, None
    except Exception as exc:
        form, form_error = None, str(exc)
    bound = getattr(loaded.func, "sensitivity", None)
    return {"function": loaded.function, "path": loaded.path, "found_by": loaded.found_by,
            "declaration": fields, "call_form": form, "call_form_error": form_error,
            "positional": _arity(inspect, loaded.func), "source": _source(loaded.func),
            "sensitivity": bound if isinstance(bound, (int, float)) else None}


def _arity(inspect: Any, func: Any) -> Optional[int]:
    """How many positional arguments ``func`` takes (None: any number, or unknown)."""
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return None
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)


def _counter(path: Optional[str]) -> Optional[memoryview]:
    """The call counter the parent reads (a shared 8-byte file), or None."""
    if path is None:
        return None
    import mmap

    fd = os.open(path, os.O_RDWR)
    try:
        return memoryview(mmap.mmap(fd, 8)).cast("Q")
    finally:
        os.close(fd)


def _read_message(fd: int) -> bytes:
    """One message of :class:`multiprocessing.connection.Connection`'s framing, read from ``fd``
    with plain reads (multiprocessing is imported only once the child is isolated)."""
    def read(n: int) -> bytes:
        chunks = []
        while n > 0:
            chunk = os.read(fd, n)
            if not chunk:
                raise EOFError
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)

    (size,) = struct.unpack("!i", read(4))
    if size == -1:
        (size,) = struct.unpack("!Q", read(8))
    return read(size)


def _import_after_isolation() -> None:
    """Bind numpy and the dpaudit modules that pull it in, once the child is isolated: before
    :func:`dpaudit.execution.isolation.enter` the child imports only the standard library's
    essentials, so no native library's start-up code and no module from a folder the audited
    code could plant a file in runs with the child's full rights."""
    global Connection, np, LoadError, MechanismError, opaque_outputs, BufferWriter, generator
    from multiprocessing.connection import Connection

    import numpy as np

    from dpaudit.errors import LoadError, MechanismError
    from dpaudit.execution.base import no_interrupts
    from dpaudit.execution.described import opaque_outputs
    from dpaudit.execution.shared_outputs import BufferWriter
    from dpaudit.rng import generator

    no_interrupts()  # a call that never returns here is dpaudit's process's to end, and to time


def _buffer_stdout() -> None:  # pragma: no cover - runs in the child
    """The audited code's ``print`` line-buffered: the child runs ``python -u`` (a crash's tail
    must not sit in a lost buffer), which wrote each piece of a print (every argument, separator
    and end) to the parent's pipe on its own: 50 prints a call made an audit several times
    slower. A line is written whole now, and still before a crash can lose it; stderr stays
    unbuffered (tracebacks, faulthandler), and stdout is flushed before every reply
    (:func:`_flush_stdout`: a last line with no newline)."""
    import io

    try:
        sys.stdout = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w", closefd=False), 1 << 16),
                                      encoding="utf-8", errors="backslashreplace",
                                      line_buffering=True, write_through=False)
    except (OSError, ValueError):  # no stdout to wrap: leave it as it is
        pass


def _flush_stdout() -> None:  # pragma: no cover - runs in the child
    try:
        sys.stdout.flush()
    except Exception:  # noqa: BLE001 - the audited code closed or replaced it: nothing to keep
        pass


def main() -> None:  # pragma: no cover - runs in the child; covered by tests/unit/test_sandbox.py
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    config = pickle.loads(_read_message(int(sys.argv[1])))
    call_timeout, memory = config["call_timeout"], config["memory"]
    from dpaudit.execution.isolation import describe_attempt, enter, limit_resources

    limit_resources(memory, config["cpu"], config["nofile"], config["processes"])
    isolation, attempts = enter(config["isolation"], workdir=config["workdir"],
                                readable=config["readable"], channel=config["attempts"],
                                held=config["held"], listed=config["listed"],
                                homes=config["homes"])
    # the user's folders the child may import from, where Landlock holds it to them
    # (shares.shared_reads: those shared whole or entry by entry)
    shared = None
    if attempts is not None:
        shared = {os.path.realpath(p) for p in [*config["readable"], *config["listed"]]}
    # The isolation in force is told now, before anything from the checkout can run (the user's
    # PYTHONPATH, numpy, the audited file): code imported later could rewrite a later message.
    from multiprocessing.connection import Connection as _Connection
    send = _Connection(int(sys.argv[2]), readable=False)
    send.send_bytes(pickle.dumps(("isolated", isolation)))
    # isolated from here on: the user's PYTHONPATH, the rest of dpaudit, numpy, the audited file
    sys.path[:0] = [p for p in config["pythonpath"]
                    if p not in sys.path and (shared is None or os.path.realpath(p) in shared)]
    _import_after_isolation()
    from dpaudit.claims import PureDP
    from dpaudit.loader import load_mechanism
    from dpaudit.spec import CallForm, MechanismSpec

    _buffer_stdout()
    recv = Connection(int(sys.argv[1]), writable=False)
    counter = _counter(config["counter"])
    writer = BufferWriter()
    if attempts is not None:
        attempts.install()  # from here on, what the audited code tries is named
    loaded = _import_mechanism(load_mechanism, config, attempts, isolation, describe_attempt, send,
                               shared)
    if loaded is None:
        return

    from dpaudit.execution.safe_pickle import pack

    broken = None
    try:
        watchdog = _Watchdog(call_timeout, counter) if call_timeout is not None else None
    except RuntimeError as exc:  # no thread left to start: the file started too many
        watchdog, broken = None, (f"left no thread for dpaudit's watchdog ({exc}; the file "
                                  f"started too many threads)")
    func = watchdog.wrap(loaded.func) if watchdog is not None else loaded.func
    specs: dict[str, MechanismSpec] = {}

    def spec_of(form: str) -> MechanismSpec:
        spec = specs.get(form)
        if spec is None:
            spec = specs[form] = MechanismSpec(func=func, claim=PureDP(1.0),
                                               call_form=CallForm(form), name=loaded.function)
        return spec

    while True:
        try:
            message = pickle.loads(recv.recv_bytes())
        except EOFError:
            return
        if broken is not None:
            reply = ("error", broken, True, 0)
        else:
            reply = _answer(message, loaded, func, spec_of, writer, watchdog, call_timeout, memory)
            if reply is None:
                return
        _flush_stdout()  # what the mechanism printed reaches the kept tail before the reply
        send.send_bytes(_reply_bytes(reply, attempts, isolation, describe_attempt, pack))


def _import_mechanism(load_mechanism: Callable, config: dict, attempts: Any, isolation: str,
                      describe_attempt: Callable, send: Any,
                      shared: Optional[set] = None) -> Any:  # pragma: no cover - in the child
    """Import the mechanism's file (the only place it is ever imported) and answer ``ready`` with
    what the parent needs to know of it, its folder put on the import path (where the child may
    read it whole: ``shared``, real paths, None when every folder is); or answer ``load_error``
    (what the import raised, or what it tried that the sandbox denied) and return None."""
    # the file by its absolute path (the child's folder is its private one), named as the user
    # gave it
    shown, target = config["path"], config["target"]
    try:
        loaded = load_mechanism(target, config["function"])
    except KeyboardInterrupt:
        loaded = None
        message = f"{shown}: importing it raised KeyboardInterrupt"
    except LoadError as exc:
        loaded, message = None, str(exc).replace(target, shown)
    if loaded is None:
        tried = attempts.take() if attempts is not None else None
        folder = os.path.dirname(target)
        if tried:
            message += f" ({describe_attempt(tried, isolation)})"
        elif shared is not None and os.path.realpath(folder) not in shared \
                and "ModuleNotFoundError" in message:
            message += (f" (the sandbox shares only the mechanism's file from {folder}, which is "
                        "too broad to share: keep the mechanism in a folder of its own, beside the "
                        "modules it imports)")
        elif shared is not None and "ModuleNotFoundError" in message:
            # a folder the file put on sys.path itself is not shared: its modules are not found
            message += (" (if that module lives in a folder the sandbox does not share: run dpaudit "
                        "from that folder, put it on PYTHONPATH, or pass --isolation=process for "
                        "code you trust)")
        send.send_bytes(pickle.dumps(("load_error", message)))
        return None
    tried = attempts.take() if attempts is not None else None
    if tried:
        send.send_bytes(pickle.dumps(("load_error", f"{config['path']}: importing it "
                                      f"{describe_attempt(tried, isolation)}")))
        return None
    send.send_bytes(pickle.dumps(("ready", os.getpid(), _describe_loaded(loaded))))
    folder = os.path.dirname(loaded.path)  # imports made inside the mechanism find its siblings
    if folder not in sys.path and (shared is None or os.path.realpath(folder) in shared):
        sys.path.insert(0, folder)
    return loaded


def _answer(message: tuple, loaded: Any, func: Any, spec_of: Callable, writer: BufferWriter,
            watchdog: Optional[_Watchdog], call_timeout: Optional[float],
            memory: Optional[int]) -> Optional[tuple]:  # pragma: no cover - in the child
    """The reply to one message of dpaudit's process (module docstring), or None for a message
    it does not send (the child then ends). ``spec_of(form)`` is the function's spec for a call
    form, made once."""
    if message[0] == "call":
        return _call(func, message[1], watchdog, call_timeout, memory)
    if message[0] == "engine" and len(message) == 3 and isinstance(message[2], dict):
        return _engine(message[1], loaded.func, func, message[2], watchdog, call_timeout, memory)
    if message[0] != "run":
        return None
    _, form, items, buffer = message
    writer.open(buffer)  # at once: the parent unlinks a new buffer's name when we reply
    spec = spec_of(form)
    outputs: list = []
    for index, (data, (entropy, key, pool, spawned), n) in enumerate(items):
        seed = np.random.SeedSequence(entropy, spawn_key=key, pool_size=pool,
                                      n_children_spawned=spawned)
        cause = _run_batch(spec, watchdog, data, seed, n, outputs, call_timeout, memory)
        if cause is not None:
            return ("error", cause, True, index)
    return writer.put(outputs[0], buffer) if len(items) == 1 else ("ok", outputs)


def _reply_bytes(reply: tuple, attempts: Any, isolation: str, describe_attempt: Callable,
                 pack: Callable) -> bytes:  # pragma: no cover - in the child
    """``reply`` as the bytes sent back: an error instead when the audit hook named a denied
    attempt, numpy values in the form dpaudit's process reads (:func:`dpaudit.execution.safe_pickle.pack`), and an error
    naming the first output that does not pickle."""
    tried = attempts.take() if attempts is not None else None
    if tried:  # denied by the kernel; named here even when the mechanism swallowed the error
        reply = ("error", describe_attempt(tried, isolation), False, 0)
    if reply[0] in ("ok", "value", "record"):  # numpy values as dpaudit's process reads them
        reply = (reply[0], pack(reply[1]))
    try:
        return pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:
        return pickle.dumps(("error", f"returned an output that cannot be sent back "
                             f"({type(exc).__name__}: {str(exc)[:120]})", False,
                             _unpicklable(reply[1] if reply[0] in ("ok", "value") else [])))


def _call(func: Any, args: tuple, watchdog: Optional[_Watchdog], call_timeout: Optional[float],
          memory: Optional[int]) -> tuple:  # pragma: no cover - in the child
    """One plain call ``func(*args)`` (the sensitivity search): its value, what it raised, or why
    it failed."""
    from dpaudit.execution.described import portable_outputs
    from dpaudit.output_values import NotPlain

    if watchdog is not None:
        watchdog.begin()
    try:
        return ("value", portable_outputs([func(*args)])[0])
    except NotPlain as exc:
        return ("error", exc.cause, False, 0)
    except (CallTimeout, MemoryError, SystemExit) as exc:
        return _stopped(exc, call_timeout, memory)
    except BaseException as exc:  # KeyboardInterrupt included: the function raised it
        text = str(exc).splitlines()[0] if str(exc) else ""
        return ("raised", type(exc).__name__, text[:500])
    finally:
        if watchdog is not None:
            watchdog.busy = False


def _stopped(exc: BaseException, call_timeout: Optional[float],
             memory: Optional[int]) -> tuple:  # pragma: no cover - in the child
    """The error reply of a call the watchdog interrupted, that ran out of memory or that called
    ``sys.exit``."""
    if isinstance(exc, CallTimeout):
        return ("error", hung(call_timeout), True, 0)
    if isinstance(exc, MemoryError):
        cap = f" of {describe_size(memory)}" if memory is not None else ""
        return ("error", f"exceeded the memory cap{cap} (MemoryError: {str(exc)[:80]})", True, 0)
    return ("error", f"called sys.exit({getattr(exc, 'code', None)!r})", True, 0)


def _engine(name: str, original: Any, func: Any, options: dict, watchdog: Optional[_Watchdog],
            call_timeout: Optional[float], memory: Optional[int]) -> tuple:  # pragma: no cover
    """Run an evidence engine here, where the function lives: ``name`` is
    ``"dpaudit.MODULE:FUNCTION"`` (the record-and-replay audit's
    :func:`dpaudit.replay.audit.replay_record`), called as ``FUNCTION(f, **options)`` and
    returning a plain dict of JSON values, which dpaudit's process checks before it reads it.
    The engine is named by the caller (dpaudit's process), so this layer imports no engine. The
    watchdog counts each call of ``f``. Replies ``("record", dict)`` or ``("error", …)``."""
    import functools
    import importlib

    module, _, attr = str(name).partition(":")
    if not module.startswith("dpaudit.") or not attr.isidentifier():
        return ("error", f"dpaudit asked for an unknown engine {name!r}", False, 0)
    engine = getattr(importlib.import_module(module), attr)  # its imports load before any call
    counted = functools.update_wrapper(watchdog.wrap(original), original) \
        if watchdog is not None else func
    limit = watchdog.limit if watchdog is not None else None
    if watchdog is not None:
        watchdog.limit = max(limit, ENGINE_CALL_FLOOR)
        watchdog.begin()
    try:
        return ("record", engine(counted, **options))
    except (CallTimeout, MemoryError, SystemExit) as exc:
        return _stopped(exc, watchdog.limit if watchdog is not None else call_timeout, memory)
    except Exception as exc:  # noqa: BLE001 - a claim the engine refuses: the target's ERROR
        return ("error", f"{type(exc).__name__}: {str(exc)[:300]}", False, 0)
    finally:
        if watchdog is not None:
            watchdog.busy = False
            watchdog.limit = limit


def _unpicklable(outputs: list) -> int:
    """The index of the first output that does not pickle (0 when they all do one by one)."""
    for i, out in enumerate(outputs):
        try:
            pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:
            return i
    return 0


def _run_batch(spec: Any, watchdog: Optional[_Watchdog], data: tuple, seed: Any, n: int,
               outputs: list, call_timeout: Optional[float],
               memory: Optional[int]) -> Optional[str]:  # pragma: no cover - in the child
    """Run one batch; append its outputs as plain values, or return the cause of its failure.
    The outputs are checked and converted while the watchdog still counts the batch's time."""
    from dpaudit.execution.described import portable_outputs
    from dpaudit.output_values import NotPlain

    if watchdog is not None:
        watchdog.begin()
    cause = None
    try:
        raw = spec.call_batch(np.asarray(data, dtype=float), generator(seed), n)
        try:
            outputs.append(portable_outputs(raw))
        except NotPlain as exc:
            cause = exc.cause
        except MemoryError:
            cause = "exceeded the memory cap" + (f" of {describe_size(memory)}" if memory else "")
        except Exception as exc:  # a library's table that would not convert
            cause = (f"returned an output dpaudit cannot read ({type(exc).__name__}: "
                     f"{str(exc)[:120]})")
    except MechanismError as exc:
        cause = _cause(exc, call_timeout, memory)
    except SystemExit as exc:
        cause = f"called sys.exit({exc.code!r})"
    except CallTimeout:  # raised between two calls of a loop: still a call past the limit
        cause = hung(call_timeout)
    except KeyboardInterrupt:  # raised by the mechanism itself (Ctrl-C never reaches the child)
        cause = "raised KeyboardInterrupt"
    if watchdog is not None:
        watchdog.busy = False
    return cause
