"""``dpaudit check FILE.py[:FUNCTION] ...``: audit third-party mechanisms from the command line.

The data flow of docs/ARCHITECTURE.md, one target after another:

settings (flags > ``[tool.dpaudit]`` of the nearest pyproject.toml > defaults; the root seed is
fixed and recorded) → sandbox child imports the file (:mod:`dpaudit.execution.sandbox`; an import that
crashes or hangs is a load error, not a dpaudit crash) → :func:`dpaudit.loader.load_mechanism` →
:class:`~dpaudit.spec.MechanismSpec` (flags override the declaration; a missing claim is a usage
error naming the flag to add) → :func:`dpaudit.audit` with the sandbox as executor and what this
command knows as its :class:`~dpaudit.results.AuditContext` (the reproduce line, the targets sharing
the confidence, where the function lives, the isolation) → one frozen result per target, read
into its record, never patched →
:func:`dpaudit.report.make_run` → JSON / HTML / JUnit / SARIF → the exit code of the worst verdict.

Every bad input is one line on stderr and exit code 3, and when reports were asked for they are
still written, with an ERROR record per target, so a CI artefact always says what happened. A
mechanism that misbehaves is an ERROR verdict (exit 6, distinct from a usage error). On a timeout or
Ctrl-C the results already obtained are written before dpaudit stops.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Optional

from dpaudit import reproduce as _reproduce
from dpaudit.config import CheckSettings, read_config, resolve_settings
from dpaudit.errors import DpauditError, InvalidArgument, LoadError, MechanismError, UsageError
from dpaudit.exitcodes import ExitCode, exit_code
from dpaudit.execution.process import printable
from dpaudit.report.registry import report_paths
from dpaudit.terminal import guard_stdout  # re-exported: dpaudit.check.guard_stdout

if TYPE_CHECKING:  # the audit's modules load lazily: the sandbox child boots meanwhile
    from dpaudit.execution.base import Executor
    from dpaudit.execution.honesty import FreshProcesses
    from dpaudit.execution.sandbox import SandboxExecutor
    from dpaudit.progress import Progress
    from dpaudit.results import AuditResult, Family
    from dpaudit.spec import MechanismSpec

__all__ = ["CheckSettings", "resolve_settings", "read_config", "run_check", "exit_code",
           "reproduce_command"]

#: Seconds the sandbox grants beyond ``--timeout`` so the auditor can stop on its own first (it
#: stops between draws; a draw of a slow mechanism, thousands of calls in one batch, is then cut by
#: the sandbox, which stops the child: the run ends within the limit and this, plus the reports).
_TIMEOUT_GRACE = 0.5
#: A first call at least this slow (seconds) times the audit's estimate by itself.
SLOW_FIRST_CALL = 0.05


def reproduce_command(target: str, settings: CheckSettings, claim: Any, neighbours: Any,
                      domain: Any, size: int, samples: Optional[int] = None,
                      own_randomness: bool = False, float_policy: Optional[str] = None) -> str:
    """The ``dpaudit check`` line that replays one target's audit under ``settings``
    (:func:`dpaudit.reproduce.check_command`; pyproject values spelled out)."""
    return _reproduce.check_command(
        target, epsilon=claim.epsilon, delta=claim.delta, neighbours=neighbours, domain=domain,
        size=size, seed=settings.seed, samples=settings.samples if samples is None else samples,
        confidence=settings.target_confidence, call_timeout=settings.call_timeout,
        memory=settings.memory, own_randomness=own_randomness,
        early_stop=settings.early_stop, float_policy=float_policy,
        replay_stage=settings.replay_stage)


# -- the run -------------------------------------------------------------------------------------

def run_check(args: argparse.Namespace) -> ExitCode:
    """Run ``dpaudit check``; return its exit code (only ``dpaudit.cli.main`` exits)."""
    started = time.time()
    # --timeout counts from the process's start (dpaudit.cli.main), else from here
    begun = getattr(args, "started", None) or time.monotonic()
    command = shlex.join(["dpaudit", *getattr(args, "argv", sys.argv[1:])])
    reports = report_paths(args)
    targets = args.target if isinstance(args.target, (list, tuple)) else [args.target]
    try:
        config, config_path = read_config()
        settings = resolve_settings(args, config, config_path)
    except DpauditError as exc:
        _write(_error_records(targets, str(exc), command), reports, None, started, command)
        raise UsageError(str(exc)) from None

    from dpaudit.execution.process import StopOnSignals
    from dpaudit.progress import Progress

    _warn_weakened_isolation(settings)
    _precheck(settings.targets, reports, settings.seed, started, command)
    guard_stdout()
    progress = Progress(quiet=settings.quiet)
    records: list[dict] = []
    internal_errors = 0
    deadline = None if settings.timeout is None else begun + settings.timeout
    try:
        cluster = _cluster(settings)
    except UsageError as exc:
        _write(_error_records(settings.targets, str(exc), command), reports, settings.seed, started, command)
        raise
    stop = StopOnSignals()
    partial: dict = {}
    try:
        for target in settings.targets:
            progress.start(target)
            partial.clear()
            try:
                record = _check_one(target, settings, progress, deadline, cluster, partial)
            except (LoadError, UsageError, InvalidArgument) as exc:
                progress.clear()
                exc = type(exc)(clean_record(str(exc)))
                records.append(_error_record(target, str(exc), command))
                records += _error_records(settings.targets[len(records):],
                                          "not audited: an earlier target could not be loaded",
                                          command)
                _write(records, reports, settings.seed, started, command)
                raise UsageError(str(exc)) from None
            except Exception as exc:  # a bug in dpaudit: keep what is done, say so, go on
                if stop.received is not None:
                    # the signal interrupted something that caught it (an import cut halfway
                    # then failed again, "already registered"): the run was interrupted
                    raise KeyboardInterrupt(stop.received) from None
                if os.environ.get("DPAUDIT_DEBUG"):
                    raise
                progress.clear()
                internal = f"internal error in dpaudit: {type(exc).__name__}: {_first_line(exc)}"
                print(f"dpaudit: {target}: {internal} (rerun with DPAUDIT_DEBUG=1 for the "
                      f"traceback)", file=sys.stderr)
                record = _error_record(target, internal, command)
                internal_errors += 1
            if stop.received is not None:  # the signal was caught on the way: the target is cut
                raise KeyboardInterrupt(stop.received)
            records.append(clean_record(_said_from_file(record, settings, target)))
            progress.finish(records[-1])
    except KeyboardInterrupt:
        progress.clear()
        done = len(records)
        why = stop.received or "Ctrl-C"
        records += [_interrupted_record(t, partial, why, command) for t in settings.targets[done:done + 1]]
        records += [_interrupted_record(t, {}, why, command, started=False)
                    for t in settings.targets[done + 1:]]
        if records[done:]:
            progress.finish(records[done])  # the line of the target under way, as a report has it
        _write(records, reports, settings.seed, started, command, progress)
        raise
    finally:
        stop.restore()
        if cluster is not None:
            cluster.close()
    not_written = _write(records, reports, settings.seed, started, command, progress)
    progress.reproduce(records)
    if internal_errors:
        return ExitCode.INTERNAL_ERROR
    if not_written:  # the verdicts are printed, but a report CI relies on is missing
        return ExitCode.USAGE_ERROR
    return exit_code(records, exit_zero=settings.exit_zero,
                     fail_on_inconclusive=settings.fail_on_inconclusive)


def clean_record(value: Any) -> Any:
    """``value`` with control characters and line breaks in every string escaped as visible text
    (:func:`~dpaudit.execution.process.one_line`): what the audited code wrote reaches neither
    the terminal nor a report raw, and no field of a record spans two lines (a message carrying
    ``"\\nimport os; ..."`` written to a ``.pth`` file would run at the next Python start)."""
    from dpaudit.execution.process import one_line

    if isinstance(value, str):
        return one_line(value)
    if isinstance(value, dict):
        return {clean_record(k): clean_record(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(clean_record(v) for v in value)
    return value


def clean_facts(facts: Any) -> dict:
    """The sandbox child's description of the mechanism (its ``"ready"`` reply: function, path,
    found_by, call_form_error, source, declaration) with every string made one line. The child
    runs the audited code, which can patch dpaudit's modules there, so each text it sends is
    cleaned here, in dpaudit's process, before it names anything, reaches an error message or a
    report; a reply that is not a table is an empty one (its absent fields are load errors)."""
    return clean_record(facts) if isinstance(facts, dict) else {}


def _precheck(targets: tuple[str, ...], reports: Mapping[str, Optional[str]], seed: int,
              started: float, command: str) -> None:
    """Fail fast, before any audit runs, on a report path that cannot be written or a target
    whose file does not exist."""
    from dpaudit.loader import parse_target
    from dpaudit.report.json_io import check_report_paths

    check_report_paths(reports)

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


#: a function as the sandbox child may name it: a dotted Python identifier
_FUNCTION_NAME = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


def _function_named(facts: Mapping[str, Any], asked: Optional[str]) -> str:
    """The audited function's name. The child reports it (it found the decorated one), but the
    child runs the audited code, which can patch dpaudit's modules there: the name is taken only
    when it is the one asked for, or a dotted identifier when none was (a forged ``"mechanism "``
    dodged the project's claim for ``FILE:mechanism``; a forged newline reached the terminal)."""
    got = facts.get("function")
    if asked is not None:
        if got != asked:
            raise LoadError(f"the sandbox child reported function {printable(repr(got))[:80]}, "
                            f"not {asked!r} (the audited file tampered with dpaudit in the sandbox)")
        return asked
    if not isinstance(got, str) or not _FUNCTION_NAME.fullmatch(got):
        raise LoadError(f"the sandbox child reported a function name that is none: "
                        f"{printable(repr(got))[:80]} (the audited file tampered with dpaudit in "
                        f"the sandbox)")
    return got


def _warn_weakened_isolation(settings: CheckSettings) -> None:
    """One line on stderr when a pyproject.toml, not a flag, weakens the sandbox (the file read is
    the nearest one, often the audited project's own checkout, whose authors can set it: taken
    only with ``--trust-config``, :func:`dpaudit.config.weakens`); and when sandbox limits are
    given for a run without the sandbox."""
    where = settings.origin.get("isolation", "default")
    if settings.isolation != "strict" and where not in ("flag", "default"):
        print(f"dpaudit: note: isolation = {settings.isolation!r} from {where}: the audited code runs "
              f"with less than the full sandbox (--isolation strict overrides it)", file=sys.stderr)
    limits = [f"--{k}" for k in ("call-timeout", "memory") if settings.origin.get(k) == "flag"]
    if settings.in_process and limits:
        what = "is a sandbox limit: it does" if len(limits) == 1 else "are sandbox limits: they do"
        print(f"dpaudit: note: {' and '.join(limits)} {what} not apply in process (a call that "
              f"never returns waits until interrupted)", file=sys.stderr)


def _said_from_file(record: dict, settings: CheckSettings, target: str) -> dict:
    """``record`` with ``settings_from``: the settings of its target taken from the pyproject.toml
    with ``--trust-config`` (:func:`dpaudit.config.settings_from_file`), which the verdict line,
    the reproduce line and the reports name as the file's (:mod:`dpaudit.report.provenance`); and
    ``float_policy_from: "declaration"`` when the audited code's own decorator relaxed the float
    policy, so the line does not read ``--float off`` as if the user had passed it."""
    from dpaudit.config import settings_from_file

    taken = {} if not settings.trusted or not settings.config_path else \
        settings_from_file(settings, target, str(record.get("target") or ""))
    if record.get("float_policy") in ("off", "warn") and "float" not in taken \
            and settings.origin.get("float") != "flag" and not settings.claim_for(target).get("float"):
        # neither a flag nor the file: the mechanism's own declaration chose it
        record = {**record, "float_policy_from": "declaration"}
    if not taken:
        return record
    return {**record, "settings_from": {"file": os.path.relpath(settings.config_path),
                                        "settings": taken}}


def _cluster(settings: CheckSettings) -> Optional[Executor]:
    """The Dask executor of ``--executor`` (None without it), shared by every target of the run."""
    if settings.executor is None:
        return None
    from dpaudit.execution.dask import executor_from_option

    return executor_from_option(settings.executor, trusted=settings.in_process)


def _check_one(target: str, settings: CheckSettings, progress: Progress,
               deadline: Optional[float], cluster: Optional[Executor] = None,
               partial: Optional[dict] = None) -> dict:
    """Load, audit and record one target. Load and claim errors propagate (usage errors); a
    misbehaving mechanism is an ERROR record. Sandboxed, the file is imported only in the child:
    this process sees the mechanism through the child's description of it. ``partial`` is filled
    as the check goes (the name, the claim, the stage under way, the stages finished), so that a
    stop by signal writes what was done (:func:`_interrupted_record`)."""
    partial = {} if partial is None else partial
    partial.update(under_way="set-up", stages=[])
    from dpaudit.loader import load_mechanism, parse_target
    from dpaudit.report.model import location
    from dpaudit.execution.sandbox import SandboxExecutor
    from dpaudit.results import AuditContext, Origin
    from dpaudit.auditing.estimate import estimate_event
    from dpaudit.spec import CallForm, MechanismSpec

    t0 = time.monotonic()
    remaining = None if deadline is None else deadline - t0
    if remaining is not None and remaining <= 0:
        return _error_record(target, f"not audited: the time limit of {settings.timeout:g} s "
                             f"was reached", "")
    path, function = parse_target(target)
    executor = fresh = None
    if not settings.in_process:
        def sandbox() -> SandboxExecutor:
            return SandboxExecutor(path, function, call_timeout=settings.call_timeout,
                                   memory=settings.memory, isolation=settings.isolation,
                                   pass_env=settings.pass_env,
                                   total_timeout=None if remaining is None
                                   else remaining + _TIMEOUT_GRACE, stated_timeout=settings.timeout)

        from dpaudit.execution.honesty import FreshProcesses

        executor = sandbox()
        if settings.sensitivity is None and settings.replay is None:
            fresh = FreshProcesses(sandbox)  # fresh children: is the noise fixed at import?
    try:
        if executor is not None:
            executor.spawn()  # the child boots while this process imports the auditor
        if fresh is not None:
            fresh.spawn()
        import dpaudit.auditor
        _warm_imports()  # the auditor's heavy imports run while the child boots
        if executor is not None:
            executor.start()  # the child imports the file: a crash there is a load error
            from dpaudit.execution.described import remote_spec
            from dpaudit.report.model import relative_path

            facts = executor.facts
            facts = clean_facts(facts)
            name = f"{relative_path(str(Path(path).expanduser().resolve()))}:{_function_named(facts, function)}"
            isolation = executor.isolation_in_force
        else:
            loaded = load_mechanism(path, function)
            facts, name, isolation = None, loaded.target, "none (in process)"
        if settings.sensitivity is not None:
            from dpaudit.sensitivity_check import check_sensitivity_of

            return check_sensitivity_of(name, settings, executor, facts,
                                        None if executor is not None else loaded.func,
                                        remaining, isolation=isolation)
        if executor is not None:
            from dpaudit.execution.declared import read_declaration, reconcile

            # the declaration as the file's source states it, read here: the child's is the word
            # of the audited code, which can patch dpaudit in the sandbox
            overrides = settings.claim_for(target, name)
            declared, unchecked = reconcile(read_declaration(path, name.rsplit(":", 1)[1]),
                                            facts.get("declaration"), path=path)
            unchecked = tuple(k for k in unchecked if overrides.get(k) is None)
            declared = _refuse_unchecked(declared, unchecked, path, name)
            curve = _curve_claim(declared, overrides)
            if curve and settings.replay is not None:
                return _replay_of_curve(name, curve)
            if curve:  # a claim stated as a curve: the curve audit, in the sandbox
                plain = {k: v for k, v in declared.items() if k not in _CURVE_KEYS}
                spec = remote_spec(facts, name=name, declaration=plain, epsilon=1.0,
                                   **_without_curve(overrides))
                return _curve_record(spec, curve, settings, executor, isolation)
            spec = remote_spec(facts, name=name, declaration=declared, **overrides)
        else:
            from dpaudit.spec import declaration_of

            overrides = settings.claim_for(target, name)
            decl = declaration_of(loaded.func)
            curve = _curve_claim(dict(decl.curve or {}) if decl is not None else {}, overrides)
            if curve and settings.replay is not None:
                return _replay_of_curve(name, curve)
            if curve:
                spec = MechanismSpec.from_function(loaded.func, name=name, epsilon=1.0,
                                                   **_without_curve(overrides))
                return _curve_record(spec, curve, settings, cluster, isolation)
            spec = MechanismSpec.from_function(loaded.func, name=name, **overrides)
        func = None if executor is not None else loaded.func
        partial.update(name=name, claim=_claim_of(spec))
        if settings.replay is not None:
            from dpaudit.replay.command import run_replay

            partial["under_way"] = "replay"

            return run_replay(spec, settings, name, func=func, executor=executor,
                              isolation=isolation, nonfinite=settings.replay["nonfinite"],
                              timeout=_left(deadline))
        budget = settings.samples or dpaudit.auditor.default_samples(spec)

        def replay(own_randomness: bool = False) -> str:
            return reproduce_command(name, settings, spec.claim, spec.neighbours, spec.domain,
                                     spec.size, budget, own_randomness=own_randomness,
                                     float_policy=spec.float_policy)

        origin = Origin(location(spec.source), isolation)
        context = AuditContext(reproduce=replay, family=_family(settings), origin=origin,
                               time_limit=settings.timeout)
        if fresh is not None:
            # a slow one-call form's first call times the audit (the estimate, now); a fast one's
            # is mostly warm-up and round trip, and a batch form's first batch too small: the
            # auditor's own probe times those
            slow = SLOW_FIRST_CALL if spec.call_form is not CallForm.BATCH else float("inf")

            def timed(per_call: float) -> None:
                if per_call >= slow:
                    progress(_with_replay_stage(estimate_event(spec, per_call, budget), per_call,
                                                settings))
                partial["seconds_per_call"] = per_call

            _fresh_first_calls(fresh, spec, executor, settings.seed, timed, deadline)
            if fresh.seconds_per_call is not None and fresh.seconds_per_call >= slow:
                context = replace(context, seconds_per_call=fresh.seconds_per_call)
        # after the fresh-process check's first calls (those must be the child's first); the
        # pairs it points at are sampled first, so the sampling can confirm them
        from dpaudit.replay.command import before_sampling, run_replay

        partial["under_way"] = "replay stage" if settings.replay_stage else "sampling"
        with progress.ticking(partial.get("seconds_per_call")):
            stage, spec = before_sampling(
                spec, settings, name, lambda timeout: run_replay(spec, settings, name, func=func,
                                                                 executor=executor, timeout=timeout),
                _left(deadline), progress)
        if stage is not None:
            partial["stages"].append(f"replay ({str(stage.get('verdict', '')).replace('_', ' ').upper()})")
            partial["replay"] = stage
        partial["under_way"] = "sampling"
        partial["reproduce"] = replay()
        result: Optional[AuditResult] = None
        failed: dict = {}
        try:
            result = dpaudit.auditor.audit(
                spec, samples=settings.samples, confidence=settings.target_confidence,
                seed=settings.seed, executor=executor or cluster, progress=progress,
                timeout=_left(deadline), early_stop=settings.early_stop, context=context)
        except MechanismError as exc:  # the auditor should have made it an ERROR verdict
            failed = _error_record(name, str(exc), replay(), elapsed_s=time.monotonic() - t0,
                                   location=origin.location, isolation=isolation)
        if fresh is not None:
            result = _fixed_noise(result, fresh, spec, settings, deadline)
        record = failed if result is None else result.to_record()
        if stage is None:
            return record
        from dpaudit.replay.command import with_replay_stage

        return with_replay_stage(record, stage)
    finally:
        if executor is not None:
            executor.close()
        if fresh is not None:
            fresh.close()


def _with_replay_stage(event: dict, per_call: float, settings: CheckSettings) -> dict:
    """The time estimate of a sampled audit with its replay stage's calls added (at most
    :data:`dpaudit.replay.BUDGET`, before the sampling; none with ``--no-replay``)."""
    if not settings.replay_stage:
        return event
    from dpaudit.replay.search import BUDGET

    out = dict(event)
    out["replay_calls"] = BUDGET
    out["calls"] = int(out.get("calls") or 0) + BUDGET
    if isinstance(out.get("estimated_seconds"), (int, float)):
        out["estimated_seconds"] = float(out["estimated_seconds"]) + BUDGET * per_call
    return out


def _claim_of(spec: MechanismSpec) -> dict:
    """The claim of a spec as an ``audit`` record writes it."""
    return {"epsilon": float(spec.epsilon), "delta": float(spec.delta),
            "neighbours": spec.neighbours.value,
            "domain": [float(spec.domain.lo), float(spec.domain.hi)], "size": int(spec.size)}


def _left(deadline: Optional[float]) -> Optional[float]:
    return None if deadline is None else max(0.001, deadline - time.monotonic())


def _replay_of_curve(name: str, curve: Mapping[str, Any]) -> dict:
    from dpaudit.replay.result import RECORD_KIND
    from dpaudit.results import error_record

    key = next(iter(curve))
    return error_record(RECORD_KIND, name, f"the replay audits an (ε, δ) claim and {name} states "
                            f"its claim as a curve ({key}=): give --epsilon (and --delta) with "
                            f"--replay, or audit the curve without --replay")


def _fresh_first_calls(fresh: FreshProcesses, spec: MechanismSpec, executor: SandboxExecutor,
                       seed: int, timed: Any = None, deadline: Optional[float] = None) -> None:
    """Start the fresh-process check (:mod:`dpaudit.execution.honesty`): the first calls on D in
    the audit's own child, before any other, then D in an extra child and, only if the two agree
    beyond chance, D′ in another, while the audit runs. D and D′ are the relation's first
    structured pair whose sums and means differ. Its first calls take a share of the time left
    before ``deadline`` at most (:data:`dpaudit.execution.honesty.FRESH_SHARE`)."""
    from dpaudit.execution.honesty import fresh_pair
    from dpaudit.neighbours.registry import relation

    try:
        pair = fresh_pair(relation(spec.neighbours).patterns(spec.domain, spec.size))
    except Exception:  # noqa: BLE001 - a relation without patterns: no check, the audit runs
        return
    fresh.first_calls(spec, executor, pair, seed, timed, deadline=deadline)


def _fixed_noise(result: Optional[AuditResult], fresh: FreshProcesses, spec: MechanismSpec,
                 settings: CheckSettings, deadline: Optional[float] = None) -> Optional[AuditResult]:
    """``result``, or a REFUTED one (ε = ∞) when the noise is the same in every fresh process and
    the first releases on D and D′ differ (an ERROR stays: the mechanism failed). Waits for the
    fresh-process check either way, until ``deadline`` at most (the check then says nothing)."""
    from dpaudit.execution.honesty import ALPHA
    from dpaudit.results import (FLOAT, LOGIC, AuditResult, Counterexample, Finding,
                                 FixedNoiseDetails, FixedNoiseFacts, Interval, Verdict)

    wait = fresh.wait_seconds(settings.call_timeout)
    if deadline is not None:
        wait = min(wait, max(0.0, deadline - time.monotonic()))
    found = fresh.result(timeout=wait)
    if found is None or result is None or result.verdict is Verdict.ERROR:
        return result
    event = {"kind": "fixed-noise", "text": found.reason, "atoms": [found.first]}
    cx = Counterexample(found.dataset, found.neighbour, event, 1.0, 0.0, Interval(1.0, 1.0),
                        Interval(0.0, 0.0))
    details = FixedNoiseDetails(FixedNoiseFacts(
        first_on_D=found.first, first_on_D_prime=found.first_neighbour,
        agreements=found.agreements, calls=found.calls, p=found.p, alpha=ALPHA))
    # noise fixed at import is the logic's failure (no randomness at all); the float64 finding of
    # the audit stands as it was found
    logic = Finding(verdict=Verdict.REFUTED, epsilon_lower_bound=float("inf"),
                    delta_lower_bound=1.0 if spec.delta else None, counterexample=cx,
                    strength=None, details=details, question=LOGIC,
                    alpha=ALPHA, samples=3 * found.calls)
    answers = {**dict(result.answers or {}), LOGIC: logic}
    return AuditResult(target=result.target, claim=spec.claim, neighbours=spec.neighbours,
                       verdict=Verdict.REFUTED, epsilon_lower_bound=float("inf"),
                       delta_lower_bound=1.0 if spec.delta else None,
                       confidence=settings.target_confidence, samples=3 * found.calls,
                       counterexample=cx, reproduce=result.reproduce,
                       elapsed_s=result.elapsed_s or 0.0, seed=settings.seed, details=details,
                       reproducible=result.reproducible, domain=spec.domain, size=spec.size,
                       family=result.family, origin=result.origin, declared_by=result.declared_by,
                       answers={q: answers[q] for q in (LOGIC, FLOAT) if q in answers},
                       float_policy=result.float_policy, decided_by=LOGIC)


def _family(settings: CheckSettings) -> Optional[Family]:
    """The targets sharing the run's family-wise confidence (Bonferroni), when there are several:
    each is audited at :attr:`CheckSettings.target_confidence`, and its p-value for the run is
    :meth:`dpaudit.results.Strength.family` (the smallest run-level 1 − confidence at which it is
    refuted)."""
    from dpaudit.results import Family

    if settings.family < 2:
        return None
    return Family(targets=settings.family, confidence=settings.confidence)


#: the claim stated as a privacy curve (dpaudit.curves): a decorator keyword or a flag
_CURVE_KEYS = ("rho", "mu", "renyi", "profile")


def _curve_claim(declared: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict:
    """The target's curve claim: ``--rho``/``--mu`` (or a ``[tool.dpaudit.targets]`` table) over
    the declaration's; a point claim given on the command line (``--epsilon``) replaces a declared
    curve, as any flag replaces the field it states."""
    flagged = {k: overrides[k] for k in _CURVE_KEYS if overrides.get(k) is not None}
    if flagged:
        return flagged
    if overrides.get("epsilon") is not None:
        return {}
    return {k: declared[k] for k in _CURVE_KEYS if declared.get(k) is not None}


def _without_curve(overrides: Mapping[str, Any]) -> dict:
    return {k: v for k, v in overrides.items() if k not in _CURVE_KEYS and k not in ("epsilon", "delta")}


def _curve_record(spec: MechanismSpec, curve: dict, settings: CheckSettings, executor: Any,
                  isolation: str) -> dict:
    """Audit ``spec`` against its curve claim (:func:`dpaudit.curve_audit`, on the run's executor:
    the sandbox child, or Dask; early stopping as ``--no-early-stop`` says) and return the record,
    with the ``dpaudit check`` line that replays it."""
    from dpaudit.curves import curve_audit
    from dpaudit.reproduce import as_target, number

    result = curve_audit(spec, **curve, samples=settings.samples,
                         confidence=settings.target_confidence, seed=settings.seed,
                         executor=executor, early_stop=settings.early_stop)
    rec = result.to_record()
    (key, value), = curve.items()
    stated = [f"--{key}={number(value)}"] if key in ("rho", "mu") else []
    parts = ["dpaudit", "check", as_target(spec.name), *stated,
             f"--neighbours={spec.neighbours.value}",
             f"--domain={number(spec.domain.lo)}:{number(spec.domain.hi)}", f"--size={spec.size}",
             *([f"--samples={settings.samples}"] if settings.samples else []),
             f"--seed={settings.seed}", *([] if settings.early_stop else ["--no-early-stop"])]
    rec["reproduce"] = shlex.join(parts)
    rec["isolation"] = isolation
    if spec.source:
        from dpaudit.report.model import location

        rec["location"] = location(spec.source)
    return rec


#: the flag that states each claim field on the command line
_CLAIM_FLAGS = {"epsilon": "--epsilon", "delta": "--delta", "neighbours": "--neighbours",
                "domain": "--domain", "size": "--size"}


def _refuse_unchecked(declared: dict, unchecked: tuple, path: str, name: str) -> dict:
    """The declaration to audit, when no claim field is taken on the sandboxed code's word alone.

    A field the source does not spell as a literal (``delta=compute()``, or a declaration made
    as ``f = dpaudit.mechanism(...)(f)``) is known only from the child, which runs the audited
    code and can patch dpaudit there: a leaky sum whose child reported δ = 0.999 was NOT
    REFUTED. Such a field is a usage error naming the flag that states it (module-level
    constants, ``EPSILON = 0.5``, are read from the source). The output kind is a hint, not a
    claim: taken from the child it could only hide the outputs, so it is dropped and detected."""
    refused = [k for k in unchecked if k in _CLAIM_FLAGS]
    if refused:
        said = ", ".join(f"{k} = {_claim_text(declared.get(k))}" for k in refused)
        flags = " and ".join(_CLAIM_FLAGS[k] for k in refused)
        raise LoadError(f"{name}: its declaration of {', '.join(refused)} is not readable from the "
                        f"source (not a literal, or not an @dpaudit.mechanism(...) decorator on "
                        f"the def); dpaudit does not take a claim on the sandboxed code's word "
                        f"(it reported {said}): give {flags}")
    return {k: v for k, v in declared.items() if k not in unchecked}


def _claim_text(value: Any) -> str:
    text = repr(tuple(value)) if isinstance(value, list) else repr(value)
    return printable(text)[:60]


def _first_line(exc: BaseException, limit: int = 200) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _warm_imports() -> None:
    """Import what :func:`dpaudit.audit` imports lazily (scipy, statsmodels, hypothesis through the
    search engine) now, overlapping the sandbox child's start-up. Only a warm-up: never fails."""
    try:
        import importlib

        importlib.import_module("dpaudit.auditing.sampled")
    except ImportError:  # pragma: no cover - the auditor's layout changed; audit() imports it
        pass


def _error_record(target: str, message: str, reproduce: str, *, elapsed_s: float = 0.0,
                  **extra: Any) -> dict:
    """A record for a target that could not be audited (the report still says so); ``extra``
    keys (``location``, ``isolation``) are added."""
    from dpaudit.results import error_record

    return error_record("audit", target, message, reproduce=reproduce, elapsed_s=elapsed_s, **extra)


def _interrupted_record(target: str, partial: Mapping[str, Any], why: str, command: str, *,
                        started: bool = True) -> dict:
    """The record of a target the run's stop (Ctrl-C, SIGTERM) cut: verdict INTERRUPTED (never
    the mechanism's ERROR), with the claim when it was resolved, the stages it finished
    (``stages_finished``; the replay stage's record under ``replay``) and what was under way."""
    from dpaudit.results import Verdict

    stages = list(partial.get("stages") or [])
    under_way = partial.get("under_way")
    if not started:
        message = f"not audited: the run was interrupted ({why}) before this target"
    else:
        done = f"; stages finished: {', '.join(stages)}" if stages else "; no stage finished"
        message = (f"interrupted ({why}) during the {under_way or 'set-up'} before the audit "
                   f"finished{done}")
    rec = _error_record(partial.get("name") or target, message, partial.get("reproduce") or command,
                        elapsed_s=partial.get("elapsed_s", 0.0))
    rec["verdict"] = Verdict.INTERRUPTED.value
    if partial.get("claim") is not None:
        rec["claim"] = dict(partial["claim"])
    rec["stages_finished"] = stages
    if isinstance(partial.get("replay"), dict):
        rec["replay"] = partial["replay"]
    return rec


def _error_records(targets: Any, message: str, command: str) -> list[dict]:
    return [_error_record(t, message, command) for t in targets]


def _write(records: list[dict], reports: Mapping[str, Optional[str]], seed: Optional[int],
           started: float, command: str, progress: Any = None) -> list[str]:
    """Write the requested reports of ``records`` (nothing when none was asked for); return the
    formats that could not be written, each said in one line on stderr. It never raises: a report
    that fails at the end (a full disk, a file-size limit, a folder removed meanwhile) must not
    hide the verdicts, the reproduce line or the other reports."""
    if not any(reports.values()):
        return []
    from dpaudit.report import make_run, write_each

    run = make_run(records, seed=seed, started=started, finished=time.time(), command=command)
    written, failed = write_each(run, **reports)
    if progress is not None:
        for fmt, path in written.items():
            progress.note(f"wrote {fmt}: {path}")
    for fmt, why in failed.items():
        print(f"dpaudit: error: the {fmt} report was not written: {why}", file=sys.stderr)
    return list(failed)
