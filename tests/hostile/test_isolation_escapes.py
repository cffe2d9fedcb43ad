"""The sandbox child's isolation against a hostile checkout (the folders, the network, the environment and the audit hook).

* A file in the working folder named like a standard module (``token.py``, ``random.py``,
  ``typing.py``) never runs in the child, nor a ``jinja2.py`` in ``python -m dpaudit`` itself:
  each plant writes a marker and reads dpaudit's environment when imported.
* In the child, the calls that reached the kernel or dpaudit's own process as root (or as any
  user, for the ones aimed at dpaudit) fail with ``EPERM``: the mechanism raises if one succeeds
  or fails otherwise, so a leak is an ERROR and a contained child is NOT REFUTED.
* The child has no capability and no-new-privileges, and runs ``python -I`` in its private folder.
* The audit hook that names blocked attempts cannot be switched off from Python.
* The same, end to end, with every capability dropped (``setpriv``).

Each test runs ``dpaudit check`` (in this process, the mechanism in the sandbox child; or
``python -m dpaudit`` in a subprocess where dpaudit's own imports or its life are at stake) and
checks that nothing is left behind (processes, sandbox folders).
"""

from __future__ import annotations

import ast
import errno
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from textwrap import dedent, indent

import pytest

from dpaudit.execution import isolation  # private: _resolve, the hook's own state under attack
from dpaudit.execution.isolation import landlock_abi
from .cases import LAPLACE, ONCE, Case, _f
from .test_hostile import (FLAGS, ROOT, arena, check_reports, mechanism_file,  # noqa: F401
                           report_flags, reports, tagged_processes, wait_until_no_tagged)

ABI = landlock_abi()
SECCOMP = os.uname().machine in ("x86_64", "aarch64")
needs_seccomp = pytest.mark.skipif(not SECCOMP, reason="the seccomp filter knows x86-64 and arm64 "
                                   f"only, not {os.uname().machine}")

#: a module that, when imported, writes a marker (and what it read of dpaudit's environment),
#: then steps aside for the real module of that name
PLANTED = '''\
import os as _os, sys as _sys
try:
    with open({marker!r}, "a") as _fh:
        _fh.write(__name__ + "\\n")
        try:
            with open(f"/proc/{{_os.getppid()}}/environ", "rb") as _env:
                _fh.write(repr(_env.read()[:60]) + "\\n")
        except OSError as _exc:
            _fh.write(f"environ: {{_exc}}\\n")
except OSError:
    pass
_here, _path = _os.path.dirname(_os.path.abspath(__file__)), list(_sys.path)
_sys.path[:] = [p for p in _sys.path if _os.path.abspath(p or ".") != _here]
del _sys.modules[__name__]
try:
    import importlib as _importlib
    _sys.modules[__name__] = _importlib.import_module(__name__)
finally:
    _sys.path[:] = _path
'''


def plant(folder: Path, name: str, marker: Path) -> None:
    (folder / f"{name}.py").write_text(PLANTED.format(marker=str(marker)))


def check(arena, case: Case, *extra: str) -> tuple[int, dict]:
    """``dpaudit check`` of ``case`` in this process: (exit code, JSON record); nothing left."""
    from dpaudit.cli import run

    path = mechanism_file(arena, case)
    paths = reports(arena["tmp"])
    code = run(["check", f"{path}:f", *FLAGS, *report_flags(paths),
                "--pass-env=DPAUDIT_HOSTILE_TAG", *extra])
    rec = check_reports(paths)
    left = wait_until_no_tagged(arena["tag"])
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, f"processes left behind: {left}"
    return int(code), rec


def contained(code: int, rec: dict) -> None:
    assert (code, rec["verdict"], rec["error"]) == (0, "not_refuted", None), rec["error"]


# -- escape 1: the working folder --------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("name", ["token", "random", "typing"])
def test_a_module_planted_in_the_working_folder_never_runs_in_the_child(arena, name):
    marker = arena["tmp"] / f"planted-{name}-ran"
    plant(arena["work"], name, marker)
    code, rec = check(arena, Case(f"beside_{name}", _f(LAPLACE), 0, "not_refuted"))
    assert not marker.exists(), f"the planted {name}.py ran: {marker.read_text()!r}"
    contained(code, rec)


