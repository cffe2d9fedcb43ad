"""Noise drawn from a generator dpaudit did not hand over.

A mechanism ``f(data, rng)`` that ignores ``rng`` and draws from a generator of its own, seeded at
import from the process id or the clock (``_g = np.random.default_rng(os.getpid())``), looks
random to every sampled check: its draws change from call to call, and two fresh processes (two
pids) disagree. Yet a pid has about 22 bits, and a clock is known to whoever saw the release's
time: the noise of a real run can be recomputed and subtracted.

The replay sees it. Every generator that outlives a call (numpy ``BitGenerator`` s, which hold the
state of every ``Generator`` and legacy ``RandomState``, numpy's global state behind
``np.random.*``, and ``random.Random`` s, the ``random`` module's included) is found once, when the
replay starts (after the warm-up call, so a generator made lazily at the first call is found too),
and its state is read before and after each recorded call: a state that changed is a draw of the
audited code from a generator that was not the ``rng`` of that call. Such a draw is:

* **derived** from the ``rng``, hence fine, when the generator's state after the call is a function
  of the ``rng`` given: two calls on the same data with the same ``rng`` seed leave it in the same
  state, and a call with another seed leaves it in another (``np.random.seed(rng.integers(…))``
  before drawing from numpy's global state; a generator made in the call from ``rng.integers``,
  ``rng.spawn`` or ``rng.bit_generator`` never outlives the call and is not looked at);
* **outside** noise otherwise: an ERROR naming the line of the draw (found by one more call,
  traced line by line), where the generator was made (the assignment in the source that holds
  it, or the ``np.random.seed`` / ``random.seed`` call of a global state), and how it was seeded
  where that can be read (the process id, the clock, a constant, the OS's entropy: from the
  source of that line, and from the seed a numpy ``SeedSequence`` keeps).

``def f(data)`` draws its own randomness by contract: there a generator of its own is expected,
and only one seeded from the process id or the clock is an ERROR (a constant seed makes every
process release the same noise, which the fresh-process check refutes). Cryptographic randomness
(``secrets``, ``random.SystemRandom``, ``os.urandom``) has no state to replay and is never flagged;
neither is OpenDP's, drawn in native code.

Limits: a generator made and seeded inside each call from the clock is new at every call and is
not seen (its draws differ between two calls on the same seed, like fresh noise); a generator
drawn in another thread than the call's, or one hidden where the garbage collector does not
track it (native code), is not seen either; and code that detects the audit can draw from the
``rng`` only while it is audited ([What NOT REFUTED rests on](reports.md#what-not-refuted-rests-on)).
"""

from __future__ import annotations

import ast
import gc
import linecache
import os
import random
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from dpaudit.replay.session import MechanismFailed

__all__ = ["OutsideWatch", "MARK", "state_of"]

#: the words every ERROR of this check carries (``dpaudit.replay.command`` makes such an ERROR of
#: the replay stage the target's ERROR)
MARK = "a generator dpaudit did not hand over"

_NUMPY = os.path.dirname(os.path.abspath(np.__file__)) + os.sep
_DPAUDIT = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_STDLIB = os.path.dirname(os.path.abspath(os.__file__)) + os.sep


def _generators() -> tuple[list, dict]:
    """Every stateful generator alive now (bit generators and ``random.Random`` s, cryptographic
    ones left out), and for each bit generator the ``Generator`` s and ``RandomState`` s on it."""
    found: list = []
    owners: dict = {}
    seen: set = set()
    for obj in gc.get_objects():
        if isinstance(obj, (np.random.Generator, np.random.RandomState)):
            bits = obj.bit_generator if isinstance(obj, np.random.Generator) else getattr(obj, "_bit_generator", None)
            if bits is not None:
                owners.setdefault(id(bits), []).append(obj)
                obj = bits
            else:
                continue
        elif isinstance(obj, random.SystemRandom) or not isinstance(obj, (np.random.BitGenerator, random.Random)):
            continue
        if id(obj) not in seen:
            seen.add(id(obj))
            found.append(obj)
    return found, owners


