"""``dpaudit check --executor``: Dask on this host gives the numbers of an in-process run; untrusted
code and bad values are refused in one line (exit 3)."""

import os

import pytest
from cli_in_process import dpaudit as in_process, dpaudit_process

pytest.importorskip("distributed")

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "laplace_sum.py")


def dpaudit(*args):
    return in_process(*args)  # the command's entry point in this process


@pytest.mark.slow
def test_a_local_cluster_gives_the_in_process_verdict_and_bound(tmp_path):
    # --no-replay: the sampling is what Dask runs; the replay stage runs in this process either way
    common = ["check", EXAMPLE, "--in-process", "--samples", "300000", "--seed", "9", "--quiet", "--no-replay"]
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
    out = dpaudit_process("check", EXAMPLE, *flags)  # in a fresh process
    assert out.returncode == 3
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in out.stderr


@pytest.mark.slow
def test_a_local_cluster_gives_both_findings_of_an_in_process_run(tmp_path):
    # the float policy travels with the spec, not the executor: the same findings on Dask
    mech = tmp_path / "porous.py"
    mech.write_text("import numpy as np\nimport dpaudit\n\n"
                    "@dpaudit.mechanism(epsilon=1.0, neighbours='add-remove', domain=(0, 1), size=4, float='warn')\n"
                    "def f(data, rng, size=None):\n"
                    "    return np.clip(data, 0, 1).sum() + rng.laplace(scale=1.0, size=size)\n")
    common = ["check", mech, "--in-process", "--samples", "200000", "--seed", "9", "--quiet", "--no-replay"]
    here = dpaudit(*common, "--json", tmp_path / "here.json")
    dask = dpaudit(*common, "--executor", "dask", "--json", tmp_path / "dask.json")
    assert here.returncode == dask.returncode == 0, dask.stderr
    import json

    a, b = (json.loads((tmp_path / f).read_text())["results"][0] for f in ("here.json", "dask.json"))
    assert a["float_policy"] == b["float_policy"] == "warn"
    assert {q: f["epsilon_lower_bound"] for q, f in a["findings"].items()} == \
        {q: f["epsilon_lower_bound"] for q, f in b["findings"].items()}
