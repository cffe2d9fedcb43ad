"""The report formats: one :class:`Reporter` per format, in one registry.

A format is a module with a function ``render(run) -> str`` and one registration line below
(:data:`BUILTIN`); command-line flags (``--html F``, ``--markdown F``, ...), ``write_reports`` and
``dpaudit report`` are all generated from the registry, so nothing else lists the formats. Another
distribution adds a format through the entry-point group ``dpaudit.reporters`` whose value is a
:class:`Reporter`. The table is a :class:`dpaudit.registry.Registry`: a taken name is refused,
an unknown one is an InvalidArgument naming the formats, plugins load once.

The JSON is the canonical result; it is written first, so a failure while rendering another
format never loses it (docs/ARCHITECTURE.md, "Data flow").
"""

from __future__ import annotations

import argparse
import importlib
import os
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional

from dpaudit.registry import NotAnEntry, Registry

__all__ = ["Reporter", "BUILTIN", "REPORTERS", "register_reporter", "reporters", "reporter",
           "add_report_options", "report_paths", "ENTRY_POINT_GROUP"]

#: entry-point group through which another distribution registers a report format
ENTRY_POINT_GROUP = "dpaudit.reporters"


@dataclass(frozen=True, slots=True)
class Reporter:
    """A report format: ``name`` (the flag is ``--NAME F``), ``help`` (what the flag writes), and
    ``render``, the function ``run -> str`` or its import path ``"package.module:function"``
    (imported only when the format is written, so the flags cost no imports)."""

    name: str
    help: str
    render: Any

    def renderer(self) -> Callable[[Mapping[str, Any]], str]:
        if callable(self.render):
            return self.render
        module, _, attr = str(self.render).partition(":")
        return getattr(importlib.import_module(module), attr)

    def write(self, run: Mapping[str, Any], path: str | os.PathLike) -> str:
        """Render ``run`` and write it to ``path`` atomically; return the path."""
        from dpaudit.report.json_io import write_text

        return write_text(path, self.renderer()(run))


#: The harness's formats, in the order they are written (the canonical JSON first).
BUILTIN = (
    Reporter("json", "write the canonical JSON result", "dpaudit.report.json_io:dumps"),
    Reporter("junit", "write JUnit XML (one test case per claim)", "dpaudit.report.junit:render_junit"),
    Reporter("sarif", "write SARIF 2.1.0 (one result per refuted claim)", "dpaudit.report.sarif:render_sarif_text"),
    Reporter("markdown", "write a Markdown summary (a pull-request comment)", "dpaudit.report.markdown:render_markdown"),
    Reporter("html", "write an HTML report", "dpaudit.report.html:render_html"),
)

def _check(rep: object) -> None:
    if not isinstance(rep, Reporter):
        raise NotAnEntry.bad("reporter", rep, "a dpaudit.report.registry.Reporter")
    if not rep.name.isidentifier() or rep.name != rep.name.lower():
        raise NotAnEntry.bad("reporter name", rep.name, "a lower-case word (it becomes --NAME)")


#: Every format by name (the rules of :class:`dpaudit.registry.Registry`), plugins from
#: :data:`ENTRY_POINT_GROUP`.
REPORTERS: Registry[Reporter] = Registry("report format", name_of=lambda rep: rep.name, check=_check,
                                         group=ENTRY_POINT_GROUP)


def register_reporter(rep: Reporter) -> Reporter:
    """Add a format (its name must be a new lower-case word: it becomes a flag)."""
    return REPORTERS.add(rep)


for _rep in BUILTIN:
    register_reporter(_rep)


def reporters() -> tuple[Reporter, ...]:
    """Every format, in writing order (JSON first)."""
    return REPORTERS.entries()


def reporter(name: str) -> Reporter:
    """The format called ``name`` (InvalidArgument listing the known ones otherwise)."""
    return REPORTERS.get(name)


def add_report_options(parser: Any, prefix: str = "--", dest_prefix: str = "") -> None:
    """Add ``--NAME F`` for every format to an argparse parser (or a pytest option group with
    ``prefix="--dpaudit-"`` and ``dest_prefix="dpaudit_"``)."""
    for rep in reporters():
        kwargs = {"metavar": "F", "default": None, "help": rep.help}
        if isinstance(parser, (argparse.ArgumentParser, argparse._ArgumentGroup)):
            parser.add_argument(prefix + rep.name, dest=dest_prefix + rep.name, **kwargs)
        else:  # pytest's OptionGroup
            parser.addoption(prefix + rep.name, dest=dest_prefix + rep.name, **kwargs)


def report_paths(source: Any, dest_prefix: str = "") -> dict[str, Optional[str]]:
    """``{format: path or None}`` read from parsed arguments (a Namespace, or a callable
    ``getter(dest)`` such as pytest's ``config.getoption``); ``-`` is standard output
    (``/dev/stdout``: it wrote a file named ``-``)."""
    get = source if callable(source) else (lambda dest: getattr(source, dest, None))
    paths = {rep.name: get(dest_prefix + rep.name) for rep in reporters()}
    return {fmt: "/dev/stdout" if path == "-" else path for fmt, path in paths.items()}


def to_stdout(reports: Mapping[str, Optional[str]]) -> bool:
    """Whether a report goes to this process's standard output (``-``, ``/dev/stdout``, or any
    path to the same file, pipe or terminal): then it is all stdout holds, and a command's lines
    for people go to stderr."""
    import os
    import sys

    try:
        out = os.fstat(sys.stdout.fileno())
    except (AttributeError, OSError, ValueError):  # a captured stream: no descriptor to compare
        out = None
    for path in reports.values():
        if path is None:
            continue
        if os.fspath(path) in ("/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"):
            return True
        try:
            if out is not None and os.path.samestat(os.stat(path), out):
                return True
        except OSError:
            continue
    return False