def _hashable(x: Any) -> Any:
    if isinstance(x, dict):
        return tuple((k, _hashable(v)) for k, v in x.items())
    if isinstance(x, np.ndarray):
        return (x.dtype.str, x.shape, x.tobytes())
    if isinstance(x, (list, tuple)):
        return tuple(_hashable(v) for v in x)
    return x


def state_of(obj: Any) -> Any:
    """A comparable copy of a generator's state (None when it cannot be read)."""
    try:
        if isinstance(obj, random.Random):
            return obj.getstate()
        return _hashable(obj.state)
    except Exception:  # noqa: BLE001 - a generator whose state cannot be read is not watched
        return None


# -- where a generator was made, and how it was seeded ---------------------------------------------

_PID = {"getpid", "getppid", "get_ident", "get_native_id"}
_CLOCK = {"time", "time_ns", "perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns",
          "process_time", "process_time_ns", "now", "utcnow", "today", "clock_gettime",
          "clock_gettime_ns", "datetime", "timestamp"}
_ENTROPY = {"urandom", "token_bytes", "token_hex", "randbits", "getrandom", "SystemRandom"}


@dataclass
class _Made:
    """Where a generator was made: ``site`` (file:line), the line's text, whether at import, and
    how it was seeded (words: "from the process id", ...; "" when not read)."""

    site: str = ""
    code: str = ""
    at_import: bool = False
    seeded: str = ""
    weak: bool = False


def _tree(path: str) -> Optional[ast.Module]:
    try:
        with open(path, encoding="utf-8") as fh:
            return ast.parse(fh.read(), filename=path)
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return None


def _names(node: Any) -> set:
    out: set = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Attribute):
            out.add(n.attr)
    return out


def _module_values(tree: ast.Module) -> dict:
    """Module-level ``NAME = expression`` assignments: name -> expression (the first)."""
    out: dict = {}
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, ast.AnnAssign) and node.value is not None else []
        for t in targets:
            if isinstance(t, ast.Name):
                out.setdefault(t.id, node.value)
    return out


def _seeding(call: Any, values: dict) -> tuple[str, bool]:
    """How the generator made by ``call`` (an expression) is seeded, in words, and whether that
    seed is one an attacker can guess (the process id, the clock)."""
    names = set()
    todo, depth = [call], 0
    while todo and depth < 4:
        nxt = []
        for node in todo:
            found = _names(node)
            names |= found
            nxt += [values[n] for n in found if n in values and values[n] is not node]
        todo, depth = nxt, depth + 1
    if names & _PID:
        return "from the process id", True
    if names & _CLOCK:
        return "from the clock", True
    if names & _ENTROPY:
        return "from the OS's entropy", False
    calls = [n for n in ast.walk(call) if isinstance(n, ast.Call)]
    args = [a for c in calls for a in (*c.args, *[k.value for k in c.keywords])]
    if calls and not args:
        return "from the OS's entropy (no seed)", False
    if args and all(_constant(a) for a in args):
        return "with a constant", False
    return "", False


#: names a constant seed may spell (``np.random.PCG64(7)``, ``int(7)``)
_CONSTANT_NAMES = {"np", "numpy", "random", "int", "float"}


def _constant(node: Any) -> bool:
    """Whether an expression is built from literals only (and the names above)."""
    walked = list(ast.walk(node))
    return all(not isinstance(n, ast.Name) or n.id in _CONSTANT_NAMES for n in walked) and \
        any(isinstance(n, ast.Constant) for n in walked)


def _segment(path: str, node: Any) -> str:
    text = linecache.getline(path, node.lineno).strip()
    return text if len(text) <= 100 else text[:99] + "…"


def _made_as(path: str, name: str) -> _Made:
    """Where ``name`` of the module in ``path`` is assigned (at module level first, else in a
    function declaring it ``global``), and how that expression seeds it."""
    tree = _tree(path)
    if tree is None:
        return _Made()
    values = _module_values(tree)
    base = os.path.basename(path)
    if name in values:
        node = values[name]
        seeded, weak = _seeding(node, values)
        return _Made(f"{base}:{node.lineno}", _segment(path, node), True, seeded, weak)
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                isinstance(s, ast.Global) and name in s.names for s in ast.walk(fn)):
            for node in ast.walk(fn):
                if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name
                                                        for t in node.targets):
                    seeded, weak = _seeding(node.value, values)
                    return _Made(f"{base}:{node.lineno}", _segment(path, node), False, seeded, weak)
    return _Made()