@pytest.mark.slow
def test_python_m_dpaudit_imports_nothing_from_the_working_folder(arena):
    markers = {name: arena["tmp"] / f"planted-{name}-ran" for name in ("jinja2", "typing", "numpy")}
    for name, marker in markers.items():
        plant(arena["work"], name, marker)
    path = mechanism_file(arena, Case("plain", _f(LAPLACE), 0, "not_refuted"))
    paths = reports(arena["tmp"])
    # dpaudit's start-up and its reports (jinja2) are the subject; the replay stage only runs
    # dpaudit's own modules, well after the working folder left the import path
    done = subprocess.run([sys.executable, "-m", "dpaudit", "check", f"{path}:f", *FLAGS,
                           "--no-replay", *report_flags(paths)], capture_output=True, text=True, timeout=120,
                          cwd=arena["work"], env=dict(os.environ, PYTHONPATH=str(ROOT)))
    ran = {name: m.read_text() for name, m in markers.items() if m.exists()}
    assert not ran, f"planted modules ran in dpaudit: {ran}"
    assert done.returncode == 0, done.stderr
    assert check_reports(paths)["verdict"] == "not_refuted"
    assert not wait_until_no_tagged(arena["tag"])


def test_before_isolation_the_child_imports_the_standard_library_only(tmp_path):
    """What the child's first code and dpaudit's child and isolation modules import before
    :func:`isolation.enter`: no numpy, no other dpaudit module, nothing outside the standard
    library (beyond what Python's own start-up imported)."""
    import sysconfig

    from dpaudit.execution.sandbox import _BOOT  # private: the child's first code, whose imports are checked

    boot = _BOOT.rsplit("from dpaudit.execution.child", 1)[0]
    show = "import sys; print(repr({m: getattr(v, '__file__', None) for m, v in " \
           "list(sys.modules.items())}))"
    listed = {}
    for name, code in (("python", ""), ("child", boot + "import dpaudit.execution.child, "
                                         "dpaudit.execution.isolation; ")):
        done = subprocess.run([sys.executable, "-I", "-c", code + show, "0", "1", str(ROOT)],
                              capture_output=True, text=True, cwd=tmp_path, timeout=60)
        assert done.returncode == 0, done.stderr
        listed[name] = ast.literal_eval(done.stdout)
    stdlib = tuple(os.path.realpath(sysconfig.get_paths()[k]) + os.sep
                   for k in ("stdlib", "platstdlib"))
    ours = {"dpaudit", "dpaudit.execution", "dpaudit.execution.child",
            "dpaudit.execution.isolation", "dpaudit.execution.seccomp",
            "dpaudit.execution.syscalls", "dpaudit.execution.shares"}  # shares: isolation's read rules
    added = {m: f for m, f in listed["child"].items() if m not in listed["python"]}
    assert not {m for m in added if m.split(".")[0] in ("numpy", "scipy")}
    assert {m for m in added if m.split(".")[0] == "dpaudit"} <= ours
    foreign = {m: f for m, f in added.items() if m.split(".")[0] != "dpaudit" and f is not None
               and not os.path.realpath(f).startswith(stdlib)}
    assert not foreign, f"imported before isolation from outside the standard library: {foreign}"


@pytest.mark.slow
def test_the_child_runs_isolated_from_the_working_folder_without_privileges(arena):
    body = ONCE + indent(dedent("""\
        import sys
        status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
        for key in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
            if int(status[key], 16) != 0:
                raise RuntimeError(f"{key} is {status[key].strip()}")
        if status["NoNewPrivs"].strip() != "1":
            raise RuntimeError("no-new-privileges is not set")
        work = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "work")
        if not sys.flags.isolated or "" in sys.path or work in sys.path:
            raise RuntimeError(f"the import path holds the working folder: {sys.path}")
        if os.path.realpath(os.getcwd()) != os.path.realpath(os.path.dirname(os.environ["TMPDIR"])):
            raise RuntimeError(f"the child works in {os.getcwd()}")
        """), "    ") + LAPLACE
    # the child's state is the same whichever stage calls f first: the replay stage runs in the
    # same child, so it is left out
    contained(*check(arena, Case("state_of_the_child", _f(body), 0, "not_refuted"), "--no-replay"))


