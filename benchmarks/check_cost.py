"""CPU cost of one ``dpaudit check``, this tree against an earlier commit, side by side in one run.

The earlier commit (``--before``, default 72bb1b7: the tree before the check got cheaper by lazy
imports and a screened form check; the recorded run of 2026-12-06 is ``--before 9518636 --repeats 3``,
the tree before the replay stage's exact profiles stopped importing scipy.stats) is unpacked with ``git archive`` into a temporary folder; both
trees are byte-compiled first (``compileall``: where ``PYTHONDONTWRITEBYTECODE`` is set a tree
without bytecode would pay its compilation in every process), then each command runs ``--repeats``
times, the two trees interleaved so both see the same machine load. Each run is a fresh
interpreter importing dpaudit from its tree (the sandbox children load the same tree); its CPU time
is the user + system time of that process and every child it waited for (``RUSAGE_CHILDREN``).

    python benchmarks/check_cost.py              # 5 repeats (the recorded figures)
    python benchmarks/check_cost.py --quick      # 1 repeat, the small command only
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _record import ROOT, children_cpu_seconds, emit, machine, save

COMMANDS = {
    "laplace_sum --samples 2000": ["check", "examples/laplace_sum.py", "--samples", "2000", "--quiet"],
    "laplace_sum, default budget": ["check", "examples/laplace_sum.py", "--quiet"],
    "laplace_sum --samples 2000, all four reports": [
        "check", "examples/laplace_sum.py", "--samples", "2000", "--quiet", "--json", "{tmp}/r.json",
        "--html", "{tmp}/r.html", "--junit", "{tmp}/r.xml", "--sarif", "{tmp}/r.sarif"],
    # its replay stage reaches the exact profile of its noised value (dpaudit/replay/profiles.py)
    "unclipped_sum --samples 2000": ["check", "examples/unclipped_sum.py", "--samples", "2000", "--quiet"],
}
BOOT = ("import sys; sys.path.insert(0, sys.argv[1]); from dpaudit.cli import main; "
        "sys.argv = ['dpaudit'] + sys.argv[2:]; main()")


def _run(tree: Path, args: list[str], tmp: str) -> float:
    """CPU seconds of one ``dpaudit`` run from ``tree`` (its process and its children)."""
    before = children_cpu_seconds()
    done = subprocess.run([sys.executable, "-c", BOOT, str(tree), *[a.format(tmp=tmp) for a in args]],
                          cwd=tree, capture_output=True, text=True, timeout=600)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{tree}: exit {done.returncode}: {done.stderr[-2000:]}")
    return children_cpu_seconds() - before


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default="72bb1b7")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    repeats = 1 if a.quick else a.repeats
    commands = dict(list(COMMANDS.items())[:1]) if a.quick else COMMANDS
    m = machine()
    lines: list[str] = []
    with tempfile.TemporaryDirectory() as old, tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "archive", a.before], cwd=ROOT, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", old], input=archive, check=True)
        trees = {"before": Path(old), "now": ROOT}
        for tree in trees.values():
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "dpaudit")], check=True,
                           capture_output=True)
        rows = []
        emit(lines, f"before = {a.before}, now = this tree; CPU s (user + system, children included), "
                    f"median of {repeats}, interleaved")
        for label, args in commands.items():
            cpu: dict[str, list[float]] = {k: [] for k in trees}
            for _ in range(repeats):
                for k, tree in trees.items():
                    cpu[k].append(_run(tree, args, tmp))
            med = {k: statistics.median(v) for k, v in cpu.items()}
            rows.append({"command": "dpaudit " + " ".join(args), "label": label, "cpu_seconds": cpu,
                         "median": med, "ratio": med["now"] / med["before"]})
            emit(lines, f"{label:48s} before {med['before']:6.2f}  now {med['now']:6.2f}  "
                        f"ratio {med['now'] / med['before']:.2f}")
    save("check_cost", {"machine": m, "before": a.before, "repeats": repeats, "quick": a.quick, "rows": rows},
         lines)


if __name__ == "__main__":
    main()
