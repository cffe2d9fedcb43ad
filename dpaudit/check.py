"""``dpaudit check FILE.py[:FUNCTION] ...``: audit third-party mechanisms from the command line.

The data flow of DESIGN.md, one target after another:

settings (flags > ``[tool.dpaudit]`` of the nearest pyproject.toml > defaults; the root seed is
fixed and recorded) → sandbox child imports the file (:mod:`dpaudit.execution.sandbox`; an import that
crashes or hangs is a load error, not a dpaudit crash) → :func:`dpaudit.loader.load_mechanism` →
:class:`~dpaudit.spec.MechanismSpec` (flags override the declaration; a missing claim is a usage
error naming the flag to add) → :func:`dpaudit.audit` with the sandbox as executor → records →
:func:`dpaudit.report.make_run` → JSON / HTML / JUnit / SARIF → the exit code of the worst verdict.

Every bad input is one line on stderr and exit code 3, and when reports were asked for they are
still written, with an ERROR record per target, so a CI artefact always says what happened. A
mechanism that misbehaves is an ERROR verdict (exit 3 when it is the only target). On a timeout or
Ctrl-C the results already obtained are written before dpaudit stops.
"""

from __future__ import annotations

import argparse
import math
import os
import shlex
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from dpaudit.claims import Domain, Neighbours, check_confidence, check_delta, check_epsilon
from dpaudit.cli import ExitCode
from dpaudit.errors import DpauditError, InvalidArgument, LoadError, MechanismError, UsageError
from dpaudit.report.registry import report_paths
from dpaudit.rng import DEFAULT_SEED
from dpaudit.execution.sandbox import DEFAULT_CALL_TIMEOUT, DEFAULT_MEMORY, parse_memory

__all__ = ["CheckSettings", "resolve_settings", "read_config", "run_check", "exit_code"]

#: Seconds the sandbox grants beyond ``--timeout`` so the auditor can stop on its own first.
_TIMEOUT_GRACE = 5.0


@dataclass(frozen=True, slots=True)
class CheckSettings:
    """Everything one ``dpaudit check`` run needs, validated. ``claim`` holds only the claim fields
    given on the command line (they override the mechanism's declaration); ``origin`` says where
    each run setting came from (``"flag"``, ``"pyproject.toml"`` or ``"default"``)."""

    targets: tuple[str, ...]
    claim: Mapping[str, Any]
    samples: Optional[int]
    confidence: float
    seed: int
    timeout: Optional[float]
    call_timeout: Optional[float]
    memory: Optional[int]
    in_process: bool = False
    executor: Optional[str] = None
    reports: Mapping[str, Optional[str]] = field(default_factory=dict)
    exit_zero: bool = False
    fail_on_inconclusive: bool = False
    quiet: bool = False
    origin: Mapping[str, str] = field(default_factory=dict)


# -- parsing and validating values ---------------------------------------------------------------

def _real(name: str, raw: Any) -> float:
    if isinstance(raw, bool):
        raise InvalidArgument.bad(name, raw, "a number")
    if isinstance(raw, (int, float)):
        return float(raw)
    try:
        return float(str(raw).strip().replace("_", ""))
    except ValueError:
        raise InvalidArgument.bad(name, raw, "a number") from None


def _integer(name: str, raw: Any, requirement: str, minimum: int) -> int:
    """An integer from ``200000``, ``200_000`` or ``2e5`` (a float with an integer value)."""
    try:
        value = _real(name, raw)
    except InvalidArgument:
        raise InvalidArgument.bad(name, raw, requirement) from None
    if not math.isfinite(value) or value != int(value) or int(value) < minimum:
        raise InvalidArgument.bad(name, raw, requirement)
    return int(value)


def _seconds(name: str, raw: Any) -> float:
    value = _real(name, raw)
    if not math.isfinite(value) or value <= 0:
        raise InvalidArgument.bad(name, raw, "a number of seconds > 0")
    return value