# -- escapes 3 and 4: the kernel and dpaudit's own process -------------------------------------

#: helpers for the mechanism: ``refused(what, call)`` raises unless ``call()`` fails with EPERM
REFUSED = dedent("""\
    import errno, fcntl, resource, stat
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    NR = {"x86_64": {"perf_event_open": 298, "bpf": 321},
          "aarch64": {"perf_event_open": 241, "bpf": 280}}.get(os.uname().machine, {})

    def c(result):
        if result < 0:
            raise OSError(ctypes.get_errno(), "failed")
        return result

    def refused(what, call):
        try:
            call()
        except OSError as exc:
            if exc.errno == errno.EPERM:
                return
            raise RuntimeError(f"{what} failed with {errno.errorcode.get(exc.errno, exc.errno)}, "
                               f"not EPERM")
        raise RuntimeError(f"{what} succeeded")

    def perf_event_open():  # CPU-wide: every process's samples on CPU 0
        attr = bytearray(128)
        attr[0:8] = (1).to_bytes(4, "little") + (128).to_bytes(4, "little")  # software, size
        buf = (ctypes.c_char * 128).from_buffer(attr)
        return c(libc.syscall(NR["perf_event_open"], buf, -1, 0, -1, 0))

    def bpf():  # BPF_MAP_CREATE of a one-entry array
        attr = bytearray(72)
        attr[0:16] = b"".join(k.to_bytes(4, "little") for k in (2, 4, 4, 1))
        buf = (ctypes.c_char * 72).from_buffer(attr)
        return c(libc.syscall(NR["bpf"], 0, buf, 72))

    def in_a_fork(call):  # a process of one thread (unshare of a user namespace needs one)
        pid = os.fork()
        if pid == 0:
            try:
                call()
                os._exit(0)
            except OSError as exc:
                os._exit(exc.errno or 255)
            except BaseException:
                os._exit(255)
        code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        if code:
            raise OSError(code, "failed in a forked process")

    def chattr():  # FS_IOC_SETFLAGS with the flags the file has (chattr +i needs the same call)
        path = os.path.join(os.environ["TMPDIR"], "flags")
        fd = os.open(path, os.O_RDONLY | os.O_CREAT, 0o600)
        try:
            try:
                flags = fcntl.ioctl(fd, 0x80086601, bytes(8))
            except OSError:
                flags = bytes(8)
            fcntl.ioctl(fd, 0x40086602, flags)
        finally:
            os.close(fd)
    """)

KERNEL = {
    "perf_event_open": "perf_event_open()",
    "bpf": "bpf()",
    "sethostname": "c(libc.sethostname(socket.gethostname().encode(), "
                   "len(socket.gethostname().encode())))",
    "mknod_char_device": "os.mknod(os.path.join(os.environ['TMPDIR'], 'kmsg'), "
                         "stat.S_IFCHR | 0o600, os.makedev(1, 11))",
    "ioctl_setflags": "chattr()",
    "unshare_user_namespace": "in_a_fork(lambda: c(libc.unshare(0x10000000)))",
    # dpaudit's own process: its limits, its priority, its CPUs, its scheduling (each set to what
    # it is, so that a leak harms nothing), and other processes' priorities
    "prlimit_parent": "resource.prlimit(os.getppid(), resource.RLIMIT_CPU)",
    "getpriority_parent": "os.getpriority(os.PRIO_PROCESS, os.getppid())",
    "setpriority_parent": "os.setpriority(os.PRIO_PROCESS, os.getppid(), "
                          "int(os.environ['DPAUDIT_HOSTILE_NICE']))",
    "sched_setaffinity_parent": "os.sched_setaffinity(os.getppid(), os.sched_getaffinity(0))",
    "sched_setscheduler_parent": "os.sched_setscheduler(os.getppid(), "
                                 "int(os.environ['DPAUDIT_HOSTILE_POLICY']), os.sched_param(0))",
}


