"""Shared plumbing of the seed-001 benchmarks: machine record, result files, intervals, plots.

Every script writes ``benchmarks/results/seed001_<name>.json`` (machine, load, date, parameters,
figures), ``.txt`` (the printed table) and, where it plots, ``.svg`` (matplotlib, Agg backend).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import sys
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from dpaudit.results import jsonable

RESULTS = Path(__file__).resolve().parent / "results"


def machine() -> dict:
    """Platform, CPU count, load averages and the UTC date (timings here are taken under load)."""
    return {"platform": platform.platform(), "python": sys.version.split()[0], "numpy": np.__version__,
            "cpu_count": os.cpu_count(), "loadavg_1_5_15": list(os.getloadavg()),
            "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}


def save(name: str, record: dict, lines: list[str], figure: Any = None) -> list[Path]:
    """Write the JSON record, the text table and the SVG figure; return the paths written.

    A ``--quick`` smoke run (``record["quick"]``) writes ``seed001_<name>_quick.*`` so it never
    overwrites the recorded full results."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    record = {"machine": machine(), **record}
    if record.get("quick"):
        name = f"{name}_quick"
    paths = [RESULTS / f"seed001_{name}.json", RESULTS / f"seed001_{name}.txt"]
    paths[0].write_text(json.dumps(jsonable(record), indent=1, allow_nan=False) + "\n")
    m = record["machine"]
    head = [f"# {name}: {m['date']} on {m['platform']}, {m['cpu_count']} CPUs, "
            f"load {', '.join(f'{x:.2f}' for x in m['loadavg_1_5_15'])}"]
    paths[1].write_text("\n".join(head + lines) + "\n")
    if figure is not None:
        paths.append(RESULTS / f"seed001_{name}.svg")
        figure.savefig(paths[-1], format="svg", bbox_inches="tight", metadata={"Date": None})
    return paths


def mean_interval(x: np.ndarray, alpha: float) -> tuple[float, float, float]:
    """Mean of ``x`` and its two-sided (1 − α) normal interval mean ± z_{α/2}·s/√n.

    With n ≥ 10⁵ draws of a variable with finite fourth moment the CLT error (Berry–Esseen, of
    order E|X|³/(σ³√n)) is far below the Bonferroni-corrected α used by the callers.
    """
    x = np.asarray(x, dtype=float)
    m = float(x.mean())
    half = float(stats.norm.isf(alpha / 2) * x.std(ddof=1) / np.sqrt(x.size))
    return m, m - half, m + half


def pyplot():
    """matplotlib's pyplot on the Agg backend (headless)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "seed001"
    return plt
