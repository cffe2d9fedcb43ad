"""Where reports are written: a regular file atomically, a device or
FIFO under /dev in place (renaming over ``/dev/stdout`` replaced it with a file), a FIFO elsewhere
refused (nobody reading it hung the run), a symbolic link refused, undecodable text escaped, and a path that cannot be written one line."""

import os
import stat
import threading

import pytest

from dpaudit.errors import UsageError
from dpaudit.report.json_io import write_text


def test_a_regular_file_is_replaced_and_a_new_path_created(tmp_path):
    target = tmp_path / "deep" / "r.json"
    assert write_text(target, "one") == str(target)
    write_text(target, "two")
    assert target.read_text() == "two"
    assert [p.name for p in target.parent.iterdir()] == ["r.json"]  # no temporary left


def test_a_symbolic_link_is_refused_and_its_target_left_alone(tmp_path):
    real = tmp_path / "art" / "real.json"
    real.parent.mkdir()
    real.write_text("{}")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    with pytest.raises(UsageError, match=r"^cannot write .*: it is a symbolic link \(to .*real.json\); "
                                         r"dpaudit does not follow links when writing reports$"):
        write_text(link, "new")
    assert link.is_symlink() and real.read_text() == "{}"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_is_refused_outside_dev_and_a_pipe_under_dev_written_in_place(tmp_path):
    fifo = tmp_path / "p.json"
    os.mkfifo(fifo)  # nobody reads it: opening it to write would block forever
    with pytest.raises(UsageError, match=r"^cannot write .*p.json: it is a FIFO; dpaudit writes "
                                         r"reports only to regular files"):
        write_text(fifo, "x")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    read_end, write_end = os.pipe()  # /dev/fd/N: what `--json >(jq .)` and /dev/stdout name
    got = []
    reader = threading.Thread(target=lambda: got.append(os.read(read_end, 100)), daemon=True)
    reader.start()
    try:
        write_text(f"/dev/fd/{write_end}", "through the pipe")
        reader.join(10)
    finally:
        os.close(write_end)
        os.close(read_end)
    assert got == [b"through the pipe"]


def test_lone_surrogates_are_escaped_not_fatal(tmp_path):
    path = tmp_path / "s.json"
    write_text(path, 'raised "bad \ud800 value"')
    assert path.read_text(encoding="utf-8") == 'raised "bad \\ud800 value"'


def test_an_unwritable_path_is_one_line(tmp_path):
    with pytest.raises(UsageError, match=r"^cannot write .*: is a folder$"):
        write_text(tmp_path, "x")


def test_paths_that_cannot_take_a_report_are_named_before_any_audit(tmp_path):
    from dpaudit.report.json_io import unwritable

    (tmp_path / "plain").write_text("")
    assert unwritable(tmp_path) == "is a folder"
    assert unwritable(tmp_path / "plain" / "deeper" / "r.json") == f"{tmp_path / 'plain'} is not a folder"
    assert unwritable(tmp_path / "new" / "r.json") is None
    assert unwritable(tmp_path / "plain") is None  # an existing file is replaced