def refusing(name: str, call: str) -> Case:
    body = ONCE + f"    refused({name!r}, lambda: {call})\n" + LAPLACE
    return Case(f"refused_{name}", _f(body, REFUSED), 0, "not_refuted")


@pytest.mark.slow
@needs_seccomp
@pytest.mark.parametrize("name", [n if n in ("bpf", "unshare_user_namespace", "prlimit_parent")  # one of each kind fast
                                  else pytest.param(n, marks=pytest.mark.slow) for n in sorted(KERNEL)])
def test_calls_at_the_kernel_or_at_dpaudit_fail_with_eperm(arena, monkeypatch, name):
    monkeypatch.setenv("DPAUDIT_HOSTILE_NICE", str(os.getpriority(os.PRIO_PROCESS, 0)))
    monkeypatch.setenv("DPAUDIT_HOSTILE_POLICY", str(os.sched_getscheduler(0)))
    code, rec = check(arena, refusing(name, KERNEL[name]), "--pass-env=DPAUDIT_HOSTILE_NICE",
                      "--pass-env=DPAUDIT_HOSTILE_POLICY")
    contained(code, rec)


# -- the audit hook ----------------------------------------------------------------------------

SILENCE_THE_HOOK = dedent("""\
    import gc
    from dpaudit.execution import isolation as iso

    def attempt(change):
        try:
            change()
        except Exception:
            pass

    def noop(*args, **kwargs):
        return None

    for obj in gc.get_objects():
        if isinstance(obj, iso.Attempts):
            attempt(lambda: setattr(obj, "active", False))
            attempt(lambda: obj.take())
            attempt(lambda: obj.__dict__.clear())
            attempt(lambda: setattr(obj, "take", noop))
            for name in ("tried", "_kept"):
                attempt(lambda: getattr(obj, name).clear())
                attempt(lambda: delattr(obj, name))
        if callable(obj) and getattr(getattr(obj, "__code__", None), "co_filename", "") == iso.__file__:
            hook = getattr(obj, "__func__", obj)
            attempt(lambda: setattr(hook, "__code__", noop.__code__))
            attempt(lambda: setattr(hook, "__defaults__", None))
            attempt(lambda: setattr(hook, "__kwdefaults__", None))
            attempt(lambda: (hook.__kwdefaults__ or {}).clear())
    for name in ("take", "_hook", "_note", "install"):
        attempt(lambda: setattr(iso.Attempts, name, noop))
    for name in ("os", "_resolve", "_EVENTS", "describe_attempt"):
        attempt(lambda: setattr(iso, name, None))
    """)


@pytest.mark.slow
def test_the_hook_that_names_blocked_attempts_cannot_be_switched_off(arena):
    target = f"/tmp/dpaudit-hostile-hook-{arena['tag'][:8]}"
    # silenced before the write, and once more after it (the child's own copy of what it tried)
    body = ONCE + indent(SILENCE_THE_HOOK + f"try:\n    open({target!r}, 'w')\n"
                         "except OSError:\n    pass\n" + SILENCE_THE_HOOK, "    ") + LAPLACE
    if ABI < 1:
        pytest.skip("the kernel has no Landlock: the write is not blocked, so nothing is named")
    try:
        code, rec = check(arena, Case("silences_the_hook", _f(body), 3, "error"))
    finally:
        if os.path.exists(target):
            os.remove(target)
    assert (code, rec["verdict"]) == (6, "error"), rec["error"]
    assert f"tried to write {target} (blocked by the sandbox" in rec["error"], rec["error"]


@pytest.mark.slow
def test_closing_the_hooks_pipe_is_an_error(arena):
    if ABI < 1:
        pytest.skip("the kernel has no Landlock: the child has no audit hook")
    body = ONCE + indent(dedent("""\
        import gc
        from dpaudit.execution import isolation as iso
        for obj in gc.get_objects():
            code = getattr(obj, "__code__", None)
            if getattr(code, "co_filename", "") == iso.__file__ and code.co_name == "hook":
                names = code.co_varnames[code.co_argcount - len(obj.__defaults__):]
                os.close(obj.__defaults__[names.index("_channel")])
        """), "    ") + LAPLACE
    code, rec = check(arena, Case("closes_the_hooks_pipe", _f(body), 3, "error"))
    assert (code, rec["verdict"]) == (6, "error"), rec["error"]
    assert "closed the channel that names its blocked attempts" in rec["error"], rec["error"]


