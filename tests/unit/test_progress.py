"""dpaudit.progress: a live line only on a terminal outside CI, and summaries always."""

import io

from dpaudit.progress import Progress, progress_enabled


class Tty(io.StringIO):
    def isatty(self):
        return True


def test_enabled_only_on_a_tty_outside_ci_and_not_quiet():
    assert progress_enabled(Tty(), environ={})
    assert progress_enabled(Tty(), environ={"CI": "0"})
    assert not progress_enabled(Tty(), environ={"CI": "true"})
    assert not progress_enabled(Tty(), environ={"CI": "1"})
    assert not progress_enabled(Tty(), quiet=True, environ={})
    assert not progress_enabled(io.StringIO(), environ={})
    closed = io.StringIO()
    closed.close()
    assert not progress_enabled(closed, environ={})


def test_status_line_shows_target_phase_candidate_samples_and_bound():
    p = Progress(stream=Tty(), out=io.StringIO(), enabled=True)
    p.start("m.py:f")
    p({"phase": "search", "candidate": 3, "samples": 400000, "budget": 4000000,
       "estimate": 2.9, "unknown": object()})
    assert p.status_text() == ("m.py:f · search · candidate 3 · 400,000/4,000,000 samples · "
                               "ε ≈ 2.9 (projected)")
    p({"phase": "validate", "candidates": 8, "epsilon_lb": 2.3141})
    assert p.status_text() == ("m.py:f · validate · candidate 3/8 · 400,000/4,000,000 samples · "
                               "ε ≥ 2.31")


def test_redraws_in_place_and_clears_before_summaries():
    stream, out = Tty(), io.StringIO()
    p = Progress(stream=stream, out=out, enabled=True)
    p.start("m.py:f")
    p({"phase": "search"})
    p.clear()
    text = stream.getvalue()
    assert text.startswith("\rm.py:f") and text.endswith("\r") and "\n" not in text


def test_quiet_progress_writes_nothing_to_stderr_but_summaries_to_stdout():
    stream, out = Tty(), io.StringIO()
    p = Progress(stream=stream, out=out, enabled=False)
    p.start("m.py:f")
    p({"phase": "search", "samples": 10})
    record = {"kind": "audit", "target": "m.py:f", "verdict": "refuted",
              "claim": {"epsilon": 1.0, "delta": 0.0, "neighbours": "add-remove"},
              "epsilon_lower_bound": 2.5, "confidence": 0.95, "samples": 1000,
              "reproduce": "dpaudit check m.py:f --epsilon=1 --seed=1"}
    p.finish(record)
    p.reproduce([record])
    assert stream.getvalue() == ""
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("m.py:f: REFUTED — ε = 1 (pure DP), add-remove neighbours; ε ≥ 2.5")
    assert lines[1] == "reproduce: dpaudit check m.py:f --epsilon=1 --seed=1"


def test_a_multi_line_message_is_printed_on_one_line():
    out = io.StringIO()
    p = Progress(stream=io.StringIO(), out=out, enabled=False)
    p.finish({"kind": "audit", "target": "m.py:f", "verdict": "error", "claim": None,
              "error": "mechanism returned 'a\nb'\n  on dataset [0.0]"})
    assert out.getvalue().count("\n") == 1 and "'a b' on dataset" in out.getvalue()


def test_a_timed_out_audit_says_so():
    out = io.StringIO()
    Progress(stream=io.StringIO(), out=out, enabled=False).finish(
        {"kind": "audit", "target": "m.py:f", "verdict": "inconclusive", "claim": None,
         "details": {"timed_out": True}})
    assert out.getvalue().rstrip().endswith(" — cut short by the time limit")
    out = io.StringIO()  # after the replay stage's own words, whose cut it was
    Progress(stream=io.StringIO(), out=out, enabled=False).finish(
        {"kind": "audit", "target": "m.py:f", "verdict": "inconclusive", "claim": None,
         "details": {"timed_out": True},
         "replay": {"verdict": "inconclusive", "findings": [{"kind": "time_limit"}]}})
    line = out.getvalue()
    assert line.count("cut short by the time limit") == 2
    assert "replay: cut short by the time limit — the sampling: cut short" in line


