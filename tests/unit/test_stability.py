"""The stability check of OpenDP's stability maps, and OpenDP targets under --replay (dpaudit/stability/).

A deliberately wrong stability map (a user transformation, OpenDP's "honest-but-curious"
feature) is caught with both numbers stated exactly; OpenDP's own make_sum passes; a chain built
while recording remembers its parts and the line that built it, and the originals are restored;
distances are exact under each metric; a randomised transformation is said to be unchecked, not
blamed; ``dpaudit check lib:FILE.py --in-process --replay`` gives a replay record. Deterministic:
the pair search is seeded, and OpenDP's transformations draw no randomness (make_resize aside,
whose rerun is what the check looks at).
"""

import json
import math
import sys
from fractions import Fraction

import pytest
from cli_in_process import dpaudit as in_process

dp = pytest.importorskip("opendp.prelude")

from dpaudit import stability as od  # noqa: E402

L, U = 2.0 ** 50, 2.0 ** 50 + 1.0


@pytest.fixture(autouse=True)
def _features():
    dp.enable_features("contrib", "honest-but-curious")


def _floats(lo=0.0, hi=1.0, size=None):
    return dp.vector_domain(dp.atom_domain(bounds=(lo, hi)), size=size), dp.symmetric_distance()


def _sequential_sum_with_the_real_number_map():
    """Casacuberta et al.'s bug as an OpenDP transformation: a sequential float64 sum whose map is
    ⌊d_in/2⌋·(U − L), the sensitivity over the reals, with no term for the rounding."""
    def total(x):
        s = 0.0
        for v in x:
            s += v
        return s

    return dp.t.make_user_transformation(*_floats(L, U, 10), dp.atom_domain(T=float, nan=False),
                                         dp.absolute_distance(T=float), total, lambda d: (d // 2) * (U - L))


def test_a_wrong_stability_map_is_a_violation_with_both_numbers_exact():
    report = od.check_stability(_sequential_sum_with_the_real_number_map(), seed=1)
    assert report.refuted and report.d_in == 2 and report.relation.value == "replace"
    (v,) = report.violations
    assert v.kind == "sensitivity_exceeded" and v.severity == "violation"
    assert "d_out = 2 " in v.message and "above map(d_in) = 1.0" in v.message, v.message
    assert v.values["observed"] == "2" and v.values["map"] == "1.0"
    # the pair is a real counterexample: checked alone it gives the same violation
    again = od.check_pair(_sequential_sum_with_the_real_number_map(), v.dataset, v.neighbour, d_in=2)
    assert again.refuted and again.violations[0].values["observed"] == "2"
    assert report.invocations <= 200


def test_a_count_whose_map_halves_d_in_is_caught_on_the_first_pairs():
    ints = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()
    halved = dp.t.make_user_transformation(*ints, dp.atom_domain(T=int), dp.absolute_distance(T=int),
                                           lambda x: len(x), lambda d: d // 2)
    report = od.check_stability(halved, seed=2)
    assert report.refuted and "d_out = 1 " in report.violations[0].message
    assert "map(d_in) = 0" in report.violations[0].message
    honest = dp.t.make_user_transformation(*ints, dp.atom_domain(T=int), dp.absolute_distance(T=int),
                                           lambda x: len(x), lambda d: d)
    assert not od.check_stability(honest, seed=2).refuted


def test_an_unbounded_input_domain_is_searched_over_its_whole_type():
    """A map claimed for every i32 record (no bounds in the domain) is checked on records from
    the whole type: a clamp-free sum whose map is d_in holds on records in [0, 1], not on i32."""
    from dpaudit.stability.checker import carrier_range

    ints = dp.vector_domain(dp.atom_domain(T="i32")), dp.symmetric_distance()
    unclamped = dp.t.make_user_transformation(*ints, dp.atom_domain(T="i32"), dp.absolute_distance(T="i32"),
                                              lambda x: sum(x), lambda d: d)
    report = od.check_stability(unclamped, seed=0)
    assert report.domain.lo == -2.0 ** 31 and report.domain.hi == 2.0 ** 31 - 1
    assert report.refuted and "above map(d_in) = 1 " in report.violations[0].message
    # the same transformation on records stated to lie in [0, 1]: its map holds there
    assert not od.check_stability(unclamped, seed=0, domain=(0, 1)).refuted
    assert carrier_range("f64") == (-1.7976931348623157e308, 1.7976931348623157e308)
    assert carrier_range("u64") == (0.0, 2.0 ** 63 - 1024) and carrier_range("String") is None
    assert carrier_range("i32", 2.0) == (-2.0 ** 30, 2.0 ** 30 - 1)


def test_opendp_make_sum_passes_and_its_rounding_stays_under_its_map():
    report = od.check_stability(_floats() >> dp.t.then_sum(), seed=3)
    assert not report.refuted and report.error is None
    (stage,) = report.stages
    assert stage["map_d_in_repr"] == "1.000000009313226"  # OpenDP's map: 1 plus its relaxation
    # the float-rounding patterns push d_out past 1, the sensitivity over the reals, but not past the map
    assert Fraction(stage["largest_observed_up"]) > 1
    assert 0.99 < report.largest_ratio() <= 1.0
    assert report.invocations <= 200


def test_a_chain_built_while_recording_remembers_its_parts_and_line():
    from opendp import combinators

    original = combinators.make_chain_tt
    space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
    with od.recording():
        assert combinators.make_chain_tt is not original
        line = sys._getframe().f_lineno + 1
        chain = space >> dp.t.then_clamp((0.0, 1.0)) >> dp.t.then_sum() >> dp.m.then_laplace(scale=1.0)
    assert combinators.make_chain_tt is original  # restored
    transformations, measurement = od.decompose(chain)
    assert [p.label for p in transformations] == ["make_clamp(bounds=(0.0, 1.0))", "make_sum()"]
    assert measurement.label.startswith("make_laplace(scale=1.0")
    for part in (*transformations, measurement):
        assert part.site is not None and part.site.path == __file__ and part.site.line == line
    # built outside the block: the parts come from OpenDP's own __opendp_dict__, without a line
    plain = space >> dp.t.then_clamp((0.0, 1.0)) >> dp.t.then_sum()
    parts, none = od.decompose(plain)
    assert none is None and [p.site for p in parts] == [None, None] and len(parts) == 2


def test_distances_are_exact_under_each_metric():
    assert od.metric_distance(dp.symmetric_distance(), [1, 2, 2], [2, 3]).value == 3
    assert od.metric_distance(dp.insert_delete_distance(), [1, 2, 3], [2, 1, 3]).value == 2
    assert od.metric_distance(dp.hamming_distance(), [1, 2, 3], [2, 1, 3]).value == 2
    assert od.metric_distance(dp.hamming_distance(), [1], [1, 2]).infinite
    assert od.metric_distance(dp.change_one_distance(), [1, 2], [1, 3]).value == 1
    d = od.metric_distance(dp.absolute_distance(T=float), 2.0 ** 53, 0.5)  # 2^53 − 0.5: not a float
    assert d.value == Fraction(2 ** 53) - Fraction(1, 2)
    assert d.text() == "9007199254740992.0 (rounded up)" and Fraction(d.up()) > d.value
    assert od.metric_distance(dp.absolute_distance(T=float), 0.1, 0.3).text() == "0.19999999999999998"
    l2 = od.metric_distance(dp.l2_distance(T=float), [0.0, 0.0], [3.0, 4.0])
    assert l2.squared and l2.text() == "5.0" and not l2.exceeds(5.0) and l2.exceeds(4.999999)
    assert od.metric_distance(dp.l1_distance(T=int), {"a": 1}, {"b": 2}).value == 3  # a missing key is 0
    mono = dp.linf_distance(T=float, monotonic=True)
    assert od.metric_distance(mono, [1.0, 2.0], [0.0, 3.0]).infinite  # the signs differ
    assert od.metric_distance(mono, [1.0, 2.0], [0.0, 0.5]).value == Fraction(3, 2)
    assert od.metric_distance(dp.absolute_distance(T=float), math.nan, math.nan).value == 0


def test_a_randomised_transformation_is_said_unchecked_not_blamed():
    resize = _floats() >> dp.t.then_resize(size=3, constant=0.0)  # samples records when truncating
    report = od.check_stability(resize, size=8, seed=4)
    assert not report.refuted
    assert report.stages[0]["note"] and "randomised" in report.stages[0]["note"]
    assert any("randomised" in f.message for f in report.notes)


def test_an_opendp_target_checks_its_chain_and_says_the_noise_is_native():
    with od.recording():
        line = sys._getframe().f_lineno + 1
        measurement = _floats() >> dp.t.then_sum() >> dp.m.then_laplace(scale=1.0)
    ok = od.check_measurement(measurement, seed=5)
    assert ok.verdict.value == "inconclusive" and ok.kind == "replay" and not ok.noise_intercepted
    assert [f.kind for f in ok.findings] == ["no_noise_intercepted"]
    assert ok.calls <= 200 and ok.accounting["measurement"]["checked"] > 0
    # records in [0, 2] fed to a sum declared over [0, 1]: OpenDP does not check its input domain
    bad = od.check_measurement(measurement, domain=(0, 2), seed=5)
    assert bad.verdict.value == "refuted"
    top = bad.findings[0]
    assert top.kind == "sensitivity_exceeded" and top.site.path == __file__ and top.site.line == line
    assert "above map(d_in) = 1.000000009313226 of make_sum" in top.message
    assert bad.to_record()["kind"] == "replay"


TARGETS = """
import opendp.prelude as dp
from dpaudit.adapters import opendp

dp.enable_features("contrib")
space = dp.vector_domain(dp.atom_domain(bounds=(0.0, 1.0))), dp.symmetric_distance()
unclamped = opendp.target(space >> dp.t.then_sum() >> dp.m.then_laplace(scale=1.0), domain=(0, 2))
"""


@pytest.mark.slow
def test_the_cli_checks_a_file_of_opendp_targets_with_the_replay_flag(tmp_path):
    (tmp_path / "targets.py").write_text(TARGETS)
    proc = in_process("check", "lib:targets.py", "--in-process", "--replay", "--json", "r.json",
                      cwd=tmp_path)  # the command's entry point in this process
    assert proc.returncode == 1, proc.stdout + proc.stderr
    (rec,) = json.loads((tmp_path / "r.json").read_text())["results"]
    assert rec["kind"] == "replay" and rec["verdict"] == "refuted"
    assert [f["kind"] for f in rec["findings"]] == ["sensitivity_exceeded", "no_noise_intercepted"]
    assert rec["location"]["line"] == 7 and rec["location"]["path"].endswith("targets.py")
    assert rec["library"]["name"] == "opendp"
    assert "reproduce: dpaudit check lib:targets.py:unclamped --replay --seed=" in proc.stdout


def test_nonfinite_records_are_tried_only_where_the_input_domain_admits_nan():
    """``--nonfinite`` on an OpenDP target: NaN records go only to a domain that has NaN as a
    member (OpenDP refuses them when invoked otherwise, which is no finding of the chain's)."""
    from dpaudit.stability.check import run_check

    no_nan = (dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()) \
        >> dp.t.then_clamp((0.0, 1.0)) >> dp.t.then_sum()
    c, _, failed, _ = run_check(no_nan, d_in=1, neighbours=None, domain=None, size=None, seed=1,
                                budget=None, examples=None, timeout=None, name=None, nonfinite=True)
    assert c.nonfinite is False and failed is None and c.violation is None
    with_nan = (dp.vector_domain(dp.atom_domain(T=float, nan=True)), dp.symmetric_distance()) \
        >> dp.t.then_impute_constant(0.0) >> dp.t.then_clamp((0.0, 1.0)) >> dp.t.then_sum()
    c, _, failed, _ = run_check(with_nan, d_in=1, neighbours=None, domain=None, size=None, seed=1,
                                budget=None, examples=None, timeout=None, name=None, nonfinite=True)
    assert c.nonfinite is True and failed is None and c.violation is None
