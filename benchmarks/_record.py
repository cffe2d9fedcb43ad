"""The one record helper of the benchmarks: a machine record with one schema, and result files.

Every benchmark script writes ``benchmarks/results/<stem>.json`` whose ``"machine"`` entry is
:func:`machine` (taken when the run starts; :func:`finish` adds the load when it ends), so results
from different scripts and machines compare field by field:

==============  ==============================================================================
key             value
==============  ==============================================================================
``machine``     the hardware architecture (``platform.machine()``, e.g. ``x86_64``)
``platform``    the operating system (``platform.platform()``)
``cpu``         the CPU model (``/proc/cpuinfo``'s ``model name``, else ``platform.processor()``)
``cores``       logical CPUs (``os.cpu_count()``)
``python``      the Python version
``numpy``       the numpy version
``date``        UTC, ISO 8601, to the second
``loadavg``     the 1, 5 and 15 minute load averages at the start (the machine may be shared)
``loadavg_end`` the same at the end (after :func:`finish`)
``git_commit``  the repository's HEAD, with ``-dirty`` when the work tree differs from it
==============  ==============================================================================

A script adds its own fields (a library's version) with ``machine(z3=...)``. Result files written
before this schema keep their old keys; only new runs use it.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

from dpaudit.results import jsonable

__all__ = ["RESULTS", "ROOT", "machine", "finish", "header", "write_json", "save", "emit", "cpu_seconds",
           "children_cpu_seconds"]

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _git_commit() -> str | None:
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=10,
                              check=True).stdout.strip()

    try:
        head = git("rev-parse", "HEAD")
        dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("-dirty" if dirty else "")


def cpu_seconds(pid: int | None = None) -> float:
    """CPU seconds (user + system) of this process, plus those of the running child ``pid``."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    total = me.ru_utime + me.ru_stime
    if pid is not None:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def children_cpu_seconds() -> float:
    """CPU seconds (user + system) of every child this process has waited for: the difference
    across a ``subprocess.run`` is that command's CPU, its own children included."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def machine(**extra: Any) -> dict:
    """The machine record (module docstring), plus ``extra`` fields."""
    return {"machine": platform.machine(), "platform": platform.platform(), "cpu": _cpu_model(),
            "cores": os.cpu_count(), "python": platform.python_version(), "numpy": np.__version__,
            "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "loadavg": [round(x, 2) for x in os.getloadavg()], "git_commit": _git_commit(), **extra}


def finish(record: dict) -> dict:
    """Add ``loadavg_end`` (the load when the run ends) to a machine record; return it."""
    record["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    return record


def header(stem: str, m: dict) -> str:
    """One text line naming the run and its machine, for the ``.txt`` result files."""
    load = ", ".join(f"{x:.2f}" for x in m["loadavg"])
    end = (" -> " + ", ".join(f"{x:.2f}" for x in m["loadavg_end"])) if "loadavg_end" in m else ""
    return (f"# {stem}: {m['date']} on {m['cpu']} ({m['machine']}), {m['cores']} cores, load {load}{end}, "
            f"python {m['python']}, numpy {m['numpy']}, commit {m['git_commit']}")


def write_json(path: Path, record: dict) -> Path:
    """Write ``record`` as indented, strict JSON (NaN and inf are refused) and return the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(jsonable(record), indent=1, allow_nan=False) + "\n", encoding="utf-8")
    return path


def save(stem: str, record: dict, lines: list[str], figure: Any = None) -> list[Path]:
    """Write ``<stem>.json`` (the machine record, the command line, then ``record``), ``<stem>.txt``
    (:func:`header` and ``lines``) and, for a matplotlib ``figure``, ``<stem>.svg``.

    The machine record is ``record["machine"]`` when the script took it at its start, else one taken
    now; :func:`finish` adds the load at the end.
    A ``--quick`` smoke run (``record["quick"]``) writes ``<stem>_quick.*``, so it never overwrites
    the recorded full results. Returns the paths written.
    """
    record = dict(record)
    record = {"machine": finish(record.pop("machine", None) or machine()),
              "command": " ".join(["python"] + sys.argv), **record}
    if record.get("quick"):
        stem = f"{stem}_quick"
    paths = [write_json(RESULTS / f"{stem}.json", record), RESULTS / f"{stem}.txt"]
    paths[1].write_text("\n".join([header(stem, record["machine"]), f"# {record['command']}", *lines]) + "\n",
                        encoding="utf-8")
    if figure is not None:
        paths.append(RESULTS / f"{stem}.svg")
        figure.savefig(paths[-1], format="svg", bbox_inches="tight", metadata={"Date": None})
    return paths


def emit(lines: list[str], line: str = "") -> None:
    """Print a line now (benchmarks are long) and keep it for the text file."""
    print(line, flush=True)
    lines.append(line)
