"""pytest plugin (entry point ``pytest11``): audits as test items, and a fixture for your own tests.

``pytest --dpaudit`` collects the audit definitions of ``audits/`` (or ``--dpaudit-path``) as test
items, one per audit id; an item fails when its verdict differs from the expected one, with a
readable report (claim, finding, counterexample, probabilities, and the command that replays it)::

    pytest --dpaudit                            # the tests and every audit in audits/
    pytest --dpaudit audits/laplace.py          # only these audits
    pytest --dpaudit --dpaudit-id laplace.sampled --dpaudit-html audits.html

The ``dpaudit_audit`` fixture audits a mechanism inside any test (with or without ``--dpaudit``)::

    def test_my_noisy_sum_is_private(dpaudit_audit):
        dpaudit_audit(noisy_sum, epsilon=1.0, domain=(0, 1))      # fails the test if refuted

Options all start with ``--dpaudit``. Nothing heavy is imported unless ``--dpaudit`` is given or
the fixture is used: without them the plugin adds a few options and one cheap check per collected
file, and changes nothing else.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Optional

import pytest

_RECORDS = pytest.StashKey[list]()
_STARTED = pytest.StashKey[float]()
_WRITTEN = pytest.StashKey[tuple]()


def pytest_addoption(parser):
    group = parser.getgroup("dpaudit", "differential-privacy audits (dpaudit)")
    group.addoption("--dpaudit", action="store_true", default=False,
                    help="collect audit definitions (audits/ or --dpaudit-path) as test items")
    group.addoption("--dpaudit-path", action="append", default=None, metavar="PATH",
                    help="audit files or folders to collect (repeatable; default audits/)")
    group.addoption("--dpaudit-id", action="append", default=None, metavar="ID",
                    help="only the audit with this id (repeatable)")
    group.addoption("--dpaudit-seed", default=None, metavar="S",
                    help="root seed for audits and the dpaudit_audit fixture (default: dpaudit's fixed seed)")
    group.addoption("--dpaudit-json", default=None, metavar="F",
                    help="write the canonical JSON of every audit run in this session")
    group.addoption("--dpaudit-html", default=None, metavar="F",
                    help="write the HTML report of every audit run in this session")


def _enabled(config) -> bool:
    return bool(config.getoption("dpaudit", False))


def _audit_roots(config) -> list[Path]:
    paths = config.getoption("dpaudit_path") or ["audits"]
    base = config.invocation_params.dir
    return [(base / p).resolve() for p in paths]


def _root_seed(config) -> int:
    """``--dpaudit-seed``, else dpaudit's fixed seed (a bad value is a pytest usage error)."""
    from dpaudit.config import resolve_seed
    from dpaudit.errors import InvalidArgument

    try:
        return resolve_seed(config.getoption("dpaudit_seed"), "--dpaudit-seed", read=False)[0]
    except InvalidArgument as exc:
        raise pytest.UsageError(str(exc)) from None


def _report_options(config) -> dict:
    return {"json": config.getoption("dpaudit_json"), "html": config.getoption("dpaudit_html")}


def pytest_configure(config):
    config.stash[_RECORDS] = []
    config.stash[_STARTED] = time.time()
    if any(_report_options(config).values()):
        # a report path that cannot be written (a folder, a symbolic link) is refused now
        from dpaudit.errors import UsageError
        from dpaudit.report.json_io import check_report_paths

        try:
            check_report_paths({f"--dpaudit-{k}": v for k, v in _report_options(config).items()})
        except UsageError as exc:
            raise pytest.UsageError(str(exc)) from None
    if not _enabled(config):
        return
    config.addinivalue_line("markers", "dpaudit: an audit definition collected by dpaudit")
    _root_seed(config)  # validate now: a bad seed is a usage error, not a failure per item
    if config.args_source is not pytest.Config.ArgsSource.ARGS:
        # no paths on the command line: collect the audit folders beside the usual tests
        roots = _audit_roots(config)
        missing = [str(r) for r in roots if not r.exists()]
        if missing:
            raise pytest.UsageError(f"--dpaudit: no audit folder {', '.join(missing)} "
                                    f"(give --dpaudit-path PATH)")
        for r in roots:
            if str(r) not in config.args:
                config.args.append(str(r))


