"""Reports: the canonical JSON run, and HTML, JUnit XML and SARIF 2.1.0 rendered from it.

::

    from dpaudit.report import make_run, write_reports

    run = make_run(results, seed=seed, started=t0, finished=t1, command=sys.argv)
    write_reports(run, html="report.html", json="result.json", junit="junit.xml", sarif="dpaudit.sarif")

``make_run`` builds the run dict (:mod:`dpaudit.report.model`); every format is a pure function of
it, so ``dpaudit report RESULT.json --html F`` re-renders any saved run. Renderers import their
heavy dependencies (jinja2, matplotlib) only when called.
"""

from __future__ import annotations

import os
from typing import Any, Mapping, Optional

from dpaudit.report.json_io import dumps, read_json, write_json, write_text
from dpaudit.report.model import check_run, differences, make_run, stable_view

__all__ = ["make_run", "write_reports", "read_json", "write_json", "check_run", "stable_view", "differences",
           "render_html", "render_junit", "render_sarif"]

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


def write_reports(run: Mapping[str, Any], *, html: PathLike = None, json: PathLike = None,
                  junit: PathLike = None, sarif: PathLike = None) -> dict[str, str]:
    """Write each requested format of ``run``; return ``{format: path}`` for those written.

    The JSON is written first, so a failure while rendering another format never loses the
    canonical result. A path that cannot be written raises :class:`~dpaudit.errors.UsageError`
    with one line naming it.
    """
    written: dict[str, str] = {}
    if json is not None:
        written["json"] = write_json(run, json)
    if junit is not None:
        written["junit"] = write_text(junit, render_junit(run))
    if sarif is not None:
        written["sarif"] = write_text(sarif, dumps(render_sarif(run)))
    if html is not None:
        written["html"] = write_text(html, render_html(run))
    return written
