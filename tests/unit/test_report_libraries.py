"""The per-library section of the HTML report: grouped by library and version, the claim as the
library states it, and a refutation explained with the pair, the event and the bound."""

from dpaudit.report.html import render_html
from dpaudit.report.libraries import explanation, library_sections

LIB = {"name": "somelib", "version": "1.2", "claim": "ε-DP with epsilon=1.0", "notion": "replace",
       "own_randomness": True}


def record(i, verdict, **kw):
    return {"id": f"somelib.t{i}", "kind": "audit", "target": f"somelib.t{i}", "verdict": verdict,
            "claim": {"epsilon": 1.0, "delta": 0.0, "neighbours": "add-remove"}, "library": LIB,
            "epsilon_lower_bound": 5.2 if verdict == "refuted" else 0.97, "confidence": 0.999,
            "margin": 5.2 if verdict == "refuted" else 0.97, "description": "the size leaks", **kw}


def test_a_refutation_is_explained_with_the_audited_pair_event_and_bound():
    rec = record(1, "refuted", counterexample={"dataset": [1.0], "neighbour": [], "p": 0.81, "q": 0.0,
                                                "event": {"text": "output ≥ 0.003"}})
    text = explanation(rec)
    assert text.startswith("somelib 1.2 states: ε-DP with epsilon=1.0.")
    assert "Audited under add-remove neighbours: on D = [1.0] and D′ = []" in text
    assert "“output ≥ 0.003” has probability 0.81 against 0" in text
    assert "ε ≥ 5.2 at 99.9% confidence, above the stated ε = 1." in text and "the size leaks" in text
    assert explanation(record(2, "not_refuted")) == ""


def test_sections_group_by_library_and_version_and_render():
    recs = [record(1, "refuted"), record(2, "not_refuted"), {"id": "other", "kind": "audit", "verdict": "not_refuted"}]
    views = [{"anchor": f"r{i}", "title": r["id"], "verdict": r["verdict"], "verdict_label": r["verdict"]}
             for i, r in enumerate(recs, 1)]
    (section,) = library_sections(recs, views)
    assert (section["name"], section["version"]) == ("somelib", "1.2")
    assert [r["anchor"] for r in section["rows"]] == ["r1", "r2"]
    assert section["rows"][1]["margin"] == "0.97" and section["rows"][0]["audited"] == "add-remove"
    html = render_html({"results": recs[:2], "seed": 1}, plots=False)
    assert "DP library: somelib 1.2" in html and "draws its own randomness" in html
