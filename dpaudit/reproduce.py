"""Reproduce lines: the one command (or Python call) that reproduces a result.

Every finding prints a one-line command that reproduces it. The command lines are built here, and
only here: ``dpaudit check`` for a mechanism in a file (:func:`check_command`) and for a
sensitivity search (:func:`sensitivity_command`), ``dpaudit audit --id`` for a suite audit
(:func:`audit_command`), ``dpaudit verify --claim`` for a z3 claim (:func:`verify_command`), and a
``dpaudit.audit(...)`` call for a function that lives in no file (:func:`python_call`).
:func:`for_spec` picks between the first and the last for a spec. (The Python snippet that
recomputes one sensitivity counterexample is :mod:`dpaudit.sensitivity.reproduce`'s.)

Numbers are written so that they read back *exactly* (:func:`number`): ``repr`` of the float,
which is the shortest string that round-trips (Steele & White 1990 / Gay 1990, the algorithm of
Python's float repr), with a trailing ``.0`` dropped for integral values. ``--epsilon=1.000000009``
and ``--epsilon=1.0986122886681098`` (ln 3) therefore rerun the claim that was audited, never a
rounded one.

A mechanism that draws its own randomness (it ignores the rng it is given) cannot be reproduced
number for number: its line ends with a shell comment saying so (:data:`OWN_RANDOMNESS_NOTE`);
:func:`reruns_alike` is the rerun check that finds such a mechanism.
"""

from __future__ import annotations

import contextvars
import math
import shlex
from typing import TYPE_CHECKING, Any, Optional, Sequence

if TYPE_CHECKING:
    from dpaudit.execution.base import Executor
    from dpaudit.spec import MechanismSpec

__all__ = ["number", "as_target", "project_path", "ROOT", "claim_flags", "check_line", "check_command", "sensitivity_command", "sensitivity_flags", "audit_command",
           "verify_command", "python_call", "replay_pair_call", "for_spec", "reruns_alike",
           "RERUN_CHECK_CALLS", "OWN_RANDOMNESS_NOTE"]

#: Appended (as a shell comment) to the reproduce line of a mechanism that ignores its rng.
OWN_RANDOMNESS_NOTE = ("the mechanism draws its own randomness: a rerun gives other numbers "
                       "(the bound stays valid)")


def number(x: Any) -> str:
    """``x`` as text that ``float()`` reads back to the same float: ``1``, ``0.5``, ``1e-06``,
    ``1.000000009``, ``1.0986122886681098``; ``inf``/``-inf``/``nan`` as such."""
    v = float(x)
    if math.isfinite(v) and v == int(v) and abs(v) < 2 ** 53:
        return str(int(v)) if v != 0 or math.copysign(1.0, v) > 0 else "-0.0"
    return repr(v)


#: The folder a reproduce line names files relative to (the project root: the pytest plugin sets it
#: to pytest's rootdir around a ``dpaudit_audit`` call); None means the working folder. A file
#: outside it keeps its absolute path, so a line written on a CI machine reruns from a checkout.
ROOT: contextvars.ContextVar[Optional[str]] = contextvars.ContextVar("dpaudit_reproduce_root",
                                                                     default=None)


def project_path(path: str) -> str:
    """``path`` relative to :data:`ROOT` (else the working folder) when it lies inside it, with
    ``/`` separators (:func:`dpaudit.report.model.relative_path`); else its absolute path."""
    from dpaudit.report.model import relative_path

    return relative_path(path, ROOT.get())


def _note(line: str, own_randomness: bool) -> str:
    return f"{line}  # {OWN_RANDOMNESS_NOTE}" if own_randomness else line


def as_target(target: str) -> str:
    """``target`` as a reproduce line names it: a file whose name starts with ``-`` (a checkout's
    ``--in-process.py``) as ``./--in-process.py``, so the line never reads it as a flag."""
    return f"./{target}" if target.startswith("-") else target


def claim_flags(*, epsilon: Optional[float] = None, delta: Optional[float] = None,
                neighbours: Any = None, domain: Any = None, size: Optional[int] = None) -> list[str]:
    """The claim as ``dpaudit check`` flags, each field given (``None``: left out; δ = 0 too)."""
    from dpaudit.claims import Neighbours

    parts = [] if epsilon is None else [f"--epsilon={number(epsilon)}"]
    if delta:
        parts.append(f"--delta={number(delta)}")
    if neighbours is not None:
        parts.append(f"--neighbours={Neighbours.parse(neighbours).value}")
    if domain is not None:
        parts.append(f"--domain={number(domain.lo)}:{number(domain.hi)}")
    if size is not None:
        parts.append(f"--size={int(size)}")
    return parts


