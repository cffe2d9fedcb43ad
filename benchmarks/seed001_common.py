"""Shared plumbing of the Chen, Pal and Golubchik (2016) benchmarks: result files, intervals, plots.

Every script writes ``benchmarks/results/seed001_<name>.json`` (the machine record of
:mod:`_record`, parameters, figures), ``.txt`` (the printed table) and, where it plots, ``.svg``
(matplotlib, Agg backend).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

import _record


def save(name: str, record: dict, lines: list[str], figure: Any = None) -> list[Path]:
    """:func:`_record.save` under the stem ``seed001_<name>`` (``seed001_<name>_quick`` for a
    ``--quick`` smoke run, so it never overwrites the recorded full results)."""
    return _record.save(f"seed001_{name}", record, lines, figure)


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
