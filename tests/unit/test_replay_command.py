"""The replay as ``dpaudit check`` runs it (dpaudit/replay/command.py): the record a sandbox child
sends back is checked before it is read (unknown kinds, wrong shapes and control characters are
refused or neutralised, the verdict is recomputed from the findings), the pairs handed to the
sampled audit are neighbouring pairs of the claim's relation or are dropped, and a replay cut
short by its time limit says so. Deterministic: no statistical test here."""

import numpy as np
import pytest

import dpaudit
from dpaudit.claims import Domain, Neighbours
from dpaudit.execution.wire import AuditedFile
from dpaudit.replay.command import first_pairs, record_from_child, stage_text
from dpaudit.spec import MechanismSpec

CLAIM = {"epsilon": 1.0, "delta": 0.0, "neighbours": "add-remove", "domain": [0.0, 1.0], "size": 5}
#: the audited file as dpaudit's process read it: 20 lines, line 12 the noise call
AUDITED = AuditedFile("/x/f.py", b"\n" * 11 + b"    return laplace(s, rng)\n" + b"\n" * 8)


def _checked(raw):
    return record_from_child(raw, name="f.py:total", claim=CLAIM, audited=AUDITED, seed=7)


def _finding(**kw):
    base = {"kind": "sensitivity_exceeded", "message": "declared sensitivity exceeded",
            "site": {"path": "/x/f.py", "line": 12, "function": "total", "code": "laplace(s, rng)"},
            "dataset": [], "neighbour": [1.0], "values": {"excess": 1.0}}
    base.update(kw)
    return base


def _raw(findings, **kw):
    rec = {"kind": "replay", "verdict": "not_refuted", "findings": findings, "calls": 50,
           "pairs": 20, "budget": 200, "claim": {"epsilon": 99.0}}
    rec.update(kw)
    return rec


def test_the_verdict_and_the_claim_are_dpaudits_own_not_the_childs():
    rec = _checked(_raw([_finding()], verdict="not_refuted"))
    assert rec["verdict"] == "refuted" and rec["claim"] == CLAIM
    assert rec["findings"][0]["severity"] == "violation"
    quiet = _checked(_raw([], verdict="refuted"))
    assert quiet["verdict"] == "not_refuted"


@pytest.mark.parametrize("bad", [
    "not a dict",
    {"kind": "audit"},
    _raw("findings"),
    _raw([_finding(kind="made_up")]),
    _raw([_finding(site={"path": "/x/f.py", "line": "12"})]),
    _raw([_finding(dataset=["a"])]),
    _raw([_finding()] * 65),
])
def test_a_malformed_record_is_refused(bad):
    with pytest.raises(ValueError):
        _checked(bad)


def test_text_from_the_child_cannot_drive_a_terminal():
    rec = _checked(_raw([_finding(message="\x1b[2Jgone\x00", values={"k\x1b": ["\x1b"]})]))
    f = rec["findings"][0]
    assert "\x1b" not in f["message"] and "\x00" not in f["message"]
    assert all("\x1b" not in k for k in f["values"]) and "\x1b" not in f["values"]["k\\x1b"][0]


def _spec(**kw):
    return MechanismSpec(func=lambda d, r: 0.0, claim=dpaudit.PureDP(1.0),
                         neighbours=Neighbours.ADD_REMOVE, domain=Domain(0.0, 1.0), size=5, **kw)


def test_only_neighbouring_pairs_reach_the_sampling_strongest_first():
    rec = {"findings": [
        {"kind": "composition_excess", "severity": "note", "dataset": [0.5], "neighbour": [0.5, 1.0]},
        {"kind": "calibration_slack", "severity": "note", "dataset": [0.2], "neighbour": [0.2, 1.0]},
        {"kind": "sensitivity_exceeded", "severity": "violation", "title": "declared sensitivity exceeded",
         "site": {"path": "/x/f.py", "line": 12}, "dataset": [], "neighbour": [1.0]},
        {"kind": "data_dependent_noise_scale", "severity": "finding", "dataset": [0.0, 0.0],
         "neighbour": [1.0, 1.0]},                                   # two records changed: dropped
        {"kind": "data_outside_noise", "severity": "finding", "dataset": [2.0], "neighbour": []},  # outside [0, 1]
    ]}
    pairs = first_pairs(rec, _spec())
    assert [(p.dataset.tolist(), p.neighbour.tolist()) for p in pairs] == [([], [1.0]), ([0.5], [0.5, 1.0])]
    assert "f.py:12" in pairs[0].label