def pytest_collect_file(file_path: Path, parent):
    if not _enabled(parent.config) or file_path.suffix != ".py" or file_path.name.startswith(("_", "conftest")):
        return None
    resolved = file_path.resolve()
    for root in _audit_roots(parent.config):
        if resolved == root or root in resolved.parents:
            return AuditFile.from_parent(parent, path=file_path)
    return None


class AuditFile(pytest.File):
    """An audit definition file: one item per audit in its ``AUDITS``."""

    def collect(self):
        from dpaudit.errors import DpauditError
        from dpaudit.suite import load_file

        try:
            audits = load_file(self.path)
        except DpauditError as exc:
            raise self.CollectError(f"dpaudit: {exc}") from None
        wanted = self.config.getoption("dpaudit_id")
        for audit in audits:
            if wanted and audit.id not in wanted:
                continue
            yield AuditItem.from_parent(self, name=audit.id, audit=audit)


class AuditMismatch(Exception):
    """An audit's verdict differs from the one expected of it (carries the record)."""

    def __init__(self, record: dict) -> None:
        super().__init__(record.get("id"))
        self.record = record


class AuditItem(pytest.Item):
    """One audit definition, run with the session's root seed."""

    def __init__(self, *, audit, **kwargs):
        super().__init__(**kwargs)
        self.audit = audit
        self.add_marker("dpaudit")

    def runtest(self) -> None:
        from dpaudit.suite import run_one

        missing = self.audit.missing()
        if missing:  # a visible skip with its reason, never a pass
            pytest.skip(f"requires {', '.join(missing)} (not installed): pip install 'dpaudit[libraries]'")
        rec = run_one(self.audit, _root_seed(self.config))
        self.config.stash[_RECORDS].append(rec)
        self.user_properties += [("verdict", rec["verdict"]), ("expected", rec["expected"]),
                                 ("reproduce", rec["reproduce"])]
        if rec["verdict"] != rec["expected"]:
            raise AuditMismatch(rec)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, AuditMismatch):
            return explain(excinfo.value.record)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):
        return self.path, (self.audit.line or 1) - 1, f"dpaudit {self.audit.kind.value}: {self.audit.id}"


def explain(rec: dict, headline: Optional[str] = None) -> str:
    """A multi-line, readable account of one record (what failed and how to replay it)."""
    from dpaudit.report import describe as d

    v, e = rec.get("verdict"), rec.get("expected")
    if headline is None:
        headline = f"dpaudit {rec.get('kind')} {d.title(rec)}: " + (
            f"expected {d.verdict_label(e)}, got {d.verdict_label(v)}" if e else d.verdict_label(v))
    lines = [headline,
             f"  claim:     {d.claim_text(rec)}",
             f"  verdict:   {d.verdict_label(v)} ({d.verdict_meaning(v)})",
             f"  finding:   {d.finding_text(rec)}"]
    cx = rec.get("counterexample")
    if isinstance(cx, dict):
        if "dataset" in cx:
            lines.append(f"  D:         {cx['dataset']}")
        if "neighbour" in cx:
            lines.append(f"  D':        {cx['neighbour']}")
        ev = cx.get("event")
        if isinstance(ev, dict) and ev.get("text"):
            lines.append(f"  event S:   {ev['text']}")
        if "p" in cx and "q" in cx:
            def ci(iv: Any) -> str:
                return f"[{d.fmt(iv[0])}, {d.fmt(iv[1])}]" if isinstance(iv, (list, tuple)) and len(iv) == 2 else ""

            lines.append(f"  P[M(D) in S] = {d.fmt(cx['p'])} {ci(cx.get('p_interval'))}; "
                         f"P[M(D') in S] = {d.fmt(cx['q'])} {ci(cx.get('q_interval'))}")
    from dpaudit.progress import strength_text

    if strength_text(rec):
        lines.append(f"  strength:  {strength_text(rec)}")
    if rec.get("error"):
        lines.append(f"  error:     {rec['error']}")
    if rec.get("location"):
        lines.append(f"  source:    {rec['location'].get('path')}:{rec['location'].get('line')}")
    if rec.get("reproduce"):
        lines.append(f"  reproduce: {rec['reproduce']}")
    return "\n".join(lines)


