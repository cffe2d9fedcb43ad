"""Shared plumbing of the issue-4 benchmarks (seeds 000 and 003, and the speed of the quantile EM,
Duff and the smooth sensitivity): result files named ``benchmarks/results/<stem>.json`` (machine,
load, date, parameters, figures) and ``<stem>.txt`` (the printed table).

The machine record comes from :func:`seed001_common.machine` (platform, CPU count, load averages,
UTC date), so every benchmark of the project records the same fields.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from seed001_common import RESULTS, machine

from dpaudit.results import jsonable

__all__ = ["save", "machine", "RESULTS", "emit"]


def emit(lines: list[str], line: str = "") -> None:
    """Print a line now (benchmarks are long) and keep it for the text file."""
    print(line, flush=True)
    lines.append(line)


def save(stem: str, record: dict, lines: list[str], figure: Any = None) -> list[Path]:
    """Write ``<stem>.json`` and ``<stem>.txt`` (and ``<stem>.svg`` for a matplotlib figure)."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    record = {"machine": machine(), "command": " ".join(["python"] + sys.argv), **record}
    paths = [RESULTS / f"{stem}.json", RESULTS / f"{stem}.txt"]
    paths[0].write_text(json.dumps(jsonable(record), indent=1, allow_nan=False) + "\n")
    m = record["machine"]
    head = [f"# {stem}: {m['date']} on {m['platform']}, {m['cpu_count']} CPUs, "
            f"load {', '.join(f'{x:.2f}' for x in m['loadavg_1_5_15'])}", f"# {record['command']}"]
    paths[1].write_text("\n".join(head + lines) + "\n")
    if figure is not None:
        paths.append(RESULTS / f"{stem}.svg")
        figure.savefig(paths[-1], format="svg", bbox_inches="tight", metadata={"Date": None})
    return paths
