"""dpaudit.execution.sandbox: the child process runs batches exactly like in process, and turns every kind of
misbehaviour into a MechanismError(cause, dataset) without harming the parent."""

import textwrap

import numpy as np
import pytest

from dpaudit.errors import InvalidArgument, LoadError, MechanismError
from dpaudit.loader import load_mechanism
from dpaudit.rng import root_sequence
from dpaudit.execution.base import InProcessExecutor, plan_batches
from dpaudit.execution.sandbox import SandboxExecutor, parse_memory
from dpaudit.spec import MechanismSpec

MECHANISMS = """
import ctypes, os, sys, time
import numpy as np
import dpaudit

@dpaudit.mechanism(epsilon=1.0)
def batch_laplace(data, rng, size=None):
    return data.sum() + rng.laplace(size=size)

def loop_laplace(data, rng):
    return float(data.sum() + rng.laplace())

def vector(data, rng):
    return (float(data.sum()), int(rng.integers(3)))

def raises(data, rng):
    raise ValueError("boom")

def raises_on_ones(data, rng):
    if data.sum() > 1.5:
        raise ValueError("too big")
    return 0.0

def exits(data, rng):
    sys.exit(3)

def hard_exit(data, rng):
    print("about to leave")
    os._exit(7)

def segfault(data, rng):
    ctypes.string_at(0)

def sleeps(data, rng):
    time.sleep(1000)

def spins_and_swallows(data, rng):
    while True:
        try:
            while True:
                pass
        except Exception:
            pass

def swallows_everything(data, rng):
    while True:
        try:
            while True:
                pass
        except BaseException:
            pass

def batch_sleeps(data, rng, size=None):
    time.sleep(1000)

def slow(data, rng):
    time.sleep(0.05)
    return 0.0

def hogs_memory(data, rng):
    return float(np.ones(2 * 10**8).sum())

def prints(data, rng):
    print("chatty mechanism", rng.random())
    sys.stderr.write("to stderr too\\n")
    return float(data.sum() + rng.laplace())

def unpicklable(data, rng):
    return lambda: 0

def total(data):
    return float(data.sum())

def total_raises(data):
    raise ArithmeticError("no total")

def total_hangs_in_c(data):
    ctypes.PyDLL(None).sleep(1000)
"""


@pytest.fixture(scope="module")
def mech_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("sandbox") / "mechs.py"
    path.write_text(textwrap.dedent(MECHANISMS))
    return str(path)


def spec_of(path, name):
    return MechanismSpec.from_function(load_mechanism(path, name).func, epsilon=1.0)


def tasks(n, data=(0.0, 1.0, 0.5), seed=7, batch_size=50_000):
    return plan_batches(np.array(data), root_sequence(seed), n, batch_size)


def failure(path, name, n=4, **limits) -> MechanismError:
    limits.setdefault("call_timeout", 5.0)
    with SandboxExecutor(path, name, **limits) as ex:
        with pytest.raises(MechanismError) as info:
            ex.run(spec_of(path, name), tasks(n))
    err = info.value
    assert "\n" not in str(err)
    np.testing.assert_array_equal(err.dataset, [0.0, 1.0, 0.5])  # the input that triggered it
    return err


@pytest.mark.parametrize("name,batch_size", [("batch_laplace", 30_000), ("loop_laplace", 400),
                                             ("vector", 400)])
def test_same_outputs_as_in_process_and_one_child_for_all_batches(mech_file, name, batch_size):
    spec = spec_of(mech_file, name)
    work = tasks(1_000 if name != "batch_laplace" else 100_000, batch_size=batch_size)
    expected = InProcessExecutor().run(spec, work)
    with SandboxExecutor(mech_file, name) as ex:
        got = ex.run(spec, work)
        pid = ex.pid
        again = ex.run(spec, work)
        assert ex.pid == pid and ex.children_started == 1
    assert len(got) == len(work) >= 3
    for a, b, c in zip(got, expected, again):
        assert type(a) is type(b)
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
        np.testing.assert_array_equal(np.asarray(c), np.asarray(b))