#: Said after an unexpected ERROR verdict: the audited code failed, not the test's arguments.
_ERROR_NOTE = " (an error in the audited code, exit code 6 in dpaudit check; a bad argument is a usage error, 3)"


def _exit_code_property(node: Any, verdict: str, expected: Optional[str] = None) -> None:
    """Record on the test (``user_properties``: a ``<property>`` in pytest's JUnit XML) the
    verdict and the exit code ``dpaudit check`` would give it (docs/cli.md, "Exit codes"):
    6 for an ERROR of the audited code, 3 for a usage error (a bad claim or argument), 1 for a
    refutation, 0 otherwise, so CI tells "fix the mechanism" from "fix the test"."""
    from dpaudit.exitcodes import ExitCode, exit_code

    code = ExitCode.USAGE_ERROR if verdict == "usage_error" else exit_code([{"verdict": verdict}])
    node.user_properties += [("dpaudit_verdict", verdict), ("dpaudit_exit_code", int(code))]
    if expected is not None:
        node.user_properties.append(("dpaudit_expected", expected))


def _reproduce_root(config: Any) -> Any:
    """A context in which reproduce lines name files relative to pytest's rootdir
    (:data:`dpaudit.reproduce.ROOT`), not the CI machine's absolute path."""
    import contextlib

    from dpaudit.reproduce import ROOT

    @contextlib.contextmanager
    def scope():
        token = ROOT.set(str(config.rootpath))
        try:
            yield
        finally:
            ROOT.reset(token)

    return scope()


_CLAIM_KEYS = ("epsilon", "delta", "neighbours", "domain", "size", "log_prob", "distribution", "output",
               "float", "float_events", "rho", "mu", "renyi", "profile")


def _project_float(config: Any) -> Optional[str]:
    """``float`` of the ``[tool.dpaudit]`` table of the rootdir's pyproject.toml, if any: the
    fixture follows ``dpaudit check``'s precedence (keyword > pyproject > decorator)."""
    from dpaudit.config import read_config
    from dpaudit.errors import DpauditError
    from dpaudit.validation import check_float_policy

    try:
        table, path = read_config(str(config.rootpath))
        raw = table.get("float")
        return None if raw is None else check_float_policy(raw, f"{path} [tool.dpaudit] float")
    except DpauditError:
        return None  # a broken pyproject is dpaudit check's to report


def _check(mechanism: Any, claim: dict, keywords: dict, seed: Any, exact: bool,
           replay_stage: bool, config: Any) -> tuple:
    """The fixture's mechanism through the check pipeline (:mod:`dpaudit.pipeline`): settings
    from the keywords, an in-memory target (:func:`~dpaudit.pipeline.target.open_spec`), the
    plan's engine (the sampled audit, the exact audit with ``exact=True``, the curve audit for a
    curve claim) and the stages around it. Returns the
    :class:`~dpaudit.pipeline.result.CheckResult` and the spec audited."""
    from dpaudit.pipeline.api import settings_for
    from dpaudit.pipeline.run import run_opened
    from dpaudit.pipeline.stages import Run
    from dpaudit.pipeline.target import open_spec

    origin = "flag"
    if "float" not in claim and "float_events" not in claim:
        project = _project_float(config)
        if project is not None:
            claim["float"], origin = project, "pyproject.toml"
    name = str(getattr(mechanism, "name", None) or getattr(mechanism, "__name__", "mechanism"))
    settings = settings_for(name, seed=seed, samples=keywords.get("samples"),
                            confidence=keywords.get("confidence", 0.95),
                            timeout=keywords.get("timeout"),
                            early_stop=keywords.get("early_stop", True), replay_stage=replay_stage,
                            float_policy=claim.get("float"), float_origin=origin)
    target = open_spec(mechanism, settings, claim=claim, keywords=keywords, exact=exact)
    progress = keywords.get("progress") or (lambda event: None)
    run = Run(target=target, settings=settings, progress=progress,
              confidence=settings.target_confidence)
    return run_opened(run), run.spec


