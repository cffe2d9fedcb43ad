"""``dpaudit check lib:...``: audit a DP library's target from the command line (docs/libraries.md).

Two forms of target, each audited with the library's own claim (:mod:`dpaudit.adapters`):

``lib:LIBRARY:NAME(KEYWORD=VALUE, ...)``
    ``LIBRARY`` is ``diffprivlib`` or ``pydp`` (python-dp), ``NAME`` and the keywords those of
    ``dpaudit.adapters.LIBRARY.target(NAME, **keywords)``, the values Python literals, e.g.
    ``'lib:diffprivlib:tools.mean(epsilon=1, bounds=(0, 1))'``. dpaudit builds the target
    itself: no code of the user's is imported.

``lib:FILE.py[:NAME]``
    A Python file that builds targets as module-level values (any adapter, OpenDP measurements
    among them: ``mean = opendp.target(space >> ...)``); without ``NAME``, every
    :class:`~dpaudit.spec.MechanismSpec` the file defines, in order. The file is imported in
    dpaudit's own process, so it needs ``--in-process`` (the code is trusted), as ``--executor``
    does.

A library's code is trusted and runs in process (python-dp must: its generator's buffer is
copied by ``fork()``). ``--neighbours``, ``--domain`` and ``--size`` reach the adapter
(the library form only); ``--epsilon``/``--delta`` are refused: the claim is the library's. Every
report format, the reproduce line, the family-wise confidence over the targets and the exit code
are those of ``dpaudit check`` (:mod:`dpaudit.commands.check`); a target that cannot be built is a usage
error (exit 3), a library call that fails an ERROR verdict (exit 6).

``--replay`` audits each target by record and replay instead (a record of kind ``"replay"``, as
``dpaudit check FILE.py --replay`` gives; docs/replay.md, "Libraries without edits"): a
diffprivlib target through its intercepted mechanisms (:mod:`dpaudit.replay.libraries`), an
OpenDP target by the stability maps of its chain's transformations
(:func:`dpaudit.stability.check_target`; the chains of a ``lib:FILE.py`` remember their parts
and lines while the file is imported). Library code is trusted, so ``lib:LIBRARY:NAME`` needs no
``--in-process`` for it; ``lib:FILE.py`` still does.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import shlex
import sys
import time
from typing import Any, Mapping, Optional

from dpaudit.errors import DpauditError, InvalidArgument, UsageError
from dpaudit.exitcodes import ExitCode, exit_code
from dpaudit.commands.check import write_reports as _write
from dpaudit.report.registry import report_paths, to_stdout

__all__ = ["PREFIX", "LIBRARIES", "is_library_target", "parse_library_target", "library_spec",
           "run_library_check"]

#: The prefix of a library target on the command line.
PREFIX = "lib:"

#: Library names the literal form takes -> the adapter module of :mod:`dpaudit.adapters`.
LIBRARIES = {"diffprivlib": "diffprivlib", "pydp": "pydp", "python-dp": "pydp"}

#: Flags of ``dpaudit check`` that mean nothing for a library target run in process.
_REFUSED = {"epsilon": "--epsilon", "delta": "--delta", "sensitivity": "--sensitivity",
            "executor": "--executor", "memory": "--memory", "call_timeout": "--call-timeout",
            "pass_env": "--pass-env"}


def is_library_target(target: Any) -> bool:
    """Whether a ``dpaudit check`` target is a library target (``lib:...``)."""
    return isinstance(target, str) and target.startswith(PREFIX)


def parse_library_target(target: str) -> tuple[str, str, dict]:
    """``("library", NAME, keywords)`` for ``lib:LIBRARY:NAME(...)``, or ``("file", PATH, {"name":
    NAME or None})`` for ``lib:FILE.py[:NAME]``; an :class:`InvalidArgument` line otherwise."""
    rest = target[len(PREFIX):] if is_library_target(target) else target
    head, sep, call = rest.partition(":")
    if head in LIBRARIES:
        return "library", *_parse_call(target, call if sep else "")
    if head == "opendp":
        raise InvalidArgument(f"{target}: an OpenDP measurement is a Python object, not a name: build "
                              f"it in a file (mean = opendp.target(...)) and give lib:FILE.py:mean "
                              f"with --in-process")
    path, dot_py, name = rest.partition(".py")
    if path and dot_py and (not name or name.startswith(":")):
        name = name[1:] or None
        if name is not None and not re.fullmatch(r"[A-Za-z_]\w*", name):
            raise InvalidArgument(f"{target}: NAME after the file must be a Python name")
        return "file", path + ".py", {"name": name}
    raise InvalidArgument(f"{target}: a library target is lib:LIBRARY:NAME(KEYWORD=VALUE, ...) with "
                          f"LIBRARY one of {', '.join(LIBRARIES)}, or lib:FILE.py[:NAME]")


def _parse_call(target: str, call: str) -> tuple[str, dict]:
    """``NAME`` and the literal keywords of ``NAME(KEYWORD=VALUE, ...)``."""
    try:
        node = ast.parse(call.strip(), mode="eval").body
    except SyntaxError:
        raise InvalidArgument(f"{target}: write the target as NAME(KEYWORD=VALUE, ...), e.g. "
                              f"lib:diffprivlib:tools.mean(epsilon=1, bounds=(0, 1))") from None
    keywords: dict[str, Any] = {}
    if isinstance(node, ast.Call):
        if node.args:
            raise InvalidArgument(f"{target}: give the library's parameters as KEYWORD=VALUE")
        for kw in node.keywords:
            if kw.arg is None:
                raise InvalidArgument(f"{target}: ** is not a parameter: write KEYWORD=VALUE")
            try:
                keywords[kw.arg] = ast.literal_eval(kw.value)
            except ValueError:
                raise InvalidArgument(f"{target}: {kw.arg}= must be a literal (a number, a text, "
                                      f"True/False/None, or a tuple or list of them)") from None
        node = node.func
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        raise InvalidArgument(f"{target}: NAME must be the library's name for it, e.g. tools.mean")
    return ".".join([node.id, *reversed(parts)]), keywords


def library_spec(target: str, claim: Optional[Mapping[str, Any]] = None,
                 in_process: bool = False) -> list[tuple[str, Any]]:
    """The ``(name, spec)`` pairs a library target stands for (one for the library form, every
    spec of the file for the file form). ``claim`` holds the flags ``neighbours``, ``domain``,
    ``size`` (library form only)."""
    import importlib

    from dpaudit.spec import MechanismSpec

    kind, what, keywords = parse_library_target(target)
    claim = {k: v for k, v in dict(claim or {}).items() if v is not None}
    if kind == "library":
        for key in claim:
            if key in keywords:
                raise InvalidArgument(f"{target}: {key} is given twice (in the target and as --{key})")
        adapter = importlib.import_module(f"dpaudit.adapters.{LIBRARIES[target[len(PREFIX):].partition(':')[0]]}")
        return [(target, adapter.target(what, **keywords, **claim))]
    if claim:
        flags = ", ".join(f"--{k}" for k in claim)
        raise InvalidArgument(f"{target}: {flags} cannot change a target built in a file: set it "
                              f"where the file builds the target")
    if not in_process:
        raise UsageError(f"{target}: lib:FILE.py imports the file in dpaudit's own process, without "
                         f"the sandbox; add --in-process to confirm the code is trusted")
    from dpaudit.loader import import_file

    if not os.path.isfile(what):
        raise UsageError(f"{what}: no such file" if not os.path.exists(what) else f"{what}: not a file")
    with _recording_chains(what):
        module = import_file(what)
    name = keywords["name"]
    found = [(k, v) for k, v in vars(module).items() if isinstance(v, MechanismSpec)
             and (name is None or k == name)]
    if name is not None and not found:
        got = getattr(module, name, None)
        raise UsageError(f"{what}: no target named {name!r}" if got is None else
                         f"{what}: {name!r} is a {type(got).__name__}, not a target (build it with "
                         f"dpaudit.adapters)")
    if not found:
        raise UsageError(f"{what}: no library target in it: build one at module level, e.g. "
                         f"mean = diffprivlib.target('tools.mean', epsilon=1, bounds=(0, 1))")
    # named by the file's own names first: two chains of one metric and measure read alike
    # ("opendp 0.16.0: SymmetricDistance() >> MaxDivergence at d_in=1"), and the one a stop cut
    # was named by its variable, the finished one not
    from dataclasses import replace

    return [(f"{PREFIX}{what}:{k}", replace(v, name=f"{what}:{k} ({v.name})")) for k, v in found]


def _recording_chains(path: str) -> Any:
    """While a file that mentions OpenDP is imported, its chains remember their parts and the
    line that built them (:func:`dpaudit.stability.recording`); a file that does not costs no
    import of OpenDP."""
    import contextlib
    import importlib.util

    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            mentions = "opendp" in fh.read()
    except OSError:
        mentions = False
    if not mentions or importlib.util.find_spec("opendp") is None:
        return contextlib.nullcontext()
    from dpaudit.stability import recording

    return recording()


def _claim_flags(settings: Any) -> list[str]:
    """``--neighbours``, ``--size`` and ``--domain`` as the run gave them (the rest of a library
    target's claim is the library's own)."""
    from dpaudit.reproduce import number

    parts = []
    for key in ("neighbours", "size"):
        if settings.claim.get(key) is not None:
            value = settings.claim[key]
            parts.append(f"--{key}={getattr(value, 'value', value)}")
    if settings.claim.get("domain") is not None:
        dom = settings.claim["domain"]
        parts.append(f"--domain={number(dom.lo)}:{number(dom.hi)}")
    return parts


def _replay_flags(args: argparse.Namespace) -> tuple[argparse.Namespace, Optional[dict]]:
    """``--replay`` (with ``--nonfinite``) for library targets, taken here: a library's code is
    trusted and runs in process, so the library form needs no ``--in-process`` (the file form
    still does, for importing the file). Returns the flags without them (for the settings) and
    the replay option, or None without ``--replay``."""
    if not getattr(args, "replay", False):
        return args, None
    if getattr(args, "sensitivity", None) is not None:
        raise UsageError("--replay and --sensitivity are two different audits: give one")
    if getattr(args, "replay_stage", True) is False:
        raise UsageError("--replay and --no-replay contradict each other: give one")
    option = {"nonfinite": bool(getattr(args, "nonfinite", False))}
    return argparse.Namespace(**{**vars(args), "replay": False, "nonfinite": False}), option


def _error(target: str, message: str, reproduce: str = "", kind: str = "audit") -> dict:
    from dpaudit.results import error_record

    return error_record(kind, target, message, reproduce=reproduce,
                        isolation="none (in process)")


def run_library_check(args: argparse.Namespace) -> ExitCode:
    """``dpaudit check`` when its targets are library targets; return its exit code."""
    started = time.time()
    command = shlex.join(["dpaudit", *getattr(args, "argv", sys.argv[1:])])
    reports = report_paths(args)
    targets = list(args.target if isinstance(args.target, (list, tuple)) else [args.target])
    settings = _settings(args, targets, reports, (started, command))
    from dpaudit.pipeline.run import library_runs
    from dpaudit.progress import Progress

    progress = Progress(quiet=settings.quiet, out=sys.stderr if to_stdout(reports) else None)
    specs: list[tuple[str, Any]] = []
    for i, target in enumerate(targets):
        try:
            specs += library_spec(target, {k: settings.claim.get(k) for k in ("neighbours", "domain", "size")},
                                  in_process=settings.in_process)
        except DpauditError as exc:
            records = [_error(t, str(exc) if j == i else "not audited: another target could not be "
                              "built", command) for j, t in enumerate(targets)]
            _write(records, reports, settings.seed, started, command)
            raise UsageError(str(exc)) from None
    runs = library_runs(specs, settings, progress, _claim_flags(settings),
                        lambda name: name[len(PREFIX):].partition(":")[0] not in LIBRARIES)
    began = getattr(args, "started", None)
    if began is not None and settings.timeout is not None:
        # --timeout counts from the process's start, as for a file target: the interpreter,
        # dpaudit's imports and the library file's own (OpenDP's, Polars') count too
        for run in runs:
            run.deadline = began + settings.timeout
    records = _check_all(runs, progress, reports, (started, command))
    not_written = _write(records, reports, settings.seed, started, command, progress,
                         gate=settings.fail_on_inconclusive)
    progress.reproduce(records)
    if not_written:
        return ExitCode.USAGE_ERROR
    return exit_code(records, exit_zero=settings.exit_zero,
                     fail_on_inconclusive=settings.fail_on_inconclusive)


def _settings(args: argparse.Namespace, targets: list, reports: Mapping[str, Optional[str]],
              run: tuple) -> Any:
    """The run's settings, with ``--replay`` taken here (library code runs in process); a flag
    that does not apply to a library target, or a file target among them, is a usage error (every
    report still written, an ERROR record per target)."""
    from dataclasses import replace

    from dpaudit.config import read_config, reports_apart, resolve_settings
    from dpaudit.report.json_io import check_report_paths

    started, command = run
    config_path = None
    try:
        files = [t for t in targets if not is_library_target(t)]
        if files:
            raise UsageError(f"{files[0]}: give library targets (lib:...) and files in separate runs "
                             f"of dpaudit check")
        given = [flag for attr, flag in _REFUSED.items() if getattr(args, attr, None)]
        if given:
            raise UsageError(f"{given[0]} does not apply to a library target (its claim is the "
                             f"library's own, and it runs in process)")
        args, replay_option = _replay_flags(args)
        config, config_path = read_config()
        settings = resolve_settings(args, config, config_path)
        check_report_paths(reports)
    except DpauditError as exc:  # never written over a file the run reads (a lib:FILE.py)
        _write([_error(t, str(exc), command) for t in targets],
               reports_apart(reports, targets, config_path), None, started, command)
        raise UsageError(str(exc)) from None
    return replace(settings, replay=replay_option)


def _check_all(runs: list, progress: Any, reports: Mapping[str, Optional[str]],
               run: tuple) -> list[dict]:
    """Each library target through the pipeline (:func:`dpaudit.pipeline.run.run_opened`); the
    library refusing a call is the target's ERROR; a stop writes what was done and re-raises."""
    from dpaudit.pipeline.run import run_opened

    started, command = run
    records: list[dict] = []
    try:
        for one in runs:
            name = one.target.name
            progress.start(name)
            try:
                record = run_opened(one).to_record()
            except DpauditError as exc:  # the library refused: an ERROR of the target
                record = _refused(one, exc)
            records.append(record)
            progress.finish(records[-1])
    except KeyboardInterrupt as stop:
        from dpaudit.commands.check import interrupted_record

        progress.clear()
        why = str(stop) or "Ctrl-C"
        left = runs[len(records):]  # the run's stop, not the library's ERROR: what the one under
        # way had done (its claim, stages, samples and finished looks), the others not begun
        records += [interrupted_record(r.target.name, {**r.partial, "name": r.target.name},
                                       why, command, started=i == 0)
                    for i, r in enumerate(left)]
        if left:
            progress.finish(records[len(records) - len(left)])
        _write(records, reports, runs[0].settings.seed if runs else None, started, command, progress)
        progress.reproduce(records[: len(records) - len(left) + 1])
        raise
    return records


def _refused(run: Any, exc: Exception) -> dict:
    """The ERROR record of a library target whose library refused a call (with the line that
    reruns it, and the library it names)."""
    from dpaudit.pipeline.plan import plan_for
    from dpaudit.pipeline.target import clean_record
    from dpaudit.reproduce import check_line

    engine = plan_for(run.settings, run.target).engine
    if run.spec is None:
        run.spec = run.target.spec()
    line = check_line(run.target.name, engine.flags(run), seed=run.settings.seed,
                      in_process=run.target.in_process_flag, settings=run.settings)
    kind = "replay" if engine.name == "replay" else "audit"
    rec = _error(run.target.name, str(exc), line, kind=kind)
    if run.target.library:
        rec["library"] = dict(run.target.library)
    return clean_record(rec)