def _domain(name: str, raw: Any) -> Domain:
    text = str(raw).strip()
    lo, sep, hi = text.partition(":")
    if not sep:
        raise InvalidArgument.bad(name, raw, "LO:HI, e.g. --domain=-10:10")
    a, b = _real(f"{name} LO", lo), _real(f"{name} HI", hi)
    if not (math.isfinite(a) and math.isfinite(b)) or not a < b:
        raise InvalidArgument.bad(name, raw, "LO:HI with finite LO < HI, e.g. --domain=-10:10")
    return Domain(a, b)


def _claim_from_flags(args: argparse.Namespace) -> dict[str, Any]:
    claim: dict[str, Any] = {}
    if args.epsilon is not None:
        claim["epsilon"] = check_epsilon(_real("--epsilon", args.epsilon), "--epsilon")
    if args.delta is not None:
        claim["delta"] = check_delta(_real("--delta", args.delta), "--delta")
    if args.neighbours is not None:
        try:
            claim["neighbours"] = Neighbours.parse(args.neighbours)
        except InvalidArgument:
            allowed = ", ".join(m.value for m in Neighbours)
            raise InvalidArgument.bad("--neighbours", args.neighbours, f"one of {allowed}") from None
    if args.domain is not None:
        claim["domain"] = _domain("--domain", args.domain)
    if args.size is not None:
        claim["size"] = _integer("--size", args.size, "an integer >= 1", 1)
    return claim


def _samples(name: str, raw: Any) -> int:
    import importlib

    least = getattr(importlib.import_module("dpaudit.auditor"), "MIN_SAMPLES", 1)
    return _integer(name, raw, f"an integer >= {least}", least)


#: The run settings, as ``[tool.dpaudit]`` keys (``_`` and ``-`` are interchangeable there):
#: key -> (flag attribute, parser of (name, raw)).
_RUN_SETTINGS = {
    "seed": ("seed", lambda n, r: _integer(n, r, "an integer >= 0", 0)),
    "samples": ("samples", _samples),
    "confidence": ("confidence", lambda n, r: check_confidence(_real(n, r), n)),
    "timeout": ("timeout", _seconds),
    "call-timeout": ("call_timeout", _seconds),
    "memory": ("memory", lambda n, r: parse_memory(r, n)),
}
_DEFAULTS = {"seed": DEFAULT_SEED, "samples": None, "confidence": 0.95, "timeout": None,
             "call-timeout": DEFAULT_CALL_TIMEOUT, "memory": DEFAULT_MEMORY}


def read_config(start: Optional[str] = None) -> tuple[dict[str, Any], Optional[str]]:
    """The ``[tool.dpaudit]`` table of the nearest ``pyproject.toml`` at or above ``start`` (the
    working folder), with its path; ``({}, None)`` when there is none. Keys are normalised to the
    flag spelling (``call_timeout`` → ``call-timeout``); ``dpaudit check`` reads the run settings
    (seed, samples, confidence, timeout, call-timeout, memory) and leaves other keys to other
    commands. A file that does not parse is a UsageError."""
    folder = os.path.abspath(start or os.getcwd())
    while True:
        candidate = os.path.join(folder, "pyproject.toml")
        if os.path.isfile(candidate):
            break
        parent = os.path.dirname(folder)
        if parent == folder:
            return {}, None
        folder = parent
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10: the same parser, as the tomli backport (a dependency)
        import tomli as tomllib
    try:
        with open(candidate, "rb") as fh:
            table = tomllib.load(fh).get("tool", {}).get("dpaudit", {})
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"{candidate}: cannot read [tool.dpaudit]: {exc}") from None
    if not isinstance(table, dict):
        raise UsageError(f"{candidate}: [tool.dpaudit] must be a table")
    return {str(k).replace("_", "-"): v for k, v in table.items()}, candidate