@pytest.fixture
def dpaudit_audit(request):
    """Audit a mechanism inside a test; the test fails, with a readable report, when the verdict
    is not the expected one (default: NOT REFUTED).

    ``dpaudit_audit(mechanism, *, expect="not_refuted", exact=False, seed=None,
    replay_stage=False, **kw)``: ``mechanism`` is a function (declared with
    ``@dpaudit.mechanism`` or not) or a MechanismSpec; claim keywords (``epsilon``, ``delta``,
    ``neighbours``, ``domain``, ``size``, ``float``, ...) override the declaration (the float
    policy: ``float=``, else ``[tool.dpaudit] float`` of the rootdir's pyproject.toml, else the
    decorator's or the spec's), the others (``samples``, ``confidence``, ...) go to the engine
    the check pipeline's plan chooses: :func:`dpaudit.audit`, :func:`dpaudit.curve_audit` for a
    curve claim, :func:`dpaudit.exact_audit` with ``exact=True``. The replay stage of
    ``dpaudit check`` runs before a sampled audit only with ``replay_stage=True``. ``seed``
    defaults to ``--dpaudit-seed``, else dpaudit's fixed seed. Returns the engine's frozen
    result.
    """
    config = request.config

    def audit(mechanism: Any, *, expect: str = "not_refuted", exact: bool = False,
              seed: Optional[int] = None, replay_stage: bool = False, **kwargs: Any):
        from dpaudit.errors import DpauditError
        from dpaudit.report.model import location, relative_path
        from dpaudit.results import Verdict

        claim = {k: kwargs.pop(k) for k in _CLAIM_KEYS if k in kwargs}
        problem = None
        try:
            # "REFUTED", as every verdict is printed, or "refuted"; anything else one line
            expected = Verdict.named(expect)
            with _reproduce_root(config):  # reproduce lines name files from the rootdir
                checked, spec = _check(mechanism, claim, kwargs,
                                       _root_seed(config) if seed is None else seed, exact,
                                       replay_stage, config)
        except DpauditError as exc:  # a bad claim or argument: one readable line, no traceback
            problem = f"dpaudit: {exc}"
        if problem is not None:
            _exit_code_property(request.node, "usage_error")
            pytest.fail(problem, pytrace=False)
        placed = {} if spec is None or not spec.source else {"location": {
            **location(spec.source), "path": relative_path(str(spec.source[0]), str(config.rootpath))}}
        rec = dict(checked.to_record(), expected=expected.value, id=request.node.nodeid, **placed)
        config.stash[_RECORDS].append(rec)
        _exit_code_property(request.node, rec["verdict"], expected.value)
        if rec["verdict"] != expected.value:
            named = spec.name if spec is not None else checked.target
            pytest.fail(explain(rec, f"dpaudit: {named}: expected {expected.label}, "
                                     f"got {Verdict(rec['verdict']).label}"
                                     + _ERROR_NOTE * (rec["verdict"] == "error")), pytrace=False)
        return checked.result if checked.result is not None else checked

    return audit


def pytest_sessionfinish(session, exitstatus):
    config = session.config
    records = config.stash.get(_RECORDS, [])
    paths = _report_options(config)
    if not records or not any(paths.values()):
        return
    from dpaudit.report import make_run, write_each

    run = make_run(records, seed=_root_seed(config), started=config.stash[_STARTED], finished=time.time(),
                   command=["pytest", *config.invocation_params.args])
    written, failed = write_each(run, **paths)
    config.stash[_WRITTEN] = (written, failed)
    if failed and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.INTERNAL_ERROR  # a report CI relies on is missing


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    records = config.stash.get(_RECORDS, [])
    if not records:
        return
    bad = [r for r in records if r["verdict"] != r.get("expected")]
    terminalreporter.write_sep("-", "dpaudit")
    terminalreporter.write_line(f"{len(records)} audits, {len(records) - len(bad)} with the expected verdict, "
                                f"{len(bad)} not (seed {_root_seed(config)})")
    for r in bad:
        terminalreporter.write_line(f"  {r.get('id')}: expected {r.get('expected')}, got {r['verdict']}; "
                                    f"reproduce: {r.get('reproduce') or '(see the failure above)'}")
    written, failed = config.stash.get(_WRITTEN, ({}, {}))
    for path in written.values():
        terminalreporter.write_line(f"dpaudit: wrote {path}")
    for fmt, why in failed.items():
        terminalreporter.write_line(f"dpaudit: error: the {fmt} report was not written: {why}")