def test_a_replay_stage_that_saw_no_noise_says_so_on_the_line():
    """An OpenDP chain draws its noise in native code: the replay stage is INCONCLUSIVE, and the
    terminal line said nothing of it while the HTML report did."""
    out = io.StringIO()
    Progress(stream=io.StringIO(), out=out, enabled=False).finish(
        {"kind": "audit", "target": "m.py:f", "verdict": "not_refuted", "claim": None,
         "replay": {"verdict": "inconclusive", "findings": [
             {"kind": "no_noise_intercepted", "severity": "limit", "title": "no noise intercepted"},
             {"kind": "outside_randomness", "severity": "note", "title": "randomness outside"}]}})
    assert "; replay: no noise intercepted (the sampling alone decides)" in out.getvalue()


def test_the_status_line_shows_samples_per_second_since_the_target_started():
    import io
    import time as _time

    from dpaudit.progress import Progress

    p = Progress(stream=io.StringIO(), out=io.StringIO(), enabled=True)
    p.start("m.py:f")
    p._started = _time.monotonic() - 2.0
    p({"phase": "validate", "samples": 4_000_000, "budget": 8_000_000})
    assert "4,000,000/8,000,000 samples · 2M samples/s" in p.status_text()
    p._started = _time.monotonic()
    assert "samples/s" not in p.status_text()  # no rate in the first half second


def test_strength_text_tells_a_marginal_refutation_from_a_gross_one():
    from dpaudit.progress import strength_text

    base = {"kind": "audit", "claim": {"epsilon": 1.0, "delta": 0.0}, "seed": 7, "confidence": 0.95}
    gross = dict(base, verdict="refuted", p_value=1e-30, margin=10.2, marginal=False)
    assert strength_text(gross) == "p = 1e-30, ε_LB/ε = 10.2"
    marginal = dict(base, verdict="refuted", p_value=0.012, margin=1.003, marginal=True)
    # "at 99.5% confidence ... (p = 0.0092 > 0.001)" read as a contradiction: the p is the run's
    assert strength_text(marginal) == ("MARGINAL (the run's family-wise p = 0.012, above 0.001): "
                                       "confirm with --seed=8 --confidence=0.999")
    passed = dict(base, verdict="not_refuted", p_value=0.4, margin=0.97,
                  power={"probability": 0.9, "epsilon": 1.31, "delta": 0.0021})
    assert strength_text(passed) == ("p = 0.4; this budget would refute ε ≥ 1.31 or δ ≥ 0.0021 "
                                     "at ε = 1 with probability 0.9")
    own = dict(passed, reproducible=False)
    assert strength_text(own).endswith("the mechanism draws its own randomness: a rerun gives "
                                       "other numbers")
    assert strength_text({"kind": "formal", "verdict": "proved"}) == ""


def test_strength_text_says_when_the_event_held_every_validation_output():
    """A mechanism that always returns the same value (0.0, or NaN from a bug) is NOT REFUTED with
    ε ≥ 0: its event held every validation output of both datasets, and the line says so instead
    of only that the budget could not refute anything on that event."""
    from dpaudit.progress import strength_text

    def record(in_d, in_dp, where="record"):
        v = {"n_D": 5032, "n_D_prime": 5106, "in_event_D": in_d, "in_event_D_prime": in_dp,
             "both": None, "design": "independent"}
        rec = {"kind": "audit", "verdict": "not_refuted", "p_value": 1.0, "claim": {"epsilon": 1.0},
               "power": {"probability": 0.9, "epsilon": None, "delta": None}}
        if where == "record":
            rec["details"] = {"validation": v}
        else:  # the logic finding had no event; the float64 finding's held everything
            rec["details"] = {}
            rec["findings"] = {"logic": {"details": {}}, "float": {"details": {"validation": v}}}
        return rec

    said = ("p = 1; every validation output fell in the event it found (5,032 on D, 5,106 on D′), "
            "so the event did not tell D from D′ (the outputs may be constant)")
    assert strength_text(record(5032, 5106)) == said
    assert strength_text(record(5032, 5106, where="findings")) == said
    for in_d, in_dp in ((5031, 5106), (5032, 0), (0, 0)):
        assert strength_text(record(in_d, in_dp)).endswith(
            "on the event it found, this budget's validation samples could not refute any ε with "
            "probability 0.9")