def access_flags(settings: Any, in_process: bool = False) -> list[str]:
    """The sandbox flags of ``settings`` that a rerun needs to give the code what it had:
    ``--isolation=process`` (strict is the default; none is ``--in-process``) and a
    ``--pass-env=NAME`` per variable passed in."""
    if settings is None:
        return []
    parts = [] if in_process or getattr(settings, "isolation", "strict") != "process" \
        else ["--isolation=process"]
    return parts + [f"--pass-env={name}" for name in getattr(settings, "pass_env", ()) or ()]


def check_line(target: str, engine_flags: Sequence[str] = (), *, seed: int,
               samples: Optional[int] = None, confidence: Optional[float] = None,
               in_process: bool = False, call_timeout: Optional[float] = None,
               memory: Optional[int] = None, early_stop: bool = True,
               float_policy: Optional[str] = None, replay_stage: bool = True,
               own_randomness: bool = False, timeout: Optional[float] = None,
               settings: Any = None) -> str:
    """The one builder of ``dpaudit check`` reproduce lines: the target, the flags its engine
    gives (its mode, ``--replay`` or ``--sensitivity=B`` or ``--rho=R``, then the claim and its
    own options: the ``flags`` of the engine's stage), then every run setting that changes the
    numbers (``samples``, ``confidence``, ``seed``, the float policy, which a decorator or a
    pyproject.toml could set otherwise at the rerun) or an ERROR (non-default sandbox limits),
    always in this order. Settings equal to their default (:func:`dpaudit.config.defaults`) are
    left out; ``None`` means "not given". ``timeout`` is given only for a result the time limit
    cut short (its numbers depend on the limit; a rerun without it would also run the whole
    budget, however long that takes). ``settings`` (the run's :class:`~dpaudit.config.CheckSettings`)
    adds what the sandbox gave the code beyond its default (:func:`access_flags`): a mechanism
    that reads a passed variable is an ERROR without it."""
    from dpaudit.config import defaults

    default = defaults()
    parts = ["dpaudit", "check", as_target(target), *engine_flags]
    if samples is not None:
        parts.append(f"--samples={int(samples)}")
    if confidence is not None and confidence != default["confidence"]:
        parts.append(f"--confidence={number(confidence)}")
    parts.append(f"--seed={int(seed)}")
    if in_process:
        parts.append("--in-process")
    parts += access_flags(settings, in_process)
    if call_timeout is not None and call_timeout != default["call-timeout"]:
        parts.append(f"--call-timeout={number(call_timeout)}")  # reruns a hang the same way
    if memory is not None and memory != default["memory"]:
        parts.append(f"--memory={int(memory)}")
    if not early_stop:
        parts.append("--no-early-stop")  # a different stopping rule gives different numbers
    if float_policy is not None:
        parts.append(f"--float={float_policy}")
    if not replay_stage:
        parts.append("--no-replay")  # the replay stage's pairs are sampled first
    if timeout is not None:
        parts.append(f"--timeout={number(timeout)}")
    return _note(shlex.join(parts), own_randomness)


def check_command(target: str, *, epsilon: float, delta: float, neighbours: Any, domain: Any,
                  size: int, seed: int, samples: Optional[int] = None,
                  confidence: Optional[float] = None, call_timeout: Optional[float] = None,
                  memory: Optional[int] = None, own_randomness: bool = False,
                  early_stop: bool = True, float_policy: Optional[str] = None,
                  replay_stage: bool = True, settings: Any = None) -> str:
    """The ``dpaudit check`` line that reruns one target's sampled audit from anywhere: the
    claim as audited (:func:`claim_flags`) and the run's settings (:func:`check_line`)."""
    flags = claim_flags(epsilon=epsilon, delta=delta, neighbours=neighbours, domain=domain,
                        size=size)
    return check_line(target, flags, seed=seed, samples=samples, confidence=confidence,
                      call_timeout=call_timeout, memory=memory, own_randomness=own_randomness,
                      early_stop=early_stop, float_policy=float_policy, replay_stage=replay_stage,
                      settings=settings)


def sensitivity_command(target: str, *, seed: int, **search: Any) -> str:
    """The ``dpaudit check --sensitivity`` line that reruns a whole sensitivity search,
    counterexample included (:mod:`dpaudit.sensitivity.stage`)."""
    return check_line(target, sensitivity_flags(**search), seed=seed)


