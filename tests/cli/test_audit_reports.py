"""The committed ``reports/`` is what ``dpaudit audit`` produces: every control as expected, every
audit present, and a re-run of a subset (one audit of each kind, seeded) reproduces its records
to ~12 significant digits (the cross-machine promise), timings aside.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from dpaudit.report import differences
from dpaudit.suite import load_audits

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "reports" / "results.json"
# fast audits covering every kind and both expectations
SUBSET = ["geometric.exact", "laplace.broken-eq6.sampled", "collusion.broken-median.sampled",
          "raw-mean.broken.sensitivity", "quantile-utility.broken-eq22.sensitivity",
          "formal.laplace-loss-bound", "formal.control-laplace-loss-half", "seed001/s001-eq7-density",
          "seed004/s004-thm3-eq22-as-written"]


@pytest.fixture(scope="module")
def committed():
    if not COMMITTED.exists():
        pytest.fail("reports/results.json is missing: run `dpaudit audit` at the repository root")
    return json.loads(COMMITTED.read_text(encoding="utf-8"))


def test_committed_report_is_complete_and_as_expected(committed):
    records = committed["results"]
    ids = [a.id for a in load_audits([str(ROOT / "audits")])]
    assert [r["id"] for r in records] == ids, "reports/ is stale: rerun `dpaudit audit`"
    wrong = [(r["id"], r["verdict"], r["expected"]) for r in records if r["verdict"] != r["expected"]]
    assert wrong == []
    controls = [r for r in records if r["expected"] in ("refuted", "error")]
    assert len(controls) >= 10 and all(r["verdict"] == r["expected"] for r in controls)
    kinds = {r["kind"] for r in records}
    assert kinds == {"audit", "exact", "sensitivity", "formal", "seed-claim"}
    html = (ROOT / "reports" / "index.html").read_text(encoding="utf-8")
    assert all(f">{i}<" in html for i in ids[:: max(1, len(ids) // 12)])
    assert committed["seed"] == 20261122 and committed["summary"]["mismatches"] == 0
    # nothing depends on where the repository was cloned
    text = COMMITTED.read_text(encoding="utf-8")
    assert re.search(r'"/[^"]*/(audits|mechanisms|dpaudit)/', text) is None


@pytest.mark.slow
def test_a_subset_rerun_reproduces_the_committed_records(committed, tmp_path):
    args = [a for i in SUBSET for a in ("--id", i)]
    # --json alone: the records, without the HTML report that --out adds (its plots cost about
    # 2 CPU s and are not what this test compares); a fresh process, as a user's rerun is
    out = subprocess.run([sys.executable, "-m", "dpaudit", "audit", *args, "--json", str(tmp_path / "results.json"),
                          "--quiet"], cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    assert out.returncode == 0, out.stdout + out.stderr
    fresh = {r["id"]: r for r in json.loads((tmp_path / "results.json").read_text())["results"]}
    old = {r["id"]: r for r in committed["results"] if r["id"] in SUBSET}
    assert set(fresh) == set(old) == set(SUBSET)
    for i in SUBSET:
        # same verdicts and strings, numbers to ~12 digits: another CPU may round the last bits
        assert differences(fresh[i], old[i]) == [], (
            f"{i} no longer reproduces its record in reports/results.json; if an engine changed on "
            f"purpose, regenerate reports/ with `dpaudit audit` and commit it")