def test_the_hook_refuses_a_new_code_for_its_functions():
    attempts = isolation.Attempts(["/usr"], ["/tmp/x"], ["/dev/null"])
    hook = attempts._hook
    before = hook.__code__
    # the hook is not installed here (an audit hook cannot be removed): call it as Python would
    with pytest.raises(RuntimeError, match="may not be changed"):
        hook("object.__setattr__", (hook, "__code__", (lambda e, a: None).__code__))
    with pytest.raises(RuntimeError, match="may not be changed"):
        hook("object.__setattr__", (isolation._resolve, "__defaults__", None))
    with pytest.raises(RuntimeError, match="may not be changed"):
        hook("object.__delattr__", (hook, "__defaults__"))  # what `hook.__defaults__ = None` raises
    with pytest.raises(RuntimeError, match="may not be changed"):
        hook("object.__setattr__", (isolation.Attempts, "take", None))
    hook("object.__setattr__", (test_the_hook_refuses_a_new_code_for_its_functions, "__code__", 0))
    assert hook.__code__ is before and hook.__kwdefaults__ is None  # all its state in a tuple
    hook("open", ("/etc/shadow-x", "w", 0))
    assert attempts.take() == "tried to write /etc/shadow-x" and attempts.take() is None


# -- the seccomp filter, instruction by instruction --------------------------------------------

def _run_bpf(prog, nr: int, arch: int, args=(0, 0, 0, 0, 0, 0)) -> int:
    """What the classic BPF ``prog`` returns for a call (a small interpreter of the opcodes the
    filter uses: ld word, jeq, jge, jset, ja, ret)."""
    import struct

    data = struct.pack("=iIQ6Q", nr, arch, 0, *[a & (2 ** 64 - 1) for a in args])
    acc, pc = 0, 0
    while True:
        code, jt, jf, k = prog[pc]
        if code == 0x20:
            acc, pc = struct.unpack_from("=I", data, k)[0], pc + 1
        elif code == 0x06:
            return k
        elif code == 0x05:
            pc += 1 + k
        else:
            taken = {0x15: acc == k, 0x35: acc >= k, 0x45: bool(acc & k)}[code]
            pc += 1 + (jt if taken else jf)