def _seed_call(path: str, module: str) -> _Made:
    """The first ``np.random.seed(…)`` (``module`` "numpy") or ``random.seed(…)`` ("random") call
    in the source at ``path``."""
    tree = _tree(path)
    if tree is None:
        return _Made()
    values = _module_values(tree)
    top = {id(n) for stmt in tree.body if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                ast.ClassDef))
           for n in ast.walk(stmt)}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "seed"):
            continue
        owner = ast.unparse(node.func.value) if hasattr(ast, "unparse") else ""
        numpy_seed = owner.endswith("np.random") or owner.endswith("numpy.random")
        if (module == "numpy") != numpy_seed or (module == "random" and owner != "random"):
            continue
        seeded, weak = _seeding(node, values)
        if not node.args and not node.keywords:
            seeded, weak = "from the OS's entropy (no seed)", False
        return _Made(f"{os.path.basename(path)}:{node.lineno}", _segment(path, node), id(node) in top,
                     seeded, weak)
    return _Made()


def _dynamic_seed(bits: Any) -> tuple[str, bool]:
    """How a numpy bit generator was seeded, read from the entropy its ``SeedSequence`` keeps."""
    seq = getattr(bits, "seed_seq", None)
    entropy = getattr(seq, "entropy", None)
    if isinstance(entropy, (int, np.integer)) and not isinstance(entropy, bool):
        e = int(entropy)
        if e in (os.getpid(), os.getppid()):
            return "from the process id", True
        day = 86400
        for now, unit in ((time.time(), 1), (time.time_ns(), 10 ** 9), (time.time() * 1000, 1000),
                          (time.monotonic_ns(), 10 ** 9), (time.perf_counter_ns(), 10 ** 9)):
            if abs(e - now) < 30 * day * unit:
                return "from the clock", True
    return "", False


# -- the watch ---------------------------------------------------------------------------------------

@dataclass
class _Seen:
    """A generator whose state a call changed."""

    obj: Any
    before: Any
    after: Any