def test_two_threads_closing_one_executor_close_each_buffer_once(mech_file):
    """A signal's handler and the fresh-process check's thread can close the same executor at
    once: a CI run once printed a thread's traceback (EBADF) from closing a buffer's descriptor
    twice. Closing from 8 threads at once, then again, raises nothing."""
    import threading

    spec = spec_of(mech_file, "batch_laplace")
    for _ in range(3):
        ex = SandboxExecutor(mech_file, "batch_laplace")
        ex.run(spec, tasks(100_000, batch_size=30_000))  # numeric outputs: shared buffers in use
        errors, go = [], threading.Barrier(8)

        def close() -> None:
            go.wait()
            try:
                ex.close()
            except BaseException as exc:  # noqa: BLE001 - the test collects what escapes
                errors.append(exc)

        threads = [threading.Thread(target=close) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        ex.close()
        assert errors == []


def test_prints_do_not_corrupt_the_channel(mech_file, capfd):
    spec = spec_of(mech_file, "prints")
    with SandboxExecutor(mech_file, "prints") as ex:
        got = ex.run(spec, tasks(50))
        assert "chatty mechanism" in ex.output_tail() and "to stderr too" in ex.output_tail()
    out, err = capfd.readouterr()
    assert "chatty" not in out and "chatty" not in err  # nothing leaks to our terminal
    np.testing.assert_array_equal(got[0], InProcessExecutor().run(spec, tasks(50))[0])


def test_raise(mech_file):
    assert failure(mech_file, "raises").cause == "raised ValueError: boom"


def test_the_failing_dataset_is_named_when_small_batches_travel_together(mech_file):
    spec = spec_of(mech_file, "raises_on_ones")
    work = tasks(30, data=(0.0, 0.0)) + tasks(30, data=(1.0, 1.0)) + tasks(30, data=(0.0, 0.0))
    with SandboxExecutor(mech_file, "raises_on_ones") as ex:
        with pytest.raises(MechanismError) as info:
            ex.run(spec, work)
    assert info.value.cause == "raised ValueError: too big"
    np.testing.assert_array_equal(info.value.dataset, [1.0, 1.0])


def test_sys_exit(mech_file):
    assert failure(mech_file, "exits").cause == "called sys.exit(3)"


def test_os_exit_keeps_the_tail_of_its_output(mech_file):
    cause = failure(mech_file, "hard_exit").cause
    assert cause.startswith("exited with status 7")
    assert cause.endswith("its last output: about to leave")


def test_segfault_names_the_signal_and_the_line(mech_file):
    cause = failure(mech_file, "segfault").cause
    assert cause.startswith("crashed with SIGSEGV")
    assert "mechs.py" in cause and "in segfault" in cause


def test_hang_stops_at_the_per_call_limit(mech_file):
    assert failure(mech_file, "sleeps", call_timeout=0.5).cause.startswith(
        "hung: one call ran longer than the per-call limit of 0.5 s")


@pytest.mark.slow
def test_hang_that_swallows_the_interrupt_is_killed(mech_file):
    cause = failure(mech_file, "spins_and_swallows", call_timeout=0.5).cause
    assert cause.startswith("hung") and "0.5 s" in cause


@pytest.mark.slow
def test_hang_that_swallows_even_base_exceptions_is_killed(mech_file):
    cause = failure(mech_file, "swallows_everything", call_timeout=0.5).cause
    assert cause.startswith("hung: one call ran longer than the per-call limit of 0.5 s "
                            "and could not be interrupted")


@pytest.mark.slow
def test_batch_call_hang(mech_file):
    assert failure(mech_file, "batch_sleeps", call_timeout=0.5).cause.startswith("hung")


def test_total_time_limit(mech_file):
    err = failure(mech_file, "slow", n=200, call_timeout=5.0, total_timeout=1.0)
    assert err.cause.startswith("exceeded the total time limit of 1 s")


def test_memory_cap(mech_file):
    cause = failure(mech_file, "hogs_memory", memory="512M").cause
    assert cause.startswith("exceeded the memory cap of 512 MiB")


def test_unpicklable_output(mech_file):
    # a function is no plain value: refused in the child before pickling is tried
    assert failure(mech_file, "unpicklable").cause.startswith(
        "returned a function object, not a plain value")


@pytest.mark.slow
def test_a_fresh_child_after_a_failure(mech_file):
    spec = spec_of(mech_file, "loop_laplace")
    with SandboxExecutor(mech_file, "raises") as ex:
        with pytest.raises(MechanismError):
            ex.run(spec_of(mech_file, "raises"), tasks(3))
        assert ex.pid is None
    with SandboxExecutor(mech_file, "loop_laplace") as ex:
        ex.run(spec, tasks(3))
        first = ex.pid
        ex._kill()  # simulate a dead child between runs
        assert len(ex.run(spec, tasks(3))) == 1 and ex.pid != first and ex.children_started == 2


@pytest.mark.slow
def test_load_errors_come_back_from_the_child(tmp_path, mech_file):
    with pytest.raises(LoadError, match="no such file"):
        SandboxExecutor(str(tmp_path / "nope.py")).start()
    crash = tmp_path / "crash_at_import.py"
    crash.write_text("import os\nos._exit(5)\n")
    with pytest.raises(LoadError, match="could not import it: exited with status 5"):
        SandboxExecutor(str(crash)).start()
    with pytest.raises(LoadError, match="no function named 'missing'"):
        SandboxExecutor(mech_file, "missing").start()


def test_an_import_from_an_unshared_folder_says_how_to_share_it(tmp_path, monkeypatch):
    # a benchmark's file put the repository on sys.path itself and imported from it: refused,
    # rightly, with no word on what to do; the error now names the three ways
    lib, home = tmp_path / "lib", tmp_path / "mech"
    lib.mkdir(), home.mkdir()
    (lib / "helper_for_the_test.py").write_text("SCALE = 1.0\n")
    f = home / "m.py"
    f.write_text(f"import sys\nsys.path.insert(0, {str(lib)!r})\nimport helper_for_the_test\n"
                 "def mech(data, rng):\n    return 0.0\n")
    monkeypatch.chdir(home)
    with pytest.raises(LoadError, match="No module named 'helper_for_the_test'") as err:
        SandboxExecutor(str(f), "mech").start()
    assert "does not share: run dpaudit from that folder, put it on PYTHONPATH, or pass " \
           "--isolation=process" in str(err.value)


def test_arguments_are_validated(mech_file):
    with pytest.raises(InvalidArgument, match="call_timeout must be"):
        SandboxExecutor(mech_file, call_timeout=0)
    with pytest.raises(InvalidArgument, match="total_timeout must be"):
        SandboxExecutor(mech_file, total_timeout=float("nan"))
    with pytest.raises(InvalidArgument, match="memory must be"):
        SandboxExecutor(mech_file, memory="lots")
    assert parse_memory("2G") == 2 * 1024 ** 3
    assert parse_memory("512MiB") == 512 * 1024 ** 2
    assert parse_memory(1e9) == 10 ** 9
    with pytest.raises(InvalidArgument, match="at least 64M"):
        parse_memory("1M")


@pytest.mark.slow
def test_an_audit_through_the_sandbox_equals_the_in_process_audit(mech_file):
    import dpaudit

    spec = spec_of(mech_file, "batch_laplace")
    with SandboxExecutor(mech_file, "batch_laplace") as ex:
        sandboxed = dpaudit.audit(spec, samples=20_000, seed=3, executor=ex)
    in_process = dpaudit.audit(spec, samples=20_000, seed=3, executor=InProcessExecutor())
    assert sandboxed.verdict is in_process.verdict
    assert sandboxed.epsilon_lower_bound == in_process.epsilon_lower_bound
    assert sandboxed.counterexample == in_process.counterexample


def test_outputs_handed_out_stay_intact_and_buffers_are_reused_only_when_free(mech_file):
    spec = spec_of(mech_file, "batch_laplace")
    with SandboxExecutor(mech_file, "batch_laplace") as ex:
        kept = ex.run(spec, tasks(100_000, seed=1, batch_size=50_000))
        saved = [k.copy() for k in kept]
        view = kept[1][10:20]
        del kept[1]  # a slice still refers to the second buffer
        for seed in range(2, 8):  # dropped at once: their buffers come back
            ex.run(spec, tasks(100_000, seed=seed, batch_size=50_000))
        assert len(ex._pool._buffers) <= 6
        np.testing.assert_array_equal(kept[0], saved[0])
        np.testing.assert_array_equal(view, saved[1][10:20])
        kept[0][:3] = 0.0  # outputs are ordinary writable arrays
    np.testing.assert_array_equal(kept[0][3:], saved[0][3:])  # and outlive the sandbox


@pytest.mark.slow
def test_plain_calls_return_values_and_reraise_by_name(mech_file):
    from dpaudit.execution.sandbox import RaisedInChild

    with SandboxExecutor(mech_file, "total") as ex:
        assert ex.call(np.array([1.0, 2.5])) == 3.5
        assert ex.facts["function"] == "total" and ex.facts["positional"] == 1
        assert ex.facts["call_form"] == "f(data)"
    with SandboxExecutor(mech_file, "total_raises") as ex:
        with pytest.raises(RaisedInChild, match="no total") as info:
            ex.call(np.array([1.0]))
        assert type(info.value).__name__ == "ArithmeticError"


@pytest.mark.slow
def test_a_call_stuck_in_c_holding_the_gil_is_stopped_from_the_parent(mech_file):
    import time

    from dpaudit.execution.sandbox import SandboxFailure

    with SandboxExecutor(mech_file, "total_hangs_in_c", call_timeout=0.5) as ex:
        t0 = time.monotonic()
        with pytest.raises(SandboxFailure, match="could not be interrupted"):
            ex.call(np.array([1.0]))
        assert time.monotonic() - t0 < 4.0  # 0.5 s + the child's grace + polling, not minutes


@pytest.mark.slow
def test_a_loop_form_hang_in_c_is_stopped_within_the_per_call_limit(tmp_path):
    import time

    path = tmp_path / "gil.py"
    path.write_text("import ctypes\ndef f(data, rng):\n    ctypes.PyDLL(None).sleep(1000)\n")
    spec = MechanismSpec.from_function(lambda data, rng: 0.0, epsilon=1.0)
    with SandboxExecutor(str(path), "f", call_timeout=0.5) as ex:
        t0 = time.monotonic()
        with pytest.raises(MechanismError, match="could not be interrupted"):
            ex.run(spec, tasks(10))
        assert time.monotonic() - t0 < 4.0


def test_the_child_environment_is_scrubbed():
    from dpaudit.execution.isolation import child_environment

    env = child_environment(["MY_SETTING"], base={"PATH": "/bin", "AWS_SECRET_ACCESS_KEY": "k",
                                                  "MY_SETTING": "1", "HOME": "/home/u"})
    assert env == {"PATH": "/bin", "MY_SETTING": "1"}


def test_control_characters_are_escaped():
    from dpaudit.execution.process import printable

    assert printable("\x1b[32mOK\x00\x9b\tline\n") == "\\x1b[32mOK\\x00\\x9b\tline\n"


def test_the_private_folder_is_removed_and_the_child_isolated(mech_file, tmp_path, monkeypatch):
    from dpaudit.execution.isolation import landlock_abi

    monkeypatch.setenv("DPAUDIT_SANDBOX_DIR", str(tmp_path))
    spec = spec_of(mech_file, "loop_laplace")
    with SandboxExecutor(mech_file, "loop_laplace") as ex:
        ex.run(spec, tasks(100))
        assert len(list(tmp_path.iterdir())) == 1
        expected = "landlock" if landlock_abi() >= 1 else "process only"
        assert ex.isolation_in_force.startswith(expected)
    assert list(tmp_path.iterdir()) == []


def test_the_output_tail_stays_bounded_whatever_the_child_prints():
    import os

    from dpaudit.execution.process import TAIL_BYTES, OutputTail

    r, w = os.pipe()
    tail = OutputTail(r)
    for i in range(200):  # 2 MB through a 64 kB pipe, drained as dpaudit does while it waits
        os.write(w, (f"line {i} " + "x" * 10_000 + "\n").encode())
        tail.drain()
        assert len(tail._buf) <= 2 * TAIL_BYTES
    os.write(w, b"the last words\n")
    os.close(w)
    assert tail.text().endswith("x\nthe last words\n") and len(tail.text()) == TAIL_BYTES
    tail.close()


@pytest.mark.slow
def test_outputs_of_a_class_from_the_file_come_back_without_importing_it(tmp_path):
    import sys

    path = tmp_path / "own_class.py"
    path.write_text("class Colour:\n    def __init__(self, v):\n        self.v = v\n"
                    "    def __repr__(self):\n        return f'Colour({self.v})'\n"
                    "def f(data, rng):\n    return Colour('red' if rng.random() < 0.5 else 'blue')\n")
    spec = MechanismSpec.from_function(lambda data, rng: 0.0, epsilon=1.0)
    before = set(sys.modules)
    # plain values only: an object of the file's own class was once audited by its repr, which
    # need not show all it carries; it is now the mechanism's error, named by its class
    with SandboxExecutor(str(path), "f") as ex:
        with pytest.raises(MechanismError, match="returned a Colour object, not a plain value"):
            ex.run(spec, tasks(40))
    # a dataclass of the file comes back as the dict of its fields (all it holds)
    path.write_text("from dataclasses import dataclass\n@dataclass\nclass Colour:\n    v: str\n"
                    "def f(data, rng):\n    return Colour('red' if rng.random() < 0.5 else 'blue')\n")
    with SandboxExecutor(str(path), "f") as ex:
        out = ex.run(spec, tasks(40))[0]
    assert {v["v"] for v in out} == {"red", "blue"}
    assert not [m for m in set(sys.modules) - before if m.startswith("_dpaudit_user_")]


def test_a_working_folder_of_many_checkouts_still_starts_the_child(tmp_path, monkeypatch):
    # each checkout's .git and .env is held back and named in the isolation words the child
    # sends first; past 200 characters the parent refused them, and every check of a file in
    # such a folder failed: "the sandbox child did not say which isolation it entered"
    for i in range(30):
        (tmp_path / f"repo{i:02d}" / ".git").mkdir(parents=True)
        (tmp_path / f"repo{i:02d}" / ".env").write_text("TOKEN=x\n")
    f = tmp_path / "m.py"
    f.write_text("def mech(data, rng):\n    return 0.0\n")
    monkeypatch.chdir(tmp_path)
    ex = SandboxExecutor(str(f), "mech")
    try:
        ex.start()
        assert ex.isolation_in_force and len(ex.isolation_in_force) <= 200
    finally:
        ex.close()


def test_held_words_keep_under_the_limit_and_say_how_many_more():
    from dpaudit.execution.isolation import WORDS_MAX, held_words

    held = [f"repo{i}/.git of the working folder /tmp/x" for i in range(40)]
    text = held_words("landlock (ABI 7) + seccomp", held)
    assert len(text) <= WORDS_MAX and text.endswith(" more") and "repo0/.git" in text
    assert held_words("landlock (ABI 7)", []) == "landlock (ABI 7)"
    assert len(held_words("landlock (ABI 7)", ["x" * 500, "y"])) <= WORDS_MAX
    long = held_words("landlock (ABI 7); seccomp unavailable: " + "z" * 170, ["a/.git of /w"])
    assert len(long) <= WORDS_MAX and long.endswith("; not shared: 1 entry")
