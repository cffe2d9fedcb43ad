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
are those of ``dpaudit check`` (:mod:`dpaudit.check`); a target that cannot be built is a usage
error (exit 3), a library call that fails an ERROR verdict (exit 6).

``--replay`` audits each target by record and replay instead (a record of kind ``"replay"``, as
``dpaudit check FILE.py --replay`` gives; docs/replay.md, "Libraries without edits"): a
diffprivlib target through its intercepted mechanisms (:mod:`dpaudit.replay.libraries`), an
OpenDP target by the stability maps of its chain's transformations
(:func:`dpaudit.replay.opendp.replay_target`; the chains of a ``lib:FILE.py`` remember their parts
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
    return [(f"{PREFIX}{what}:{k}", v) for k, v in found]


def _recording_chains(path: str) -> Any:
    """While a file that mentions OpenDP is imported, its chains remember their parts and the
    line that built them (:func:`dpaudit.replay.opendp.recording`); a file that does not costs no
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
    from dpaudit.replay.opendp import recording

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


def _reproduce(target: str, settings: Any, budget: int, own_randomness: bool,
               float_policy: Optional[str] = None) -> str:
    from dpaudit.config import defaults
    from dpaudit.reproduce import OWN_RANDOMNESS_NOTE, number

    parts = ["dpaudit", "check", target, *_claim_flags(settings)]
    parts.append(f"--samples={int(budget)}")
    if settings.target_confidence != defaults()["confidence"]:
        parts.append(f"--confidence={number(settings.target_confidence)}")
    parts.append(f"--seed={int(settings.seed)}")
    if target[len(PREFIX):].partition(":")[0] not in LIBRARIES:
        parts.append("--in-process")
    if not settings.early_stop:
        parts.append("--no-early-stop")
    if float_policy is not None:  # spelled out, as dpaudit check does: a pyproject could differ at replay
        parts.append(f"--float={float_policy}")
    if not getattr(settings, "replay_stage", True):
        parts.append("--no-replay")  # the replay stage's pairs are sampled first
    line = shlex.join(parts)
    return f"{line}  # {OWN_RANDOMNESS_NOTE}" if own_randomness else line


def _replay_reproduce(target: str, settings: Any, nonfinite: bool) -> str:
    """The ``dpaudit check`` line that replays a library target's replay audit."""
    parts = ["dpaudit", "check", target, "--replay", *_claim_flags(settings)]
    if nonfinite:
        parts.append("--nonfinite")
    parts.append(f"--seed={int(settings.seed)}")
    if target[len(PREFIX):].partition(":")[0] not in LIBRARIES:
        parts.append("--in-process")
    return shlex.join(parts)


def _replay_record(name: str, spec: Any, settings: Any, nonfinite: bool,
                   remaining: Optional[float]) -> dict:
    """The replay record of one library target (kind ``"replay"``): an OpenDP target by
    :func:`dpaudit.replay.opendp.replay_target`, any other by :func:`dpaudit.replay_audit` on the
    adapter's function (diffprivlib's mechanisms are intercepted), under the library's claim."""
    from dpaudit.replay.audit import replay_audit
    from dpaudit.replay.command import first_site
    from dpaudit.replay.opendp import opendp_of, replay_target

    timeout = {} if remaining is None else {"timeout": max(remaining, 0.001)}
    label = getattr(spec, "name", None) or name  # as the sampled audit names it
    if opendp_of(spec) is not None:
        result = replay_target(spec, seed=settings.seed, name=label, **timeout)
    else:
        result = replay_audit(spec.func, epsilon=spec.epsilon, delta=spec.delta,
                              neighbours=spec.neighbours, domain=spec.domain, size=spec.size,
                              seed=settings.seed, nonfinite=nonfinite, name=label, **timeout)
    rec = result.to_record()
    rec["reproduce"] = _replay_reproduce(name, settings, nonfinite)
    rec["isolation"] = "none (in process)"
    site = first_site(rec)
    if site is not None:  # where a report (SARIF, HTML) points: the call site of the finding
        from dpaudit.report.model import relative_path

        rec["location"] = {"path": relative_path(str(site["path"])), "line": int(site["line"])}
    return rec


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


def _write(records: list, reports: Mapping[str, Optional[str]], seed: Optional[int],
           started: float, command: str, progress: Any = None) -> list:
    """Write the requested reports (as ``dpaudit check`` does); return the formats not written."""
    if not any(reports.values()):
        return []
    from dpaudit.report import make_run, write_each

    run = make_run(records, seed=seed, started=started, finished=time.time(), command=command)
    written, failed = write_each(run, **reports)
    for fmt, path in written.items():
        if progress is not None:
            progress.note(f"wrote {fmt}: {path}")
    for fmt, why in failed.items():
        print(f"dpaudit: error: the {fmt} report was not written: {why}", file=sys.stderr)
    return list(failed)


def _error(target: str, message: str, reproduce: str = "", kind: str = "audit") -> dict:
    from dpaudit.results import error_record

    return error_record(kind, target, message, reproduce=reproduce,
                        isolation="none (in process)")


def run_library_check(args: argparse.Namespace) -> ExitCode:
    """``dpaudit check`` when its targets are library targets; return its exit code."""
    from dpaudit.check import clean_record
    from dpaudit.config import read_config, resolve_settings
    from dpaudit.report.json_io import check_report_paths
    from dpaudit.report.registry import report_paths

    started = time.time()
    command = shlex.join(["dpaudit", *getattr(args, "argv", sys.argv[1:])])
    reports = report_paths(args)
    targets = list(args.target if isinstance(args.target, (list, tuple)) else [args.target])
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
    except DpauditError as exc:
        _write([_error(t, str(exc), command) for t in targets], reports, None, started, command)
        raise UsageError(str(exc)) from None

    import dpaudit.auditor
    from dpaudit.progress import Progress
    from dpaudit.results import AuditContext, Family, Origin

    progress = Progress(quiet=settings.quiet)
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
    family = None if len(specs) < 2 else Family(targets=len(specs), confidence=settings.confidence)
    confidence = settings.confidence if len(specs) < 2 else \
        1.0 - (1.0 - settings.confidence) / len(specs)
    settings_for = _Settings(settings, confidence)
    deadline = None if settings.timeout is None else time.monotonic() + settings.timeout
    records: list[dict] = []
    try:
        for name, spec in specs:
            progress.start(name)
            budget = settings.samples or dpaudit.auditor.default_samples(spec)
            remaining = None if deadline is None else max(deadline - time.monotonic(), 0.0)

            policy = settings.float_policy or getattr(spec, "float_policy", None) or "error"

            def replay(own: bool = False, name: str = name, budget: int = budget,
                       policy: Optional[str] = policy) -> str:
                return _reproduce(name, settings_for, budget, own, policy)

            context = AuditContext(reproduce=replay, family=family,
                                   origin=Origin(None, "none (in process)"))
            try:
                library = getattr(spec, "library", None)
                if replay_option is not None:  # --replay: the replay audit alone
                    record = _replay_record(name, spec, settings, replay_option["nonfinite"],
                                            remaining)
                elif isinstance(library, Mapping) and library.get("curve"):
                    # a claim stated as a curve (an OpenDP ρ-zCDP measurement): the curve audit
                    from dpaudit.curves import curve_audit

                    record = curve_audit(spec, samples=settings.samples, confidence=confidence,
                                         seed=settings.seed).to_record()
                    record["reproduce"] = replay()
                else:
                    from dpaudit.replay.command import before_sampling

                    stage, audited = before_sampling(
                        spec, settings, name,
                        lambda timeout, spec=spec, name=name: _replay_record(
                            name, spec, settings, False, timeout), remaining, progress)
                    result = dpaudit.auditor.audit(audited, samples=settings.samples,
                                                   confidence=confidence, seed=settings.seed,
                                                   progress=progress, timeout=remaining,
                                                   early_stop=settings.early_stop, context=context,
                                                   **_float_keyword(settings))
                    record = result.to_record()
                    if stage is not None:
                        from dpaudit.replay.command import with_replay_stage

                        record = with_replay_stage(record, stage)
            except DpauditError as exc:  # the library refused: an ERROR of the target
                record = _error(name, str(exc), replay()) if replay_option is None else \
                    _error(name, str(exc), _replay_reproduce(name, settings, False), kind="replay")
            library = getattr(spec, "library", None)  # name, version, its claim (as the suite's)
            if isinstance(library, Mapping) and library:
                record["library"] = dict(library)
            records.append(clean_record(record))
            progress.finish(records[-1])
    except KeyboardInterrupt:
        progress.clear()
        done = [n for n, _ in specs][len(records):]
        records += [{**_error(n, "interrupted before the audit finished", command),
                     "verdict": "interrupted"} for n in done]  # the run's stop, not the library's ERROR
        _write(records, reports, settings.seed, started, command, progress)
        raise
    not_written = _write(records, reports, settings.seed, started, command, progress)
    progress.reproduce(records)
    if not_written:
        return ExitCode.USAGE_ERROR
    return exit_code(records, exit_zero=settings.exit_zero,
                     fail_on_inconclusive=settings.fail_on_inconclusive)


def _float_keyword(settings: Any) -> dict:
    """``float=`` for :func:`dpaudit.audit` when the run states a float policy (``--float``,
    ``[tool.dpaudit] float``): it comes before the target's own (docs/floating-point.md)."""
    return {} if settings.float_policy is None else {"float": settings.float_policy}


class _Settings:
    """``settings`` as :func:`_reproduce` reads them, with the per-target confidence."""

    def __init__(self, settings: Any, confidence: float) -> None:
        self.claim, self.seed, self.early_stop = settings.claim, settings.seed, settings.early_stop
        self.replay_stage = settings.replay_stage
        self.target_confidence = confidence
