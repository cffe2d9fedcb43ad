"""Report formats come from one registry: flags, write_reports and `dpaudit report` follow it."""

import argparse

import pytest

from dpaudit.errors import InvalidArgument
from dpaudit.report import (Reporter, add_report_options, make_run, register_reporter, report_paths, reporters,
                            write_reports)
from dpaudit.report import registry

RUN = make_run([{"kind": "formal", "target": "c", "verdict": "proved", "elapsed_s": 0.1}], seed=3,
               started=0, finished=1, command="dpaudit verify", git=False)


def test_builtin_formats_in_writing_order_json_first():
    assert [r.name for r in reporters()][:5] == ["json", "junit", "sarif", "markdown", "html"]


def test_flags_are_generated_for_every_format():
    p = argparse.ArgumentParser()
    add_report_options(p)
    args = p.parse_args(["--markdown", "s.md", "--json", "r.json"])
    paths = report_paths(args)
    assert paths["markdown"] == "s.md" and paths["json"] == "r.json" and paths["html"] is None
    assert set(paths) == {r.name for r in reporters()}


def test_a_new_format_is_one_registration(tmp_path, monkeypatch):
    monkeypatch.setattr(registry, "REPORTERS", registry.REPORTERS.copy())  # leave the registry as found
    register_reporter(Reporter("count", "write the number of results", lambda run: f"{len(run['results'])}\n"))
    p = argparse.ArgumentParser()
    add_report_options(p)
    args = p.parse_args(["--count", str(tmp_path / "n.txt")])
    written = write_reports(RUN, **report_paths(args))
    assert written == {"count": str(tmp_path / "n.txt")}
    assert (tmp_path / "n.txt").read_text() == "1\n"


def test_unknown_or_bad_formats_are_refused_before_writing(tmp_path):
    with pytest.raises(InvalidArgument, match="report format"):
        write_reports(RUN, json=tmp_path / "r.json", pdf=tmp_path / "r.pdf")
    assert not (tmp_path / "r.json").exists()
    with pytest.raises(InvalidArgument, match="lower-case word"):
        register_reporter(Reporter("Bad Name", "x", str))
    with pytest.raises(InvalidArgument, match="already registered"):
        register_reporter(Reporter("html", "another html", str))


def test_every_format_writes_and_json_comes_first(tmp_path):
    paths = {r.name: tmp_path / f"out.{r.name}" for r in reporters()[:5]}
    written = write_reports(RUN, **paths)
    assert list(written)[0] == "json" and set(written) == set(paths)
    assert all((tmp_path / f"out.{n}").stat().st_size > 0 for n in paths)


def test_a_report_that_cannot_be_written_does_not_lose_the_others(tmp_path):
    """A path under a file fails at writing time; every other format is still written, and the
    one line says which failed and what was written."""
    from dpaudit.errors import UsageError

    (tmp_path / "plain").write_text("")
    with pytest.raises(UsageError) as err:
        write_reports(RUN, json=tmp_path / "plain" / "r.json", html=tmp_path / "r.html",
                      junit=tmp_path / "r.xml")
    message = str(err.value)
    assert message.startswith(f"cannot write {tmp_path / 'plain' / 'r.json'}: ") and "\n" not in message
    assert "wrote junit" in message and "html" in message
    assert (tmp_path / "r.html").stat().st_size > 0 and (tmp_path / "r.xml").stat().st_size > 0
