"""The batch-form check's two-sample tests screen first (dpaudit/execution/two_sample.py): Kolmogorov's
limit law for KS and Fisher's exact test from log-binomials. A screen p-value above ``SCREEN``
stands without scipy.stats; below it, scipy's exact p-value is computed. These tests hold the
screen to scipy's numbers on seeded cases, so that it never hides a difference scipy would flag."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import fisher_exact, ks_2samp

from dpaudit.execution.honesty import ALPHA
from dpaudit.execution.two_sample import MAX_TESTS, SCREEN
from dpaudit.execution.two_sample import (  # private: the screen and the tests it stands in front of
    _categories, _fisher_screen, _ks, _ks_screen)

ROOT = Path(__file__).resolve().parents[2]


def _ks_cases():
    """Seeded pairs of samples: continuous and on a grid (ties), equal and unequal sizes, from
    no difference to a large one."""
    rng = np.random.default_rng(20261205)
    for n, m in [(20, 20), (25, 60), (50, 50), (100, 100), (100, 250), (250, 250), (500, 500), (37, 113)]:
        for shift in (0.0, 0.1, 0.2, 0.3, 0.5, 0.8, 1.2):
            for grid in (None, 0.5, 2.0):
                x = rng.laplace(size=n)
                y = rng.laplace(size=m) * (1.0 + shift / 2) + shift
                if grid is not None:
                    x, y = np.round(x / grid) * grid, np.round(y / grid) * grid
                yield x, y


def test_the_ks_screen_never_hides_a_difference_scipy_flags():
    """Where scipy's p-value is at most 10⁻⁵ (ALPHA is 10⁻⁶), the screen's is at most SCREEN, so
    the exact one is computed; and `_ks` then returns scipy's number."""
    flagged = 0
    for x, y in _ks_cases():
        exact = ks_2samp(x, y).pvalue
        screen = _ks_screen(x, y)
        if exact <= 1e-5:
            flagged += 1
            assert screen <= SCREEN, (x.size, y.size, exact, screen)
            assert _ks(x, y) == pytest.approx(exact, rel=1e-12)
        if 1e-12 <= exact <= 1e-3:  # the margin: the limit law is within 10x of the exact law
            assert screen <= 10 * exact, (x.size, y.size, exact, screen)
        elif 0.01 <= exact <= 0.9:  # and close where it stands in for scipy's
            assert 0.3 <= screen / exact <= 3.0, (x.size, y.size, exact, screen)
    assert flagged >= 20  # the cases reach the level that matters (24 here)


def test_a_screen_p_value_that_stands_is_far_above_the_checks_level():
    x = np.random.default_rng(1).laplace(size=250)
    y = np.random.default_rng(2).laplace(size=250)
    p = _ks(x, y)
    assert p > SCREEN and p == _ks_screen(x, y)
    assert p * MAX_TESTS > ALPHA


@pytest.mark.parametrize("n1,n2", [(5, 7), (40, 40), (250, 250), (500, 300)])
def test_the_fisher_screen_is_fishers_exact_test(n1, n2):
    rng = np.random.default_rng(n1 * 1000 + n2)
    for _ in range(60):
        a, b = int(rng.integers(0, n1 + 1)), int(rng.integers(0, n2 + 1))
        want = fisher_exact([[a, n1 - a], [b, n2 - b]]).pvalue
        assert _fisher_screen(a, n1, b, n2) == pytest.approx(want, rel=1e-6, abs=1e-300)


def test_categories_give_scipys_p_value_where_they_differ():
    rng = np.random.default_rng(7)
    x = rng.choice([0.0, 1.0, 2.0], size=250, p=[0.2, 0.3, 0.5])
    y = rng.choice([0.0, 1.0, 2.0], size=250, p=[0.5, 0.3, 0.2])
    p = _categories(x, y)
    kx, ky = x, y
    values = [0.0, 1.0, 2.0]
    exact = [fisher_exact([[int((kx == v).sum()), 250 - int((kx == v).sum())],
                           [int((ky == v).sum()), 250 - int((ky == v).sum())]]).pvalue for v in values]
    assert p == pytest.approx(min(1.0, 3 * min(exact)), rel=1e-9)
    assert p < 1e-6


_UNDECLARED = """\
def f(data, rng, size=None):
    return float(data.sum()) + rng.laplace(0.0, 1.0, size)
"""


@pytest.mark.parametrize("target", ["examples/laplace_sum.py", "undeclared.py:f"])
def test_an_honest_batch_form_check_never_imports_scipy_stats(target, tmp_path):
    """What the screen is for: scipy.stats costs about 0.6 CPU s to import (a second on a busy
    machine), once per `dpaudit check` of a batch-form target. The undeclared Laplace sends the
    replay stage to the exact profile of its noised value, whose Laplace and normal distribution
    functions once came from scipy.stats."""
    (tmp_path / "undeclared.py").write_text(_UNDECLARED)
    if target.startswith("undeclared"):
        target = f"{tmp_path / 'undeclared.py'}:f"
    code = ("import io, contextlib, sys\n"
            "from dpaudit.cli import run\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    code = run(['check', {target!r}, '--epsilon=1', '--domain=0:1', '--size=5',\n"
            "               '--samples=2000', '--quiet', '--in-process'])\n"
            "print(code, 'scipy.stats' in sys.modules, 'dpaudit.replay.profiles' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    code, stats, profiles = done.stdout.split() or ["(nothing)", "", ""]
    assert (code, stats) == ("0", "False"), done.stdout + done.stderr[-2000:]
    if "undeclared" in target:
        assert profiles == "True"  # the case this is about was reached
