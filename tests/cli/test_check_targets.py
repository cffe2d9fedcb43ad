"""Per-target claims in one `dpaudit check` run: [tool.dpaudit.targets."FILE:FUNC"] tables and the
notions users speak, with one family-wise (Bonferroni) confidence across the targets."""

import json
import math

import pytest

from dpaudit.cli import run
from dpaudit.exitcodes import ExitCode

MECHS = '''
import numpy as np

import dpaudit

# outputs rounded to a decimal grid, so that float64 porosity (which dpaudit refutes) plays no part

def histogram_like(data, rng, size=None):
    # a count: sensitivity 1 under add-remove and under replace, so 1-DP under both
    return np.round(float((data > 0.5).sum()) + rng.laplace(scale=1.0, size=size), 3)

def noisy_sum(data, rng, size=None):
    return np.round(data.sum() + rng.laplace(scale=1.0, size=size), 3)
'''


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "mechs.py").write_text(MECHS)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _records(path):
    return {r["target"].split(":")[-1]: r for r in json.loads(path.read_text())["results"]}


@pytest.mark.slow
def test_each_target_gets_its_own_claim_and_the_run_one_confidence(project, capsys):
    (project / "pyproject.toml").write_text(
        '[tool.dpaudit.targets."mechs.py:histogram_like"]\n'
        'epsilon = 1.0\nneighbours = "add-remove-public-size"\ndomain = [0, 1]\nsize = 6\n'
        '[tool.dpaudit.targets."mechs.py:noisy_sum"]\n'
        'epsilon = 0.5\nneighbours = "unbounded"\nsize = 4\n')
    out = project / "r.json"
    # the whole budget (no early look): the first look, at 1/50 of it, already refutes noisy_sum,
    # marginally; this test is about the claims and the family, so it asks for the full bound
    code = run(["check", "mechs.py:histogram_like", "mechs.py:noisy_sum", "--in-process",
                "--samples", "60000", "--seed", "3", "--json", str(out), "-q", "--trust-config",
                "--no-early-stop"])
    recs = _records(out)
    hist, total = recs["histogram_like"], recs["noisy_sum"]
    # add-remove with a public size: audited as (2ε, (1+e^ε)δ) under replace (true: ε = 1 there)
    assert hist["claim"] == {"epsilon": 2.0, "delta": 0.0, "neighbours": "replace",
                             "domain": [0.0, 1.0], "size": 6}
    assert hist["verdict"] == "not_refuted"
    # noisy_sum is 1-DP claimed 0.5: refuted, clearly (not marginal)
    assert total["claim"]["epsilon"] == 0.5 and total["claim"]["neighbours"] == "add-remove"
    assert total["verdict"] == "refuted" and total["marginal"] is False and total["p_value"] < 1e-3
    for r in (hist, total):
        assert r["confidence"] == pytest.approx(1 - 0.05 / 2)  # Bonferroni over two targets
        assert r["family"] == {"targets": 2, "confidence": 0.95, "correction": "bonferroni"}
        assert "--confidence=0.975" in r["reproduce"]
    assert code is ExitCode.REFUTED
    out_text = capsys.readouterr().out
    assert "p = " in out_text and "ε_LB/ε = " in out_text
    # -q keeps the reproduce lines; each says why its confidence is not the run's
    reproduce = [line for line in out_text.splitlines() if line.startswith("reproduce: ")]
    assert len(reproduce) == 2 and all(line.endswith(
        "; --confidence: this target's share of the run's 0.95 over 2 targets (Bonferroni)")
        for line in reproduce), reproduce


@pytest.mark.slow
def test_flags_override_the_target_table(project):
    (project / "pyproject.toml").write_text(
        '[tool.dpaudit.targets."mechs.py"]\nepsilon = 0.5\nsize = 4\n')
    out = project / "r.json"
    run(["check", "mechs.py:noisy_sum", "--epsilon", "2", "--in-process", "--samples", "20000",
         "--json", str(out), "-q", "--trust-config"])
    rec = _records(out)["noisy_sum"]
    assert rec["claim"]["epsilon"] == 2.0 and rec["verdict"] == "not_refuted"
    assert rec["confidence"] == 0.95 and "family" not in rec


def test_a_bad_target_table_is_one_line_naming_it(project, capsys):
    (project / "pyproject.toml").write_text(
        '[tool.dpaudit.targets."mechs.py:noisy_sum"]\nepsilon = -1\n')
    assert run(["check", "mechs.py:noisy_sum", "--in-process"]) is ExitCode.USAGE_ERROR
    err = capsys.readouterr().err.strip()
    assert err.startswith("dpaudit: error: pyproject.toml [tool.dpaudit.targets.\"mechs.py:noisy_sum\"]")
    assert "epsilon must be a finite number > 0" in err and "\n" not in err


def test_notions_translate_the_claim():
    from dpaudit.claims import Neighbours, claim_notion

    assert claim_notion("bounded").relation is Neighbours.REPLACE
    assert claim_notion("Unbounded DP").relation is Neighbours.ADD_REMOVE
    assert claim_notion("change-one").relation is Neighbours.REPLACE
    public = claim_notion("add-remove-public-size").translate(0.5, 1e-6)
    assert public.epsilon == 1.0 and public.delta == pytest.approx(1e-6 * (1 + math.exp(0.5)))
    assert claim_notion("l1").translate(0.5).epsilon == 0.5
