"""``dpaudit check FILE.py[:FUNCTION] ...``: audit third-party mechanisms from the command line.

A thin command over the check pipeline (:mod:`dpaudit.pipeline`, docs/ARCHITECTURE.md): argv →
settings (flags > ``[tool.dpaudit]`` of the nearest pyproject.toml > defaults; the root seed is
fixed and recorded) → one :func:`dpaudit.pipeline.run.run_target` per target (open it in the
sandbox child, plan its stages, run them, decide its verdict once) → its frozen result's record →
:func:`dpaudit.report.make_run` → JSON / HTML / JUnit / SARIF → the exit code of the worst verdict.

Every bad input is one line on stderr and exit code 3, and when reports were asked for they are
still written, with an ERROR record per target, so a CI artefact always says what happened. A
mechanism that misbehaves is an ERROR verdict (exit 6, distinct from a usage error). On a timeout or
Ctrl-C the results already obtained are written before dpaudit stops.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from typing import TYPE_CHECKING, Any, Mapping, Optional

from dpaudit import reproduce as _reproduce
from dpaudit.config import CheckSettings, read_config, reports_apart, resolve_settings
from dpaudit.errors import DpauditError, InvalidArgument, LoadError, UsageError
from dpaudit.exitcodes import ExitCode, exit_code
from dpaudit.pipeline.target import clean_record
from dpaudit.report.registry import report_paths, to_stdout
from dpaudit.terminal import guard_stdout  # re-exported: dpaudit.commands.check.guard_stdout

if TYPE_CHECKING:
    from dpaudit.execution.base import Executor

__all__ = ["CheckSettings", "resolve_settings", "read_config", "run_check", "exit_code",
           "reproduce_command", "write_reports", "interrupted_record"]


def reproduce_command(target: str, settings: CheckSettings, claim: Any, neighbours: Any,
                      domain: Any, size: int, samples: Optional[int] = None,
                      own_randomness: bool = False, float_policy: Optional[str] = None) -> str:
    """The ``dpaudit check`` line that reruns one target's audit under ``settings``
    (:func:`dpaudit.reproduce.check_command`; pyproject values spelled out)."""
    return _reproduce.check_command(
        target, epsilon=claim.epsilon, delta=claim.delta, neighbours=neighbours, domain=domain,
        size=size, seed=settings.seed, samples=settings.samples if samples is None else samples,
        confidence=settings.target_confidence, call_timeout=settings.call_timeout,
        memory=settings.memory, own_randomness=own_randomness,
        early_stop=settings.early_stop, float_policy=float_policy,
        replay_stage=settings.replay_stage, settings=settings)


# -- the run -------------------------------------------------------------------------------------

def run_check(args: argparse.Namespace) -> ExitCode:
    """Run ``dpaudit check``; return its exit code (only ``dpaudit.cli.main`` exits)."""
    started = time.time()
    # --timeout counts from the process's start (dpaudit.cli.main), else from here
    begun = getattr(args, "started", None) or time.monotonic()
    command = shlex.join(["dpaudit", *getattr(args, "argv", sys.argv[1:])])
    reports = report_paths(args)
    targets = args.target if isinstance(args.target, (list, tuple)) else [args.target]
    config_path = None
    try:
        config, config_path = read_config()
        settings = resolve_settings(args, config, config_path)
    except DpauditError as exc:
        write_reports(_error_records(targets, str(exc), command),
                      reports_apart(reports, targets, config_path), None, started, command)
        raise UsageError(str(exc)) from None
    from dpaudit.progress import Progress

    _warn_weakened_isolation(settings)
    if len(settings.targets) < len(targets):
        print(f"dpaudit: note: {len(targets) - len(settings.targets)} target(s) named more than once "
              f"are audited once", file=sys.stderr)
    _precheck(settings.targets, reports, settings.seed, started, command)
    guard_stdout()
    # a report written to stdout is all stdout holds: the verdict lines go to stderr
    progress = Progress(quiet=settings.quiet, out=sys.stderr if to_stdout(reports) else None)
    try:
        cluster = _cluster(settings)
    except UsageError as exc:
        write_reports(_error_records(settings.targets, str(exc), command), reports, settings.seed, started, command)
        raise
    deadline = None if settings.timeout is None else begun + settings.timeout
    try:
        records, internal_errors = _check_all(settings, progress, deadline, cluster, reports,
                                              (started, command))
    finally:
        if cluster is not None:
            cluster.close()
    not_written = write_reports(records, reports, settings.seed, started, command, progress,
                                gate=settings.fail_on_inconclusive)
    progress.reproduce(records)
    if internal_errors:
        return ExitCode.INTERNAL_ERROR
    if not_written:  # the verdicts are printed, but a report CI relies on is missing
        return ExitCode.USAGE_ERROR
    return exit_code(records, exit_zero=settings.exit_zero,
                     fail_on_inconclusive=settings.fail_on_inconclusive)


def _check_all(settings: CheckSettings, progress: Any, deadline: Optional[float], cluster: Any,
               reports: Mapping[str, Optional[str]], run: tuple) -> tuple[list[dict], int]:
    """Each target through the pipeline, in turn; its record, or an ERROR record naming an
    internal error (the run goes on). A load error stops the run (every report still written);
    a stop by signal writes what was done and re-raises."""
    from dpaudit.execution.process import StopOnSignals
    from dpaudit.pipeline.run import run_target

    started, command = run
    records: list[dict] = []
    internal = 0
    stop = StopOnSignals()
    partial: dict = {}
    try:
        for target in settings.targets:
            progress.start(target)
            partial.clear()
            try:
                record = run_target(target, settings, progress, deadline, cluster,
                                    partial).to_record()
            except (LoadError, UsageError, InvalidArgument) as exc:
                progress.clear()
                exc = type(exc)(clean_record(str(exc)))
                records.append(_error_record(target, str(exc), command))
                records += _error_records(settings.targets[len(records):],
                                          "not audited: an earlier target could not be loaded",
                                          command)
                write_reports(records, reports, settings.seed, started, command)
                raise UsageError(str(exc)) from None
            except Exception as exc:  # a bug in dpaudit: keep what is done, say so, go on
                record = _internal_error(target, exc, stop, command)
                internal += 1
            if stop.received is not None:  # the signal was caught on the way: the target is cut
                raise KeyboardInterrupt(stop.received)
            records.append(record)
            progress.finish(records[-1])
    except KeyboardInterrupt:
        progress.clear()
        done = _interrupted(records, settings.targets, partial, stop.received or "Ctrl-C", command)
        if records[done:]:
            progress.finish(records[done])  # the line of the target under way, as a report has it
        write_reports(records, reports, settings.seed, started, command, progress)
        progress.reproduce(records[: done + 1])  # those done, and the one cut: rerun, it finishes
        raise
    finally:
        stop.restore()
    return records, internal


def _internal_error(target: str, exc: Exception, stop: Any, command: str) -> dict:
    """The ERROR record of a target whose check hit a bug in dpaudit (said on stderr), or the
    interruption a signal caused on the way (something caught it, then failed again)."""
    if stop.received is not None:
        raise KeyboardInterrupt(stop.received) from None
    if os.environ.get("DPAUDIT_DEBUG"):
        raise exc
    internal = f"internal error in dpaudit: {type(exc).__name__}: {_first_line(exc)}"
    print(f"dpaudit: {target}: {internal} (rerun with DPAUDIT_DEBUG=1 for the traceback)",
          file=sys.stderr)
    return _error_record(target, internal, command)


def _interrupted(records: list[dict], targets: tuple, partial: Mapping[str, Any], why: str,
                 command: str) -> int:
    """Append the records of the target a stop cut (what it finished) and of those not begun;
    return how many targets were done before it."""
    done = len(records)
    records += [interrupted_record(t, partial, why, command) for t in targets[done:done + 1]]
    records += [interrupted_record(t, {}, why, command, started=False) for t in targets[done + 1:]]
    return done


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
            write_reports(records, reports, seed, started, command)
            raise UsageError(str(exc)) from None


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


def _cluster(settings: CheckSettings) -> Optional[Executor]:
    """The Dask executor of ``--executor`` (None without it), shared by every target of the run."""
    if settings.executor is None:
        return None
    from dpaudit.execution.dask import executor_from_option

    return executor_from_option(settings.executor, trusted=settings.in_process)


def _error_record(target: str, message: str, reproduce: str, *, elapsed_s: float = 0.0,
                  **extra: Any) -> dict:
    """A record for a target that could not be audited (the report still says so); ``extra``
    keys (``location``, ``isolation``) are added."""
    from dpaudit.results import error_record

    return error_record("audit", target, message, reproduce=reproduce, elapsed_s=elapsed_s, **extra)


def interrupted_record(target: str, partial: Mapping[str, Any], why: str, command: str, *,
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
                   f"finished{done}"
                   f"{_sampled_so_far(partial.get('sampling'), (partial.get('claim') or {}).get('epsilon'))}")
    rec = _error_record(partial.get("name") or target, message, partial.get("reproduce") or command,
                        elapsed_s=partial.get("elapsed_s", 0.0))
    sampling = partial.get("sampling") or {}
    if sampling.get("samples"):  # what the sampling had drawn, and its finished looks' lines
        rec["samples"] = int(sampling["samples"])
    if sampling.get("looks"):
        rec["looks_finished"] = [dict(x) for x in sampling["looks"]]
    return {**rec, "verdict": Verdict.INTERRUPTED.value,
            **({} if partial.get("claim") is None else {"claim": dict(partial["claim"])}),
            "stages_finished": stages,
            **({"replay": partial["replay"]} if isinstance(partial.get("replay"), dict) else {})}


def _sampled_so_far(sampling: Optional[Mapping[str, Any]], claimed: Optional[float] = None) -> str:
    """What an interrupted sampling had done, for the record's message: the samples it drew and
    the best bound of its finished early looks (each at its own α on its own samples: a bound
    that stands, though the run's other looks never ran)."""
    from dpaudit.report.formatting import percent

    if not sampling or not sampling.get("samples"):
        return ""
    text = f"; {int(sampling['samples']):,} samples drawn"
    looks = [x for x in sampling.get("looks") or () if x.get("epsilon_lb") is not None]
    if looks:
        best = max(looks, key=lambda x: x["epsilon_lb"])
        text += (f", {len(sampling['looks'])} early look(s) finished; the best: ε ≥ "
                 f"{best['epsilon_lb']:.4g} at {percent(1 - best['alpha'])}% confidence from look "
                 f"{best['look']}'s {best['samples']:,} samples")
        if claimed is not None and best["epsilon_lb"] > claimed:
            text += (f", above the claimed ε = {claimed:g}: that look refutes the claim (its α is "
                     f"part of the run's, so at the run's confidence), though the run did not finish")
    # the float64 question's bound of a look, which the line above (the first question's) hides
    floats = [(x["questions"]["float"], x["look"]) for x in sampling.get("looks") or ()
              if isinstance(x.get("questions"), Mapping)
              and isinstance(x["questions"].get("float"), (int, float))]
    if floats and claimed is not None and max(floats)[0] > claimed:
        bound, look = max(floats)
        text += (f"; look {look}'s float64 question is above the claim too (ε ≥ {bound:.4g}: under "
                 f"the float policy error, that refutes it)")
    return text


def _error_records(targets: Any, message: str, command: str) -> list[dict]:
    return [_error_record(t, message, command) for t in targets]


def write_reports(records: list[dict], reports: Mapping[str, Optional[str]], seed: Optional[int],
           started: float, command: str, progress: Any = None, gate: bool = False) -> list[str]:
    """Write the requested reports of ``records`` (nothing when none was asked for); return the
    formats that could not be written, each said in one line on stderr. It never raises: a report
    that fails at the end (a full disk, a file-size limit, a folder removed meanwhile) must not
    hide the verdicts, the reproduce line or the other reports."""
    if not any(reports.values()):
        return []
    from dpaudit.report import make_run, write_each

    run = make_run(records, seed=seed, started=started, finished=time.time(), command=command,
                   fail_on_inconclusive=gate)  # --fail-on-inconclusive: JUnit fails those cases too
    written, failed = write_each(run, **reports)
    if progress is not None:
        for fmt, path in written.items():
            progress.note(f"wrote {fmt}: {path}")
    for fmt, why in failed.items():
        print(f"dpaudit: error: the {fmt} report was not written: {why}", file=sys.stderr)
    return list(failed)


def _first_line(exc: BaseException, limit: int = 200) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return text if len(text) <= limit else text[: limit - 1] + "…"
