"""The statistical size and power runs that left the test suite: many seeded audits each.

The suite's statistical tests (tests/statistical/) keep small versions of most of these runs (20
audits at a limit of 3, α ≈ 0.016, or 24 at 4; the family-wise run has none: 20 audits of it cost
11 CPU s); the full versions live here, run on demand, and their figures
are recorded in ``benchmarks/results/size_and_power.{json,txt}``. Every run imports its mechanism,
its seeds and, for a negative control, its deliberately broken variant from the test module, so the
test and the benchmark audit the same code; only the number of seeds differs (the test's seeds are
the first of the benchmark's, so each run also reports the count over the test's seeds).

A *size* run audits a correct mechanism at 95% confidence on N independent seeds: each refutes it
with probability at most 0.05, so the count is stochastically at most Bin(N, 0.05) and the run
passes when the count is at most its limit (α = P(Bin(N, 0.05) > limit), stated per run). A
*control* run audits the same seeds with a broken auditor (or a false claim) and passes when the
count exceeds the limit: the size run can fail. Fixed seeds, nothing retried.

Runs (test module, what is audited, seeds × budget):

* ``soundness.laplace``: test_auditor_soundness, Laplace ε = 1 (tight), 100 × 20,000;
  ``soundness.validation_on_selection`` its control (the event counted on its selection sample);
* ``soundness.family_wise``: 12 validated candidates on an l1 histogram, 100 × 80,000;
  ``soundness.family_wise_uncorrected`` its control (no correction across candidates);
* ``two_findings.logic``: test_two_findings, the logic finding of a float64 Laplace sum, 100 × 20,000;
* ``float.snapping``: test_auditor_float, Mironov's snapping mechanism, 100 × 6,000;
* ``early_stop.laplace``: test_early_stop_soundness, looks at 500 and 2,000, 100 × 32,000;
  ``early_stop.naive`` its control (20 looks at the full α);
* ``curves.cp``, ``curves.dkw``: test_curves_soundness, 1-GDP Gaussian, 100 × 20,000;
  ``curves.plug_in`` its control (a band without confidence);
* ``sequential_curves.gauss``: test_sequential_curves, 1-GDP with early stopping, 100 × 400,000;
  ``sequential_curves.naive`` its control (looks at level 0.5);
* ``null.subset``: test_null_calibration, six claim kinds × 20 seeds × 100,000 (limit 12 of 120);
  ``null.too_narrow`` its control (Laplace noise 25% too narrow, 20 seeds);
* ``partition.calibrated``: test_partition_selection_stat, a calibrated threshold at 10⁶ samples
  and 99% (one audit: size α = 0.01).

Run::

    nice python benchmarks/size_and_power.py                 # every run: results/size_and_power.*
    nice python benchmarks/size_and_power.py --only curves.cp --only curves.plug_in --out /tmp/x.json
    nice python benchmarks/size_and_power.py --only early_stop.naive --merge   # rerun one, keep the rest
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import resource
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest
from scipy import stats

from _record import RESULTS, ROOT, emit, machine, save, write_json

#: where the test modules are: the suite's, then the statistical runs that left it
#: (benchmarks/statistical/, run by benchmarks/statistical_runs.py)
TESTS = (ROOT / "tests" / "statistical", ROOT / "benchmarks" / "statistical")
_MODULES: dict = {}


def test_module(name: str):
    """tests/statistical/<name>.py (or benchmarks/statistical/<name>.py), imported once (its
    mechanisms, seeds and broken variants)."""
    if name not in _MODULES:
        path = next(p / f"{name}.py" for p in TESTS if (p / f"{name}.py").exists())
        spec = importlib.util.spec_from_file_location(f"_sp_{name}", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # a process pool pickles its functions by module name
        spec.loader.exec_module(module)
        _MODULES[name] = module
    return _MODULES[name]


@dataclass
class Run:
    name: str
    kind: str  # "size" or "control"
    limit: int
    audits: Callable[[], list[bool]]  # one result per seed, refuted or not, in seed order
    test_seeds: int  # how many of the seeds (the first) the test's version audits
    test_limit: int
    alpha: float | None = None  # the run's α when it is not P(Bin(N, 0.05) > limit)


def _patched(break_: Callable, audits: Callable[[], list[bool]]) -> Callable[[], list[bool]]:
    def run() -> list[bool]:
        with pytest.MonkeyPatch.context() as mp:
            break_(mp)
            return audits()
    return run


def _soundness() -> list[Run]:
    m = lambda: test_module("test_auditor_soundness")  # noqa: E731
    seeds = range(1000, 1100)
    laplace = lambda: m().refuted_seeds(m().laplace, 20_000, seeds=seeds)  # noqa: E731
    family = lambda: m().refuted_seeds(m().laplace_hist, **m().FAMILY, seeds=seeds)  # noqa: E731
    return [Run("soundness.laplace", "size", 10, laplace, 20, 3),
            Run("soundness.validation_on_selection", "control", 10,
                lambda: _patched(m().break_validation, laplace)(), 20, 3),
            Run("soundness.family_wise", "size", 10, family, 0, 0),  # no test version
            Run("soundness.family_wise_uncorrected", "control", 10,
                lambda: _patched(m().break_family_wise, family)(), 0, 3)]


def _two_findings() -> list[Run]:
    def logic() -> list[bool]:
        m = test_module("test_two_findings")
        return [m.findings(m.textbook_sum, s)["logic"].refuted for s in range(7000, 7100)]
    return [Run("two_findings.logic", "size", 10, logic, 20, 3)]


def _float() -> list[Run]:
    def snapping() -> list[bool]:
        m = test_module("test_auditor_float")
        return [bool(m.refutations(m.snapped, [s])) for s in range(5000, 5100)]
    return [Run("float.snapping", "size", 10, snapping, 20, 3)]


def _early_stop() -> list[Run]:
    m = lambda: test_module("test_early_stop_soundness")  # noqa: E731

    def each(budget, **kw) -> list[bool]:
        return [bool(m().refutations(budget, seeds=[s], **kw)[0]) for s in range(1000, 1100)]
    return [Run("early_stop.laplace", "size", 10, lambda: each(32_000, min_look=500), 20, 3),
            Run("early_stop.naive", "control", 10, lambda: each(m().NAIVE.budget, plan=m().NAIVE), 20, 3)]


def _curves() -> list[Run]:
    m = lambda: test_module("test_curves_soundness")  # noqa: E731
    seeds = range(1000, 1100)
    return [Run("curves.cp", "size", 10, lambda: m().refuted_seeds("cp", seeds), 20, 3),
            Run("curves.dkw", "size", 10, lambda: m().refuted_seeds("dkw", seeds), 20, 3),
            Run("curves.plug_in", "control", 10,
                lambda: _patched(m().break_band, lambda: m().refuted_seeds("cp", seeds))(), 20, 3)]


def _sequential_curves() -> list[Run]:
    m = lambda: test_module("test_sequential_curves")  # noqa: E731

    def each(f=None) -> list[bool]:
        return [bool(m().refutations(f or m().gauss, seeds=[s])[0]) for s in range(2000, 2100)]
    return [Run("sequential_curves.gauss", "size", 10, each, 20, 3),
            Run("sequential_curves.naive", "control", 10, lambda: _patched(m().break_schedule, each)(), 0, 3)]


def _null() -> list[Run]:
    m = lambda: test_module("test_null_calibration")  # noqa: E731

    def subset() -> list[bool]:
        # kind by kind, 20 seeds each: the test's 4 are the first 4 of every kind (see test_seeds)
        return [m().verdict(kind, s) == "refuted" for j, kind in enumerate(m().nc.KINDS)
                for s in m().seeds(j, 20)]

    def too_narrow() -> list[bool]:
        import dpaudit
        return [dpaudit.audit(m().too_narrow, samples=m().SAMPLES, seed=s).refuted for s in m().seeds(0, 20)]
    return [Run("null.subset", "size", 12, subset, 0, 4),
            Run("null.too_narrow", "control", 12, too_narrow, 6, 4)]


def _partition() -> list[Run]:
    def calibrated() -> list[bool]:
        import dpaudit
        m = test_module("test_partition_selection_stat")
        r = dpaudit.audit(m.thresholded_counts(m.EPS, m.DELTA, form="dict"), samples=10**6, seed=33,
                          confidence=0.99, **m.CLAIM)
        return [r.verdict.value != "not_refuted"]
    return [Run("partition.calibrated", "size", 0, calibrated, 0, 0, alpha=0.01)]


def runs() -> list[Run]:
    return [*_soundness(), *_two_findings(), *_float(), *_early_stop(), *_curves(), *_sequential_curves(),
            *_null(), *_partition()]


def _cpu() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


HEAD = (f"{'run':36} {'kind':8} {'refuted':>9} {'limit':>6} {'α':>8} {'ok':>3} "
        f"{'test seeds':>11} {'CPU s':>8} {'wall s':>8}")


def _line(name: str, r: dict) -> str:
    a = f"{r['alpha']:.4f}" if r["alpha"] is not None else "-"
    t = f"{r['refuted_in_test_seeds']}/{r['test_seeds']}" if r["test_seeds"] else "-"
    count = f"{r['refuted']}/{r['audits']}"
    return (f"{name:36} {r['kind']:8} {count:>9} {r['limit']:>6} {a:>8} "
            f"{'yes' if r['ok'] else 'NO':>3} {t:>11} {r['cpu_s']:8.1f} {r['wall_s']:8.1f}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", default=[], help="a run's name (repeatable)")
    ap.add_argument("--out", type=Path, help="write the JSON here instead of results/size_and_power.*")
    ap.add_argument("--merge", action="store_true",
                    help="rerun the --only runs and replace them in the recorded results/size_and_power.json "
                         "(each merged run keeps its own machine record)")
    args = ap.parse_args(argv)
    chosen = [r for r in runs() if not args.only or r.name in args.only]
    record = {"machine": machine(), "alpha_per_audit": 0.05, "runs": {}}
    lines: list[str] = []
    emit(lines, HEAD)
    for run in chosen:
        cpu0, t0 = _cpu(), time.perf_counter()
        results = [bool(x) for x in run.audits()]
        cpu, wall = _cpu() - cpu0, time.perf_counter() - t0
        n, k = len(results), sum(results)
        ok = k <= run.limit if run.kind == "size" else k > run.limit
        alpha = run.alpha if run.alpha is not None else (
            float(stats.binom.sf(run.limit, n, 0.05)) if run.kind == "size" else None)
        first = sum(results[:run.test_seeds]) if run.test_seeds else None
        record["runs"][run.name] = r = {
            "kind": run.kind, "audits": n, "refuted": k, "limit": run.limit, "alpha": alpha, "ok": ok,
            "refuted_per_seed": results, "test_seeds": run.test_seeds, "refuted_in_test_seeds": first,
            "test_limit": run.test_limit, "cpu_s": round(cpu, 1), "wall_s": round(wall, 1)}
        emit(lines, _line(run.name, r))
    if args.merge:
        recorded = json.loads((RESULTS / "size_and_power.json").read_text(encoding="utf-8"))
        for name, r in record["runs"].items():
            r["machine"] = record["machine"]
        recorded["runs"].update(record["runs"])
        record = {k: v for k, v in recorded.items() if k != "command"}
        record["merged"] = record.get("merged", []) + [" ".join(["python"] + sys.argv)]
        recorded.setdefault("command", "python benchmarks/size_and_power.py")
        lines = [f"# the full run: {recorded['command']} ({recorded['machine']['date']}); rerun since, each "
                 f"with its own machine record in the JSON: {', '.join(record['merged'])}",
                 HEAD] + [_line(name, r) for name, r in record["runs"].items()]
    record["ok"] = all(r["ok"] for r in record["runs"].values())
    if args.out:
        write_json(args.out, record)
    else:
        for p in save("size_and_power", record, lines):
            print("wrote", p.relative_to(ROOT))
    return 0 if record["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
