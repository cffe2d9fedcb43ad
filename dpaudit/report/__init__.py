"""Reports: the canonical JSON run, and HTML, JUnit XML, SARIF 2.1.0 and Markdown rendered from it.

::

    from dpaudit.report import make_run, write_reports

    run = make_run(results, seed=seed, started=t0, finished=t1, command=sys.argv)
    write_reports(run, html="report.html", json="result.json", junit="junit.xml", sarif="dpaudit.sarif")

``make_run`` builds the run dict (:mod:`dpaudit.report.model`); every format is a pure function of
it, so ``dpaudit report RESULT.json --html F`` re-renders any saved run. The formats live in one
registry (:mod:`dpaudit.report.registry`); each record's wording comes from its kind
(:mod:`dpaudit.report.kinds`). Renderers import their heavy dependencies (jinja2, matplotlib) only
when called.
"""

from __future__ import annotations

import os
from typing import Any, Mapping, Optional

from dpaudit.errors import UsageError
from dpaudit.report.json_io import read_json, write_json
from dpaudit.report.model import check_run, differences, make_run, stable_view
from dpaudit.report.registry import Reporter, add_report_options, register_reporter, report_paths, reporter, reporters

__all__ = ["make_run", "write_reports", "write_each", "read_json", "write_json", "check_run", "stable_view", "differences",
           "render_html", "render_junit", "render_sarif", "render_markdown", "Reporter", "reporters",
           "register_reporter", "add_report_options", "report_paths"]

PathLike = Optional[str | os.PathLike]


def render_html(run: Mapping[str, Any], *, plots: bool = True) -> str:
    """The self-contained HTML report (see :mod:`dpaudit.report.html`)."""
    from dpaudit.report.html import render_html as _render

    return _render(run, plots=plots)


def render_junit(run: Mapping[str, Any]) -> str:
    """JUnit XML, one test case per claim (see :mod:`dpaudit.report.junit`)."""
    from dpaudit.report.junit import render_junit as _render

    return _render(run)


def render_sarif(run: Mapping[str, Any]) -> dict:
    """The SARIF 2.1.0 log, one result per refuted claim (see :mod:`dpaudit.report.sarif`)."""
    from dpaudit.report.sarif import render_sarif as _render

    return _render(run)


def render_markdown(run: Mapping[str, Any]) -> str:
    """A Markdown summary for a pull-request comment (see :mod:`dpaudit.report.markdown`)."""
    from dpaudit.report.markdown import render_markdown as _render

    return _render(run)


def write_reports(run: Mapping[str, Any], **paths: PathLike) -> dict[str, str]:
    """Write each requested format of ``run`` (``html="report.html"``, ``markdown="summary.md"``:
    any format of :func:`dpaudit.report.registry.reporters`); return ``{format: path}`` for those
    written, in the registry's order.

    The JSON is written first, so a failure while rendering another format never loses the
    canonical result. A path that cannot be written does not stop the others: once every other
    format is written, :class:`~dpaudit.errors.UsageError` says (in one line) which could not be
    and what was; an unknown format raises :class:`~dpaudit.errors.InvalidArgument` before
    anything is written.
    """
    written, failed = write_each(run, **paths)
    if failed:
        done = f" (wrote {', '.join(f'{k}: {v}' for k, v in written.items())})" if written else ""
        raise UsageError("; ".join(failed.values()) + done)
    return written


def write_each(run: Mapping[str, Any], **paths: PathLike) -> tuple[dict[str, str], dict[str, str]]:
    """Write each requested format of ``run`` as :func:`write_reports` does, never stopping at one
    that cannot be written (a full disk, a file-size limit, a folder removed meanwhile); return
    ``({format: path}, {format: why})`` for those written and those not, so a command can say in
    one line per report what is missing and still print its verdicts."""
    for name in paths:
        reporter(name)  # unknown formats fail before anything is written
    written: dict[str, str] = {}
    failed: dict[str, str] = {}
    for rep in reporters():
        path = paths.get(rep.name)
        if path is not None:
            try:
                written[rep.name] = rep.write(run, path)
            except UsageError as exc:
                failed[rep.name] = str(exc)
            except MemoryError:
                failed[rep.name] = f"cannot write {os.fspath(path)}: out of memory"
    return written, failed