def resolve_settings(args: argparse.Namespace, config: Optional[Mapping[str, Any]] = None,
                     config_path: Optional[str] = None) -> CheckSettings:
    """Validate the flags of ``dpaudit check`` and merge them over ``config`` (the
    ``[tool.dpaudit]`` table) over the defaults. Raises InvalidArgument naming the flag (or the
    pyproject key) and its value."""
    config = dict(config or {})
    where = os.path.relpath(config_path) if config_path else "pyproject.toml"
    values: dict[str, Any] = {}
    origin: dict[str, str] = {}
    for key, (attr, parse) in _RUN_SETTINGS.items():
        raw = getattr(args, attr, None)
        if raw is not None:
            values[key], origin[key] = parse(f"--{key}", raw), "flag"
        elif key in config:
            values[key], origin[key] = parse(f"{where} [tool.dpaudit] {key}", config[key]), where
        else:
            values[key], origin[key] = _DEFAULTS[key], "default"
    targets = args.target if isinstance(args.target, (list, tuple)) else [args.target]
    return CheckSettings(
        targets=tuple(targets),
        claim=_claim_from_flags(args),
        samples=values["samples"],
        confidence=values["confidence"],
        seed=values["seed"],
        timeout=values["timeout"],
        call_timeout=values["call-timeout"],
        memory=values["memory"],
        in_process=bool(getattr(args, "in_process", False)),
        executor=_executor_option(args),
        reports=report_paths(args),
        exit_zero=bool(getattr(args, "exit_zero", False)),
        fail_on_inconclusive=bool(getattr(args, "fail_on_inconclusive", False)),
        quiet=bool(getattr(args, "quiet", False)),
        origin=origin,
    )


def _executor_option(args: argparse.Namespace) -> Optional[str]:
    """``--executor dask`` or ``--executor tcp://HOST:PORT``; refused for untrusted code (a Dask
    worker calls the mechanism without the sandbox), so it needs ``--in-process``."""
    value = getattr(args, "executor", None)
    if value is None:
        return None
    if value != "dask" and "://" not in value:
        raise UsageError(f"--executor must be 'dask' or a scheduler address such as tcp://HOST:8786, "
                         f"got {value!r}")
    if not getattr(args, "in_process", False):
        raise UsageError(f"--executor {value} runs the mechanism in Dask workers without the sandbox; "
                         "add --in-process to confirm the code is trusted")
    return value


def reproduce_command(target: str, settings: CheckSettings, claim: Any, neighbours: Any,
                      domain: Any, size: int, samples: Optional[int] = None) -> str:
    """The ``dpaudit check`` command line that replays one target's audit from anywhere: the claim
    as audited and every setting that changes the numbers (the sample budget ``samples``, the
    confidence, the seed) or an ERROR (non-default sandbox limits), pyproject values spelled out."""
    parts = ["dpaudit", "check", target, f"--epsilon={claim.epsilon:g}"]
    if claim.delta:
        parts.append(f"--delta={claim.delta:g}")
    parts += [f"--neighbours={Neighbours.parse(neighbours).value}",
              f"--domain={domain.lo:g}:{domain.hi:g}", f"--size={size}"]
    samples = settings.samples if samples is None else samples
    if samples is not None:
        parts.append(f"--samples={samples}")
    if settings.confidence != _DEFAULTS["confidence"]:
        parts.append(f"--confidence={settings.confidence:g}")
    parts.append(f"--seed={settings.seed}")
    if settings.call_timeout != _DEFAULTS["call-timeout"] and settings.call_timeout is not None:
        parts.append(f"--call-timeout={settings.call_timeout:g}")  # replays a hang the same way
    if settings.memory != _DEFAULTS["memory"] and settings.memory is not None:
        parts.append(f"--memory={settings.memory}")
    return shlex.join(parts)


# -- exit codes ----------------------------------------------------------------------------------