def sensitivity_flags(*, bound: float, neighbours: Any, domain: Any, size: int, examples: int,
                      individual: Optional[Sequence[float]] = None,
                      norm: Optional[str] = None) -> list[str]:
    """The sensitivity search's flags in a reproduce line: the bound, the relation, the datasets
    it searched, how many pairs, and the individual bounds and norm when given."""
    flags = [f"--sensitivity={number(bound)}",
             *claim_flags(neighbours=neighbours, domain=domain, size=size),
             f"--examples={int(examples)}"]
    if individual is not None:
        flags.append("--individual=" + ",".join(number(d) for d in individual))
    if norm is not None:
        flags.append(f"--norm={norm}")
    return flags


def audit_command(file: Optional[str], audit_id: str, seed: int) -> str:
    """``dpaudit audit FILE --id ID --seed S``: one suite audit, rerun alone with the seed it
    had in the full run (its own seed derives from the root seed and the id only)."""
    return shlex.join(["dpaudit", "audit", file or "audits", "--id", audit_id, "--seed", str(int(seed))])


def verify_command(claim: str) -> str:
    """``dpaudit verify --claim NAME``: one z3 claim (z3's seeds are fixed, no seed to give)."""
    return shlex.join(["dpaudit", "verify", "--claim", claim])


def python_call(function: str, *, epsilon: float, delta: float, neighbours: Any, domain: Any,
                size: int, seed: int, samples: Optional[int] = None, exact: bool = False,
                confidence: Optional[float] = None, own_randomness: bool = False,
                early_stop: bool = True, float_policy: Optional[str] = None) -> str:
    """``import dpaudit; dpaudit.audit(f, epsilon=..., ...)``: the call that reruns an audit of a
    function that lives in no file (floats as ``repr``, exact)."""
    from dpaudit.claims import Neighbours

    call = "exact_audit" if exact else "audit"
    extra = "" if exact or samples is None else f", samples={int(samples)}"
    if not exact and confidence is not None and confidence != 0.95:
        extra += f", confidence={float(confidence)!r}"
    if not exact and float_policy is not None:
        extra += f", float={float_policy!r}"
    if not exact and not early_stop:
        extra += ", early_stop=False"
    line = (f"import dpaudit; dpaudit.{call}({function}, epsilon={float(epsilon)!r}, "
            f"delta={float(delta)!r}, neighbours={Neighbours.parse(neighbours).value!r}, "
            f"domain=({float(domain.lo)!r}, {float(domain.hi)!r}), size={int(size)}{extra}, "
            f"seed={int(seed)})")
    return _note(line, own_randomness)


def replay_pair_call(target: str, dataset: Sequence[float], neighbour: Sequence[float], *,
                     epsilon: float, delta: float, neighbours: str, domain: Sequence[float],
                     size: int, seed: int) -> str:
    """``dpaudit.replay.replay_pair(f, D, D′, ...)``: the Python call that reruns one pair of a
    replay audit, with the whole claim (the function by its own name: ``file.py:f`` and
    ``module.f`` are called as ``f``). Built by dpaudit's process from the claim, the seed and
    the pair's numbers: a sandbox child's own line is never shown (one once ended in
    ``; curl … | sh``)."""
    import re

    last = re.split(r"[:.]", str(target))[-1]
    func = last if last.isidentifier() else "f"

    def floats(a: Sequence[float]) -> str:
        return "[" + ", ".join(repr(float(x)) for x in a) + "]"

    lo, hi = domain
    return (f"dpaudit.replay.replay_pair({func}, {floats(dataset)}, {floats(neighbour)}, "
            f"epsilon={float(epsilon)!r}, delta={float(delta)!r}, neighbours={str(neighbours)!r}, "
            f"domain=({float(lo)!r}, {float(hi)!r}), size={int(size)}, seed={int(seed)})")


def for_spec(spec: MechanismSpec, *, samples: int, seed: int, exact: bool = False,
             confidence: Optional[float] = None, own_randomness: bool = False,
             early_stop: bool = True) -> str:
    """The reproduce line of an audit of ``spec`` (its float policy spelled out) (a :class:`~dpaudit.spec.MechanismSpec`): a
    ``dpaudit check`` line when its function lives at module level in a file that exists (named
    relative to the project root, :func:`project_path`), else a Python call."""
    import os

    func = getattr(spec.func, "__name__", "mechanism")
    qual = getattr(spec.func, "__qualname__", func)
    src = spec.source[0] if spec.source else None
    claim = dict(epsilon=spec.epsilon, delta=spec.delta, neighbours=spec.neighbours,
                 domain=spec.domain, size=spec.size, seed=seed, own_randomness=own_randomness,
                 early_stop=early_stop, float_policy=spec.float_policy)
    if not exact and src and os.path.isfile(src) and not func.startswith("<") and qual == func:
        return check_command(f"{project_path(src)}:{func}", samples=samples, confidence=confidence,
                             **claim)
    return python_call(func, samples=samples, exact=exact, confidence=confidence, **claim)


