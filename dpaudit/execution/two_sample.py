"""The two-sample tests of the batch-form check (:func:`dpaudit.execution.honesty.forms_differ`):
do one-call and batch outputs share one law?

:func:`two_sample` picks the test from the output schema: the Kolmogorov-Smirnov test for real
outputs (valid, conservative, for discrete ones too), per coordinate with a Bonferroni correction
for vectors, Fisher's exact test per category (the most frequent ones, the rest pooled) with a
Bonferroni correction for categories, bools and ``None``.

Each test first takes a cheap screen (Kolmogorov's limit law for KS, Fisher's exact test from
log-binomials); scipy.stats, about 0.6 CPU s to import, is loaded only to give the exact p-value
of a difference (:data:`SCREEN`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["two_sample", "MAX_TESTS", "SCREEN", "SCREEN_MIN"]

#: at most this many categories (the rest pooled) or vector coordinates are tested
MAX_TESTS = 32
#: A screen p-value above this is far above any level the check uses (its ALPHA / MAX_TESTS
#: ≈ 3·10⁻⁸), so it stands; below it, scipy's exact p-value is computed.
#: tests/unit/test_form_screen.py holds the screen to scipy's p-values on seeded cases: where
#: scipy's is at most 10⁻⁵, the screen's is at most this.
SCREEN = 1e-3
#: ... for KS, when both samples have at least this many values (the limit law's regime)
SCREEN_MIN = 20


def two_sample(schema: Any, x: np.ndarray, y: np.ndarray) -> tuple[float, str]:
    """The Bonferroni-corrected p-value that the encoded samples ``x`` and ``y`` share one law,
    and the test's name."""
    from dpaudit.spec import OutputKind

    kind = None if schema is None else schema.kind
    if kind in (OutputKind.REAL,) or (kind is OutputKind.DISCRETE and schema.integer
                                      and len(np.unique(np.r_[x, y])) > MAX_TESTS):
        return _ks(x, y), "KS"
    if kind in (OutputKind.DISCRETE, OutputKind.BOOL, OutputKind.NONE):
        return _categories(x, y), "Fisher"
    x2, y2 = x.reshape(x.shape[0], -1), y.reshape(y.shape[0], -1)
    if kind is OutputKind.MIXED:  # the skeleton as a category, then each element
        ps = [_categories(x2[:, 0], y2[:, 0])]
        cols = range(2, min(x2.shape[1], y2.shape[1]))
        ps += [_ks(x2[:, j][np.isfinite(x2[:, j])], y2[:, j][np.isfinite(y2[:, j])]) for j in cols]
        return min(1.0, len(ps) * min(ps)), "Fisher and KS"
    cols = range(min(x2.shape[1], y2.shape[1], MAX_TESTS))
    ps = [_ks(x2[:, j], y2[:, j]) for j in cols] or [1.0]
    return min(1.0, len(ps) * min(ps)), "KS per coordinate"


def _ks(x: np.ndarray, y: np.ndarray) -> float:
    """The two-sample KS p-value (scipy's ``ks_2samp``), or the screen's where that is above
    :data:`SCREEN` (:func:`_ks_screen`)."""
    x, y = x[~np.isnan(x)], y[~np.isnan(y)]
    if not x.size or not y.size:
        return 1.0
    values = np.unique(x)
    if values.size == 1 and np.array_equal(values, np.unique(y)):
        return 1.0
    if min(x.size, y.size) >= SCREEN_MIN:
        p = _ks_screen(x, y)
        if p > SCREEN:
            return p
    from scipy.stats import ks_2samp

    return float(ks_2samp(x, y).pvalue)


def _ks_screen(x: np.ndarray, y: np.ndarray) -> float:
    """Kolmogorov's limit law for the two-sample KS statistic (Smirnov 1939):
    p ≈ Q_K(D·√(nm/(n + m))), with D = sup |F̂_x − F̂_y| and Q_K the Kolmogorov survival
    function (``scipy.special.kolmogorov``)."""
    from scipy.special import kolmogorov

    xs, ys = np.sort(x), np.sort(y)
    both = np.concatenate([xs, ys])
    d = np.max(np.abs(np.searchsorted(xs, both, side="right") / xs.size
                      - np.searchsorted(ys, both, side="right") / ys.size))
    return float(kolmogorov(d * math.sqrt(xs.size * ys.size / (xs.size + ys.size))))


def _fisher_screen(a: int, n1: int, b: int, n2: int) -> float:
    """Fisher's exact two-sided p-value of the table [[a, n1 − a], [b, n2 − b]] (Fisher 1922):
    the hypergeometric probability, given the margins, of every table no likelier than this
    one, from log-binomials (``scipy.special.gammaln``)."""
    from scipy.special import gammaln

    total, n = a + b, n1 + n2
    k = np.arange(max(0, total - n2), min(total, n1) + 1)

    def log_choose(m: Any, r: Any) -> Any:
        return gammaln(m + 1) - gammaln(r + 1) - gammaln(m - r + 1)

    logp = log_choose(total, k) + log_choose(n - total, n1 - k) - log_choose(n, n1)
    here = logp[a - k[0]]
    return float(min(1.0, np.exp(logp[logp <= here + 1e-7]).sum()))


def _categories(x: np.ndarray, y: np.ndarray) -> float:
    """Fisher's exact test of each of the most frequent categories (the rest pooled as one),
    Bonferroni-corrected over the tests made (NaN is a category)."""
    kx = np.where(np.isnan(x), np.inf, x)
    ky = np.where(np.isnan(y), np.inf, y)
    values, counts = np.unique(np.r_[kx, ky], return_counts=True)
    order = values[np.argsort(-counts, kind="stable")]
    top = list(order[: MAX_TESTS - 1])
    groups = [[v] for v in top]
    if len(order) > len(top):
        groups.append(list(order[len(top):]))
    if len(groups) < 2:
        return 1.0
    ps = []
    for g in groups:
        a, b = int(np.isin(kx, g).sum()), int(np.isin(ky, g).sum())
        p = _fisher_screen(a, kx.size, b, ky.size)
        if p <= SCREEN:
            from scipy.stats import fisher_exact

            p = float(fisher_exact([[a, kx.size - a], [b, ky.size - b]]).pvalue)
        ps.append(p)
    tests = len(groups) if len(groups) > 2 else 1  # two groups: one test says it all
    return min(1.0, tests * min(ps))