@pytest.mark.parametrize("machine,arch", [("x86_64", 0xC000003E), ("aarch64", 0xC00000B7)])
def test_the_seccomp_filter_allows_what_python_needs_and_refuses_the_rest(machine, arch):
    from dpaudit.execution import seccomp, syscalls  # private: _ALLOW, the allow-list checked

    table = dict(syscalls.NEWER, **getattr(syscalls, machine.upper()))
    me, other = 4321, 999
    prog = isolation.seccomp_program(machine, me)
    assert len(prog) < 4096 and all(0 <= jt < 256 and 0 <= jf < 256 for _, jt, jf, _ in prog)
    allow, eperm, enosys = 0x7FFF0000, 0x00050000 | errno.EPERM, 0x00050000 | errno.ENOSYS

    def verdict(name, *args):
        return _run_bpf(prog, table[name], arch, args + (0,) * (6 - len(args)))

    for name in ("read", "write", "openat", "mmap", "munmap", "futex", "clone", "rt_sigaction",
                 "getrandom", "sched_getaffinity", "prlimit64", "madvise", "exit_group"):
        assert verdict(name) == allow, name
    forbidden = """perf_event_open bpf mknod mknodat reboot kexec_load kexec_file_load init_module
        finit_module delete_module sethostname setdomainname mount umount2 move_mount open_tree
        fsopen fsmount pivot_root chroot swapon swapoff unshare setns open_by_handle_at
        name_to_handle_at process_vm_readv process_vm_writev ptrace userfaultfd kcmp keyctl add_key
        request_key shmget msgget semget socket socketpair io_uring_setup io_uring_enter setsid
        setpgid acct quotactl clock_settime settimeofday syslog iopl ioperm pidfd_getfd
        personality setuid setgid setresuid capset migrate_pages move_pages fanotify_init""".split()
    for name in forbidden:
        if name in table:
            assert name not in seccomp._ALLOW and verdict(name) == eperm, name
    assert verdict("clone3") == enosys and _run_bpf(prog, 4000, arch) == enosys
    assert _run_bpf(prog, table["read"], 0x40000003) == eperm  # another architecture
    if machine == "x86_64":
        assert _run_bpf(prog, 0x40000000 | table["read"], arch) == eperm  # the x32 ABI
    # a pid argument: the child itself only (0 or its pid, no high bits)
    for name in ("prlimit64", "sched_setaffinity", "sched_setscheduler", "sched_setattr",
                 "sched_getparam"):
        assert (verdict(name, 0), verdict(name, me)) == (allow, allow), name
        assert verdict(name, other) == verdict(name, me | 1 << 32) == eperm, name
    for name, which in (("setpriority", 0), ("getpriority", 0), ("ioprio_set", 1)):
        assert verdict(name, which, 0) == verdict(name, which, me) == allow, name
        assert verdict(name, which, other) == verdict(name, which + 1, 0) == eperm, name
    assert verdict("clone", 0x01200011) == allow  # fork
    for flag in (0x10000000, 0x20000000, 0x40000000, 0x00020000, 0x08000000):  # CLONE_NEW*
        assert verdict("clone", 0x01200011 | flag) == eperm
    assert verdict("kill", -1, 9) == eperm and verdict("kill", other, 9) == allow
    for request in (0x40086602, 0x40046602, 0x401C5820, 0x5412):
        assert verdict("ioctl", 3, request) == eperm and verdict("ioctl", 3, 1 << 32 | request) == eperm
    assert verdict("ioctl", 1, 0x5401) == allow  # TCGETS: isatty


def _capabilities() -> int:
    """This process's effective and bounding capabilities (0: none at all)."""
    with open("/proc/self/status") as fh:
        status = dict(line.split(":", 1) for line in fh.read().splitlines())
    return int(status["CapEff"], 16) | int(status["CapBnd"], 16)


# -- end to end, every capability dropped --------------------------------------------------------

@pytest.mark.slow
@needs_seccomp
@pytest.mark.skipif(shutil.which("setpriv") is None, reason="setpriv (util-linux) is not installed")
def test_contained_end_to_end_with_every_capability_dropped(arena):
    marker = arena["tmp"] / "planted-token-ran"
    plant(arena["work"], "token", marker)
    plant(arena["work"], "jinja2", marker)
    checks = ONCE + "".join(f"    refused({n!r}, lambda: {KERNEL[n]})\n" for n in (
        "perf_event_open", "getpriority_parent", "sched_setaffinity_parent"))
    # the attack itself: a CPU limit of 1 s on dpaudit killed it (exit 137, no report)
    checks += "    refused('prlimit_parent', lambda: resource.prlimit(os.getppid(), " \
              "resource.RLIMIT_CPU, (1, 1)))\n"
    checks += "    refused('prlimit_fsize', lambda: resource.prlimit(os.getppid(), " \
              "resource.RLIMIT_FSIZE, (0, 0)))\n"
    path = mechanism_file(arena, Case("dropped", _f(checks + LAPLACE, REFUSED), 0, "not_refuted"))
    paths = reports(arena["tmp"])
    cmd = [sys.executable, "-m", "dpaudit", "check", f"{path}:f", *FLAGS, *report_flags(paths),
           "--pass-env=DPAUDIT_HOSTILE_TAG"]
    if _capabilities():  # else this run already has none (setpriv could not drop any more)
        cmd = ["setpriv", "--inh-caps=-all", "--bounding-set=-all", "--ambient-caps=-all", "--",
               *cmd]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=arena["work"],
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert not marker.exists(), f"a planted module ran: {marker.read_text()!r}"
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
    rec = check_reports(paths)
    assert (rec["verdict"], rec["error"]) == ("not_refuted", None)
    assert not wait_until_no_tagged(arena["tag"])