def test_the_terminal_says_the_strongest_finding_and_nothing_for_notes():
    rec = {"replay": {"verdict": "inconclusive", "findings": [
        {"severity": "finding", "title": "data-dependent control flow", "site": {"path": "/a/b.py", "line": 3}},
        {"severity": "finding", "title": "noise reused", "site": None},
        {"severity": "note", "title": "accounting excess by composition"}]}}
    assert stage_text(rec) == "replay: data-dependent control flow at b.py:3; noise reused"
    assert stage_text({"replay": {"verdict": "not_refuted", "findings": [
        {"severity": "note", "title": "per-record randomness"}]}}) == ""
    assert stage_text({"verdict": "refuted"}) == ""
    # on a NOT REFUTED line, findings say they are to read, not a refutation
    said = stage_text({**rec, "verdict": "not_refuted"})
    assert said.startswith("replay: data-dependent control flow at b.py:3; noise reused (to read: ")
    assert "a finding is no refutation" in said


@pytest.mark.slow
def test_a_replay_cut_short_by_its_time_limit_is_inconclusive_and_says_so():
    import time

    @dpaudit.mechanism(epsilon=1.0, domain=(0, 1), size=5)
    def slow(data, rng):
        time.sleep(0.05)
        return float(np.clip(data, 0, 1).sum()) + rng.laplace(scale=1.0)

    # 200 calls sleep 10 s, far past the limit; the limit is 3 s because reading every
    # generator's state around each call takes CPU time: 0.3 s (quiet) and 1 s (2 cores at load
    # 10 to 17) left too few calls to see the noise, and the stage then also said that no noise
    # was intercepted
    result = dpaudit.replay_audit(slow, timeout=3.0, seed=3)
    assert result.verdict is dpaudit.Verdict.INCONCLUSIVE
    assert result.kinds() == {"time_limit"} and 3 <= result.calls < 200
    whole = dpaudit.replay_audit(slow, seed=3, budget=40)
    assert "time_limit" not in whole.kinds() and whole.verdict is dpaudit.Verdict.NOT_REFUTED


def test_a_stage_without_time_says_so_and_is_no_error():
    from types import SimpleNamespace

    from dpaudit.replay.command import before_sampling

    spec = _spec()
    events = []
    rec, same = before_sampling(spec, SimpleNamespace(replay_stage=True), "f.py:total",
                                lambda timeout: pytest.fail("the stage ran"), 2.0, events.append)
    assert same is spec and events[0]["phase"] == "replay"
    assert rec["verdict"] == "inconclusive" and [f["kind"] for f in rec["findings"]] == ["time_limit"]
    assert "not run" in rec["findings"][0]["message"] and rec["claim"]["epsilon"] == 1.0
    assert stage_text({"verdict": "inconclusive", "replay": rec}) == "replay: cut short by the time limit"


@pytest.mark.slow
def test_a_failing_replay_names_the_dataset_and_a_runnable_pair_line():
    def raises(data, rng):
        if len(data) == 0:
            raise ValueError("no records")
        return float(np.sum(data)) + rng.laplace(scale=1.0)

    r = dpaudit.replay_audit(raises, epsilon=1.0, neighbours="add-remove", domain=(0, 1), size=3, seed=1)
    assert r.verdict is dpaudit.Verdict.ERROR and r.error.endswith("raised ValueError: no records on dataset []")

    @dpaudit.replay.primitive(sensitivity=1.0, epsilon=1.0)
    def noisy(value, rng):
        return value + rng.laplace(scale=1.0)

    def doubled(data, rng):
        return noisy(2.0 * float(np.clip(data, 0, 1).sum()), rng)

    found = dpaudit.replay_audit(doubled, epsilon=1.0, neighbours="add-remove", domain=(0, 1), size=3, seed=1)
    f = found.of("sensitivity_exceeded")[0]
    assert "(declared at test_replay_command.py:" in f.message
    scope = {"dpaudit": dpaudit, "doubled": doubled}
    again = eval(f.reproduce, scope)  # the pair line runs as printed
    assert again.verdict is dpaudit.Verdict.REFUTED
