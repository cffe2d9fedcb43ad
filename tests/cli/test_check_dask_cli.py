"""``dpaudit check --executor``: Dask on this host gives the numbers of an in-process run; untrusted
code and bad values are refused in one line (exit 3)."""

import os
import subprocess
import sys

import pytest

pytest.importorskip("distributed")

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "laplace_sum.py")


def dpaudit(*args):
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, "-m", "dpaudit", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=300)


@pytest.mark.slow
def test_a_local_cluster_gives_the_in_process_verdict_and_bound(tmp_path):
    common = ["check", EXAMPLE, "--in-process", "--samples", "300000", "--seed", "9", "--quiet"]
    here = dpaudit(*common)
    dask = dpaudit(*common, "--executor", "dask", "--json", tmp_path / "r.json")
    assert here.returncode == dask.returncode == 0, dask.stderr
    assert here.stdout.splitlines()[0] == dask.stdout.splitlines()[0]
    assert "NOT REFUTED" in dask.stdout and (tmp_path / "r.json").is_file()


@pytest.mark.parametrize("flags, message", [
    (["--executor", "dask"], "without the sandbox; add --in-process to confirm the code is trusted"),
    (["--in-process", "--executor", "spark"], "--executor must be 'dask' or a scheduler address"),
])
def test_refusals_are_one_line_and_exit_3(flags, message):
    out = dpaudit("check", EXAMPLE, *flags)
    assert out.returncode == 3
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in out.stderr