#: Outputs drawn twice on one seed by :func:`reruns_alike` (the rerun check).
RERUN_CHECK_CALLS = 64


def reruns_alike(spec: MechanismSpec, executor: Executor, seed: int,
                 n: int = RERUN_CHECK_CALLS) -> bool:
    """The rerun check: whether the mechanism's outputs are a function of the seed: one batch of
    ``n`` calls on a mid-domain dataset, drawn twice through ``executor`` with generators on the
    same ``SeedSequence``, compared output by output (NaN equal to NaN); when that batch's
    outputs are all one value (nothing to compare), once more on records spread over the domain. False means the mechanism
    draws its own randomness: the audit's bound stays valid (its samples are still independent
    draws, as long as no two processes start from one copied state: see
    :func:`dpaudit.auditor.audit`), but a rerun gives other numbers. The two batches are two
    executor calls, one after the other: a fork pool runs a single batch in the calling process,
    so the second call sees the state the first left. Drawn together, two freshly forked workers
    would both start from the parent's copy of a global or library-internal generator and agree
    (python-dp's buffered noise, ``np.random``), hiding exactly the randomness this detects.
    Costs 2·n calls. Raises what the executor raises (a
    :class:`~dpaudit.errors.MechanismError` for a mechanism that fails)."""
    import numpy as np

    from dpaudit.execution.base import BatchTask

    size = max(1, int(spec.size))
    lo, hi = spec.domain.lo, spec.domain.hi
    seq = np.random.SeedSequence(int(seed), spawn_key=(0x5EED,))
    twice = getattr(executor, "run_twice", None)  # a pool: one worker draws both, in turn

    def drawn_twice(data: tuple) -> tuple:
        task = BatchTask(data, seq, n)
        if twice is not None:
            return twice(spec, task)
        (first,) = executor.run(spec, [task])
        (second,) = executor.run(spec, [task])
        return first, second

    first, second = drawn_twice(tuple([0.5 * (lo + hi)] * size))
    if _same(first, second) and _constant(first):
        # every output alike on equal records says nothing (diffprivlib's mean with its bounds
        # taken from the data: on records all 0.5 it is 0.5, whatever its generator; a run that
        # drew its own randomness read "reproducible from the seed: yes"): records spread over
        # the domain, where the noise shows
        spread = tuple(lo + (hi - lo) * (i + 0.25) / size for i in range(size))  # not the midpoint
        first, second = drawn_twice(spread)
    return _same(first, second)


def _constant(outputs: Any) -> bool:
    """Whether every output of a batch is the same (by its pickled bytes, NaN bits included)."""
    import pickle

    import numpy as np

    rows = list(outputs) if not isinstance(outputs, np.ndarray) else outputs
    if len(rows) < 2:
        return False
    if isinstance(rows, np.ndarray):
        return bool(np.array_equal(rows, np.broadcast_to(rows[:1], rows.shape),
                                   equal_nan=rows.dtype.kind in "fc"))
    try:
        head = pickle.dumps(rows[0], protocol=pickle.HIGHEST_PROTOCOL)
        return all(pickle.dumps(r, protocol=pickle.HIGHEST_PROTOCOL) == head for r in rows[1:])
    except Exception:  # noqa: BLE001 - an output that does not pickle: say nothing of it
        return False


def _same(a: Any, b: Any) -> bool:
    import numpy as np

    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):  # a batch array each
        return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    a, b = list(a), list(b)
    if len(a) != len(b):
        return False
    try:
        # the pickled bytes, in time linear in the distinct objects: np.asarray or == of a list
        # of the same list repeated walks it exponentially (a 500-byte output of 10^11 values);
        # equal bytes are equal outputs (NaN bits included), and outputs that pickle apart differ
        import pickle

        return pickle.dumps(a, protocol=pickle.HIGHEST_PROTOCOL) == \
            pickle.dumps(b, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 - unpicklable outputs (in process): compared below
        pass
    try:
        x, y = np.asarray(a), np.asarray(b)
        if x.dtype.kind not in "biufc" or y.dtype.kind not in "biufc":
            raise TypeError  # objects: compared as text below
        return bool(np.array_equal(x, y, equal_nan=True))  # complex parts both compared
    except (TypeError, ValueError):  # categories, tuples of mixed kinds, ragged outputs
        return [_text(x) for x in a] == [_text(y) for y in b]


def _text(x: Any) -> str:
    import numpy as np

    if isinstance(x, np.ndarray):
        return repr(x.tolist())
    return repr(x)