def exit_code(records: list[Mapping[str, Any]], *, exit_zero: bool = False,
              fail_on_inconclusive: bool = False) -> ExitCode:
    """The exit code of the worst verdict (DESIGN.md): error 3, refuted 1 (0 with --exit-zero),
    inconclusive 2 only with --fail-on-inconclusive, else 0; no records at all is 5."""
    verdicts = {r.get("verdict") for r in records}
    if not records:
        return ExitCode.NOTHING_TO_AUDIT
    if "error" in verdicts:
        return ExitCode.USAGE_ERROR
    if "refuted" in verdicts:
        return ExitCode.OK if exit_zero else ExitCode.REFUTED
    if "inconclusive" in verdicts and fail_on_inconclusive:
        return ExitCode.INCONCLUSIVE
    return ExitCode.OK


# -- the run -------------------------------------------------------------------------------------

def run_check(args: argparse.Namespace) -> ExitCode:
    """Run ``dpaudit check``; return its exit code (only ``dpaudit.cli.main`` exits)."""
    started = time.time()
    command = shlex.join(["dpaudit", *getattr(args, "argv", sys.argv[1:])])
    reports = report_paths(args)
    targets = args.target if isinstance(args.target, (list, tuple)) else [args.target]
    try:
        config, config_path = read_config()
        settings = resolve_settings(args, config, config_path)
    except DpauditError as exc:
        _write(_error_records(targets, str(exc), command), reports, None, started, command)
        raise UsageError(str(exc)) from None

    from dpaudit.progress import Progress

    _precheck(settings.targets, reports, settings.seed, started, command)
    progress = Progress(quiet=settings.quiet)
    records: list[dict] = []
    internal_errors = 0
    deadline = None if settings.timeout is None else time.monotonic() + settings.timeout
    try:
        cluster = _cluster(settings)
    except UsageError as exc:
        _write(_error_records(settings.targets, str(exc), command), reports, settings.seed, started, command)
        raise
    try:
        for target in settings.targets:
            progress.start(target)
            try:
                record = _check_one(target, settings, progress, deadline, cluster)
            except (LoadError, UsageError, InvalidArgument) as exc:
                progress.clear()
                records.append(_error_record(target, str(exc), command))
                records += _error_records(settings.targets[len(records):],
                                          "not audited: an earlier target could not be loaded",
                                          command)
                _write(records, reports, settings.seed, started, command)
                raise UsageError(str(exc)) from None
            except Exception as exc:  # a bug in dpaudit: keep what is done, say so, go on
                if os.environ.get("DPAUDIT_DEBUG"):
                    raise
                progress.clear()
                internal = f"internal error in dpaudit: {type(exc).__name__}: {_first_line(exc)}"
                print(f"dpaudit: {target}: {internal} (rerun with DPAUDIT_DEBUG=1 for the "
                      f"traceback)", file=sys.stderr)
                record = _error_record(target, internal, command)
                internal_errors += 1
            records.append(record)
            progress.finish(record)
    except KeyboardInterrupt:
        progress.clear()
        done = len(records)
        records += _error_records(settings.targets[done:done + 1],
                                  "interrupted (Ctrl-C) before the audit finished", command)
        records += _error_records(settings.targets[done + 1:], "not audited: interrupted", command)
        _write(records, reports, settings.seed, started, command, progress)
        raise
    finally:
        if cluster is not None:
            cluster.close()
    _write(records, reports, settings.seed, started, command, progress)
    progress.reproduce(records)
    if internal_errors:
        return ExitCode.INTERNAL_ERROR
    return exit_code(records, exit_zero=settings.exit_zero,
                     fail_on_inconclusive=settings.fail_on_inconclusive)


def _precheck(targets: tuple[str, ...], reports: Mapping[str, Optional[str]], seed: int,
              started: float, command: str) -> None:
    """Fail fast, before any audit runs, on a target whose file does not exist."""
    from dpaudit.loader import parse_target

    for target in targets:
        try:
            path, _ = parse_target(target)
            if not os.path.isfile(path):
                raise LoadError(f"{path}: no such file" if not os.path.exists(path)
                                else f"{path}: not a file (give a Python file)")
        except LoadError as exc:
            records = [_error_record(t, str(exc) if t == target else
                                     "not audited: another target could not be loaded", command)
                       for t in targets]
            _write(records, reports, seed, started, command)
            raise UsageError(str(exc)) from None