@dataclass
class OutsideWatch:
    """Reads, around each recorded call of ``engine`` (a :class:`dpaudit.replay.search.Engine`),
    the state of every generator that outlives a call, and raises
    :class:`~dpaudit.replay.session.MechanismFailed` on outside noise (module docstring)."""

    engine: Any
    watched: Optional[list] = None
    owners: dict = field(default_factory=dict)
    accepted: set = field(default_factory=set)
    busy: bool = False

    def before(self, mode: str) -> Optional[list]:
        """The states before a call (None: not watched: a plain call, or a call of this check)."""
        if mode == "plain" or self.busy:
            return None
        if self.watched is None:
            self.watched, self.owners = _generators()
        return [state_of(g) for g in self.watched]

    def after(self, states: Optional[list], data: np.ndarray, seed: int) -> None:
        """Check the generators a call changed; raise on outside noise."""
        if states is None:
            return
        changed = [_Seen(g, s, state_of(g)) for g, s in zip(self.watched, states)
                   if id(g) not in self.accepted and s is not None and state_of(g) != s]
        if not changed:
            return
        self.busy = True
        try:
            self._judge(changed, data, seed)
        finally:
            self.busy = False

    # -- deciding ----------------------------------------------------------------------------------

    def _judge(self, changed: list, data: np.ndarray, seed: int) -> None:
        from dpaudit.spec import CallForm

        own = self.engine.p.call_form is CallForm.DATA
        outside: list = []
        if own:  # its own randomness by contract: only a guessable seed is outside noise
            outside = [s for s in changed if self._made(s.obj).weak]
        else:
            outside = self._not_derived(changed, data, seed)
        for s in changed:
            if s not in outside:
                self.accepted.add(id(s.obj))
        if outside:
            try:
                message = self._message(outside[0], data)
            except Exception:  # noqa: BLE001 - what the source says is a courtesy: the finding stands
                message = (f"draws its noise from {MARK} (a {type(outside[0].obj).__name__} that "
                           f"outlives the call): draw from the rng argument")
            raise MechanismFailed(message, np.array(data, dtype=float))

    def _not_derived(self, changed: list, data: np.ndarray, seed: int) -> list:
        """Those of ``changed`` whose state after a call is not a function of the rng: another
        call on the same data and seed leaves it elsewhere, or one with another seed in the same
        place (two or three more calls)."""
        first = self._states_after(data, seed, changed)
        again = self._states_after(data, seed, changed) if first is not None else None
        if first is None or again is None:
            return []  # the budget or the time limit is spent: not decided, nothing said
        out = [s for s, a, b in zip(changed, first, again) if a != b]
        rest = [(s, a) for s, a, b in zip(changed, first, again) if a == b]
        if rest:
            other = self._states_after(data, seed + 0x5EED, [s for s, _ in rest])
            if other is not None:
                out += [s for (s, a), c in zip(rest, other) if c == a]
        return out

    def _states_after(self, data: np.ndarray, seed: int, watched: list) -> Optional[list]:
        """The states of ``watched`` after one more call (None: no call was left in the budget)."""
        if not _call(self.engine, data, "record", seed):
            return None
        return [state_of(s.obj) for s in watched]

    # -- saying --------------------------------------------------------------------------------------

    def _made(self, obj: Any) -> _Made:
        """Where ``obj`` (a watched generator) was made and how it was seeded, as far as the source
        and its seed tell."""
        cached = getattr(self, "_made_cache", None)
        if cached is None:
            cached = self._made_cache = {}
        if id(obj) in cached:
            return cached[id(obj)]
        made = self._find(obj)
        if not made.seeded and isinstance(obj, np.random.BitGenerator):
            made.seeded, made.weak = _dynamic_seed(obj)
        cached[id(obj)] = made
        return made

    def _what(self, obj: Any) -> str:
        if obj is getattr(getattr(np.random, "mtrand", None), "_rand", None) or any(
                o is np.random.mtrand._rand for o in self.owners.get(id(obj), ())):
            return "numpy's global state (np.random.*)"
        if obj is getattr(random, "_inst", None):
            return "the random module's global state"
        name = self._name(obj)
        if name is not None:
            return f"`{name[1]}`"
        from dpaudit.replay.generator import RecordingGenerator

        if any(isinstance(o, RecordingGenerator) for o in self.owners.get(id(obj), ())):
            return "an rng dpaudit handed to an earlier call"
        return f"a {type(obj).__name__} that outlives the call"

    def _name(self, obj: Any) -> Optional[tuple]:
        """(module file, name) of a module-level name holding ``obj`` or a generator on it, in the
        audited function's module first, then in the modules beside it."""
        targets = [obj, *self.owners.get(id(obj), ())]
        path, home = self._home()
        folder = os.path.dirname(os.path.abspath(path)) if path else None
        spaces = [(path, home)] if home is not None else []
        for m in list(sys.modules.values()):
            f = getattr(m, "__file__", None)
            space = getattr(m, "__dict__", None)
            if f and folder and space is not home and os.path.dirname(os.path.abspath(f)) == folder:
                spaces.append((f, space))
        for where, space in spaces:
            for k, v in list(space.items()):
                if any(v is t for t in targets):
                    return where, k
        for where, space in spaces:  # one level down: an instance or a class holding it
            for k, v in list(space.items()):
                attrs = getattr(v, "__dict__", None)
                if isinstance(attrs, (dict, type(type.__dict__))) and not isinstance(v, type(os)):
                    for a, w in list(attrs.items()):
                        if any(w is t for t in targets):
                            return where, f"{k}.{a}"
        return None

    def _home(self) -> tuple[str, Optional[dict]]:
        """The audited function's file and module globals (through any ``__wrapped__``)."""
        func = self.engine.p.func
        for _ in range(20):
            if not hasattr(func, "__wrapped__"):
                break
            func = func.__wrapped__
        code = getattr(func, "__code__", None)
        path = code.co_filename if code is not None else ""
        home = getattr(func, "__globals__", None)
        return path or (home or {}).get("__file__") or "", home

    def _find(self, obj: Any) -> _Made:
        path, _ = self._home()
        what = self._what(obj)
        if what.startswith("numpy's global") and path:
            return _seed_call(path, "numpy")
        if what.startswith("the random module") and path:
            return _seed_call(path, "random")
        name = self._name(obj)
        if name is not None:
            return _made_as(name[0], name[1].split(".")[0])
        return _Made()

    def _message(self, seen: _Seen, data: np.ndarray) -> str:
        what = self._what(seen.obj)
        made = self._made(seen.obj)
        draw = self._draw_line(seen.obj, data)
        text = f"draws its noise from {MARK}: {what}"
        if draw:
            text += f", drawn at {draw}"
        when = " at import" if made.at_import else ""
        global_state = what.startswith(("numpy's global", "the random module"))
        if made.site and made.seeded:
            text += f"; seeded{when} {made.seeded} at {made.site} (`{made.code}`)"
        elif made.site:
            text += f"; {'seeded' if global_state else 'made'}{when} at {made.site} (`{made.code}`)"
        elif made.seeded:
            text += f"; seeded {made.seeded}"
        elif global_state:
            text += "; never seeded in the file (the OS's entropy at start)"
        own = self.engine.p.call_form.name == "DATA"
        why = ("a guessable seed: every run with that pid or at that time releases the same noise"
               if own else "its outputs are not a function of the rng dpaudit passes")
        advice = ("seed it from the OS's entropy (np.random.default_rng()) or take an rng argument"
                  if own else "draw from the rng argument, or from a generator spawned from it "
                  "(rng.spawn(n), np.random.default_rng(rng.integers(2**63)))")
        return f"{text} ({why}): {advice}"

    def _draw_line(self, obj: Any, data: np.ndarray) -> str:
        """``file:line (`code`)`` of the audited code's line whose execution changed ``obj``'s
        state, found by one more call traced line by line ("" when none was found)."""
        skip = (_NUMPY, _DPAUDIT, _STDLIB, "<")
        state = [state_of(obj)]
        last: dict = {}
        found: list = []

        def check(frame: Any, line: int) -> None:
            if found:
                return
            now = state_of(obj)
            if now != state[0]:
                state[0] = now
                path = frame.f_code.co_filename
                found.append((path, line))

        def local(frame: Any, event: str, arg: Any) -> Any:
            if event == "line":
                if frame in last:
                    check(frame, last[frame])
                last[frame] = frame.f_lineno
            elif event == "return":
                check(frame, frame.f_lineno)
            return local

        def trace(frame: Any, event: str, arg: Any) -> Any:
            path = frame.f_code.co_filename
            if path.startswith(skip) or "-packages" + os.sep in path:
                return None
            back = frame.f_back
            if back is not None and back in last:
                check(back, back.f_lineno)
            return local

        previous = sys.gettrace()
        sys.settrace(trace)
        try:
            _call(self.engine, data, "plain", 0)
        finally:
            sys.settrace(previous)
        if not found:
            return ""
        path, line = found[0]
        code = linecache.getline(path, line).strip()
        code = code if len(code) <= 80 else code[:79] + "…"
        return f"{os.path.basename(path)}:{line} (`{code}`)" if code else f"{os.path.basename(path)}:{line}"



def _call(engine: Any, data: np.ndarray, mode: str, seed: int) -> bool:
    """One more call of the mechanism for this check; False when the budget or the time limit is
    spent (or the call fails: the search meets that failure itself)."""
    try:
        engine.call(data, mode, seed)
    except MechanismFailed:
        return False
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # the engine's out-of-budget and out-of-time signals
        if getattr(exc, "dpaudit_interrupt", False) or isinstance(exc, SystemExit):
            raise
        return False
    return True