def _cluster(settings: CheckSettings) -> Any:
    """The Dask executor of ``--executor`` (None without it), shared by every target of the run."""
    if settings.executor is None:
        return None
    from dpaudit.execution.dask import executor_from_option

    return executor_from_option(settings.executor, trusted=settings.in_process)


def _check_one(target: str, settings: CheckSettings, progress: Any,
               deadline: Optional[float], cluster: Any = None) -> dict:
    """Load, audit and record one target. Load and claim errors propagate (usage errors); a
    misbehaving mechanism is an ERROR record."""
    from dpaudit.loader import load_mechanism, parse_target
    from dpaudit.report.model import location
    from dpaudit.execution.sandbox import SandboxExecutor
    from dpaudit.spec import MechanismSpec

    t0 = time.monotonic()
    remaining = None if deadline is None else deadline - t0
    if remaining is not None and remaining <= 0:
        return _error_record(target, f"not audited: the time limit of {settings.timeout:g} s "
                             f"was reached", "")
    path, function = parse_target(target)
    executor = None
    if not settings.in_process:
        executor = SandboxExecutor(path, function, call_timeout=settings.call_timeout,
                                   memory=settings.memory,
                                   total_timeout=None if remaining is None
                                   else remaining + _TIMEOUT_GRACE)
    try:
        if executor is not None:
            executor.spawn()  # the child boots while this process imports the auditor
        import dpaudit.auditor
        _warm_imports()  # the auditor's heavy imports run while the child boots
        if executor is not None:
            executor.start()  # the child imports the file first: a crash there is a load error
        loaded = load_mechanism(path, function)
        spec = MechanismSpec.from_function(loaded.func, name=loaded.target, **settings.claim)
        budget = settings.samples or dpaudit.auditor.default_samples(spec)
        reproduce = reproduce_command(loaded.target, settings, spec.claim, spec.neighbours,
                                      spec.domain, spec.size, budget)
        try:
            result = dpaudit.auditor.audit(spec, samples=settings.samples,
                                           confidence=settings.confidence, seed=settings.seed,
                                           executor=executor or cluster, progress=progress,
                                           timeout=remaining)
        except MechanismError as exc:  # the auditor should have made it an ERROR verdict
            record = _error_record(loaded.target, str(exc), reproduce)
            record["elapsed_s"] = time.monotonic() - t0
        else:
            record = result.to_record()
            record["reproduce"] = reproduce
        record["location"] = location(spec.source)
        return record
    finally:
        if executor is not None:
            executor.close()


def _first_line(exc: BaseException, limit: int = 200) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _warm_imports() -> None:
    """Import what :func:`dpaudit.audit` imports lazily (scipy, statsmodels, hypothesis through the
    search engine) now, overlapping the sandbox child's start-up. Only a warm-up: never fails."""
    try:
        import importlib

        importlib.import_module("dpaudit.search.engine")
    except ImportError:  # pragma: no cover - the auditor's layout changed; audit() imports it
        pass


def _error_record(target: str, message: str, reproduce: str) -> dict:
    """A record for a target that could not be audited (the report still says so)."""
    from dpaudit.results import error_record

    return error_record("audit", target, message, reproduce=reproduce)


def _error_records(targets: Any, message: str, command: str) -> list[dict]:
    return [_error_record(t, message, command) for t in targets]


def _write(records: list[dict], reports: Mapping[str, Optional[str]], seed: Optional[int],
           started: float, command: str, progress: Any = None) -> None:
    """Write the requested reports of ``records`` (nothing when none was asked for)."""
    if not any(reports.values()):
        return
    from dpaudit.report import make_run, write_reports

    run = make_run(records, seed=seed, started=started, finished=time.time(), command=command)
    written = write_reports(run, **reports)
    if progress is not None:
        for fmt, path in written.items():
            progress.note(f"wrote {fmt}: {path}")
