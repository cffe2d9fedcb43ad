"""The sandbox child's kernel boundary: what it may change, read and learn outside its folders.

* **Metadata**: ``chmod``, ``utime``, ``chown`` and extended attributes, by every system call that
  reaches them, fail with ``EPERM`` whatever the path, and the file is left as it was (a child once
  set the setuid bit on a root-owned file and made a 0600 secret world-readable, exit 0). The
  same call through Python is named in the ERROR as what the kernel refused.
* **Moves and links** out of the private folder fail (Landlock), and through Python are named.
* **The report and working folders** keep their mode: dpaudit still writes every report.
* **/etc** is readable only by name (what Python, numpy and scipy need), never a runner's config.
* **Other processes**: nothing of ``/proc/N`` beyond its existence.

Every mechanism calls the C library directly (``ctypes``, no audit event), so what is checked is
the kernel's answer; the file's own ``stat`` before and after is the evidence that nothing changed.
"""

from __future__ import annotations

import os
import sys
import uuid
from textwrap import dedent, indent

import pytest

from dpaudit.execution import seccomp, syscalls  # private: _DENY/_ALLOW, the rules checked
from dpaudit.execution.isolation import landlock_abi
from .cases import LAPLACE, ONCE, Case, _f
from .test_hostile import arena  # noqa: F401 - the fixture
from .test_isolation_escapes import _run_bpf, check, contained

ABI = landlock_abi()
MACHINE = os.uname().machine
needs_sandbox = pytest.mark.skipif(
    ABI < 1 or MACHINE not in ("x86_64", "aarch64"),
    reason=f"needs Landlock (ABI {ABI} here) and a seccomp table for {MACHINE}")

#: this machine's syscall numbers, written into the mechanism (it calls each one by number)
NR = dict(syscalls.NEWER, **getattr(syscalls, MACHINE.upper(), {}))

#: helpers of the mechanism: ``outcome(name, *args)`` is the errno name a raw system call gave
KERNEL = dedent(f"""\
    import errno, stat
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    NR = {NR!r}
    AT_FDCWD = ctypes.c_long(-100)

    def outcome(name, *args):
        if name not in NR:
            return "absent"
        if libc.syscall(ctypes.c_long(NR[name]), *args) < 0:
            return errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))
        return "succeeded"

    def expect(results, wanted):
        bad = {{k: v for k, v in results.items() if v not in wanted and v != "absent"}}
        if bad:
            raise RuntimeError(f"not refused: {{bad}}")
    """)

#: every system call that changes a file's mode, times, owner or extended attributes: on each
#: path of DPAUDIT_HOSTILE_TARGETS, and on a read-only descriptor of the first (a file it may read:
#: fchmod needs no write access)
METADATA_CALLS = dedent("""\
    uid, gid = os.getuid(), os.getgid()
    x, v = b"user.dpaudit", b"1"
    results = {}
    for n, T in enumerate(os.environ["DPAUDIT_HOSTILE_TARGETS"].encode().split(b":")):
        results.update({(n, k): r for k, r in {
            "chmod": outcome("chmod", T, 0o4777),
            "fchmodat": outcome("fchmodat", AT_FDCWD, T, 0o4777),
            "fchmodat2": outcome("fchmodat2", AT_FDCWD, T, 0o4777, 0),
            "utime": outcome("utime", T, None),
            "utimes": outcome("utimes", T, None),
            "utimensat": outcome("utimensat", AT_FDCWD, T, None, 0),
            "futimesat": outcome("futimesat", AT_FDCWD, T, None),
            "chown": outcome("chown", T, uid, gid),
            "lchown": outcome("lchown", T, uid, gid),
            "fchownat": outcome("fchownat", AT_FDCWD, T, uid, gid, 0),
            "setxattr": outcome("setxattr", T, x, v, 1, 0),
            "lsetxattr": outcome("lsetxattr", T, x, v, 1, 0),
            "removexattr": outcome("removexattr", T, x),
            "lremovexattr": outcome("lremovexattr", T, x),
        }.items()})
        if n == 0:
            fd = libc.open(T, os.O_RDONLY)
            if fd < 0:
                raise RuntimeError(f"could not open {T} to read")
            results.update({
                "fchmod": outcome("fchmod", fd, 0o4777),
                "futimens": outcome("utimensat", fd, None, None, 0),
                "fchmodat2_empty_path": outcome("fchmodat2", fd, b"", 0o4777, 0x1000),
                "fchown": outcome("fchown", fd, uid, gid),
                "fsetxattr": outcome("fsetxattr", fd, x, v, 1, 0),
                "fremovexattr": outcome("fremovexattr", fd, x),
            })
            os.close(fd)
    expect(results, ("EPERM",))
    """)


#: ``call`` on T, its error swallowed: only the hook can name it
SWALLOWED = "T = os.environ['DPAUDIT_HOSTILE_TARGET']\ntry:\n    {call}\nexcept OSError:\n" \
    "    pass\n"



#: the sandboxed body of the read-rule tests: every DENIED path refused (EACCES), every NEEDED one opened
OPENS_DENIED_AND_NEEDED = """\
    def opens(path):
        fd = libc.open(path.encode(), os.O_RDONLY)
        if fd < 0:
            return errno.errorcode.get(ctypes.get_errno(), "?")
        os.close(fd)
        return "succeeded"
    expect({p: opens(p) for p in os.environ["DPAUDIT_HOSTILE_DENIED"].split(":")}, ("EACCES",))
    expect({p: opens(p) for p in os.environ["DPAUDIT_HOSTILE_NEEDED"].split(":")},
           ("succeeded",))
    """

def _facts(path) -> tuple:
    st = os.lstat(path)
    return st.st_mode, st.st_uid, st.st_gid, st.st_mtime_ns, st.st_ctime_ns


def _target(arena, name: str = "secret.txt", mode: int = 0o600, where: str = "outside"):
    """A file owned by whoever runs the test (the child's user) outside the child's folders, or in
    the working folder (``where="work"``: the child may read it, not write it)."""
    folder = arena["work"] if where == "work" else arena["tmp"] / where
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text("private")
    path.chmod(mode)
    os.utime(path, ns=(10**18, 10**18))
    return path


def _in_sandbox(arena, monkeypatch, name: str, body: str, head: str = KERNEL, **env: str):
    """``dpaudit check`` of a mechanism running ``body`` once in the child; (exit code, record).
    Without the replay stage: it would run ``body`` first, in the same child, and its ERROR lets
    the sampling go on (where ``body`` does not run again), so a failed ``expect`` would pass."""
    for key, value in env.items():
        monkeypatch.setenv(key, str(value))
    source = _f(ONCE + indent(dedent(body), "    ") + LAPLACE, head)
    return check(arena, Case(name, source, 0, "not_refuted"), "--no-replay",
                 *(f"--pass-env={key}" for key in env))


# -- the filter, instruction by instruction: metadata calls are refused on both architectures ----

METADATA = """chmod fchmod fchmodat fchmodat2 utime utimes utimensat futimesat chown fchown lchown
    fchownat setxattr lsetxattr fsetxattr removexattr lremovexattr fremovexattr""".split()


@pytest.mark.parametrize("machine,arch", [("x86_64", 0xC000003E), ("aarch64", 0xC00000B7)])
def test_the_filter_refuses_every_metadata_change_with_eperm(machine, arch):
    table = dict(syscalls.NEWER, **getattr(syscalls, machine.upper()))
    prog = seccomp.seccomp_program(machine, 4321)
    present = [name for name in METADATA if name in table]
    assert {"fchmod", "fchmodat", "fchmodat2", "utimensat", "fchownat", "setxattr"} <= set(present)
    wrong = {name: hex(_run_bpf(prog, table[name], arch)) for name in present
             if _run_bpf(prog, table[name], arch) != 0x00050000 | 1}  # SECCOMP_RET_ERRNO | EPERM
    assert not wrong, f"not refused with EPERM: {wrong}"
    assert not set(METADATA) & seccomp._ALLOW


def test_before_landlock_abi_3_truncate_by_path_is_refused_too():
    """Landlock covers truncate(2) from ABI 3 only: below it the filter refuses it by path."""
    table, arch = dict(syscalls.NEWER, **syscalls.X86_64), 0xC000003E
    default = seccomp.seccomp_program("x86_64", 4321)
    old_kernel = seccomp.seccomp_program("x86_64", 4321, deny=("truncate",))
    assert _run_bpf(default, table["truncate"], arch) == 0x7FFF0000
    assert _run_bpf(old_kernel, table["truncate"], arch) == 0x00050000 | 1
    assert _run_bpf(old_kernel, table["ftruncate"], arch) == 0x7FFF0000


def test_the_hook_names_what_the_kernel_refuses_and_only_that(tmp_path):
    """Mode, owner, times and attributes of a file outside the private folder: named when seccomp
    is in force (it refuses them all), never without it; a removal, move or link: when an end is
    outside the private folder, judged on the entry itself, not where a symbolic link leads."""
    from dpaudit.execution import isolation  # private: the hook, called as Python would

    mine = tmp_path / "private"
    mine.mkdir()
    (mine / "link").symlink_to("/etc/hostname")
    attempts = isolation.Attempts(["/usr"], [str(mine)], ["/dev/null"])
    hook = attempts._hook

    def said(event, *args):
        hook(event, args)
        return attempts.take()

    assert said("os.chmod", str(mine / "f"), 0o600, None) is None  # refused, nothing at stake
    assert said("os.utime", str(mine / "link"), None, None, None) == \
        "tried to change the times of " + str(mine / "link")  # the file it leads to is outside
    assert said("os.chown", "/etc/hostname", 0, 0, None) == \
        "tried to change the owner of /etc/hostname"
    assert said("os.utime", b"/etc/hostname", None, None, None) == \
        "tried to change the times of /etc/hostname"
    assert said("os.setxattr", "/x", "user.a", b"1", 0) == \
        "tried to change the extended attributes of /x"
    with open(mine / "f", "w") as fh:
        assert said("os.chmod", fh.fileno(), 0o600, None) is None
    outside = tmp_path / "outside"
    outside.write_text("x")
    with open(outside) as fh:
        assert said("os.chmod", fh.fileno(), 0o600, None) == \
            f"tried to change the mode of {os.path.realpath(outside)}"
    assert said("os.remove", str(mine / "link"), None) is None
    assert said("os.rename", str(mine / "link"), str(mine / "moved"), None, None) is None
    assert said("os.rename", str(mine / "link"), "/tmp/x", None, None) == \
        f"tried to move {mine}/link to /tmp/x"
    assert said("os.link", "/etc/hostname", str(mine / "h"), None, None) == \
        f"tried to link /etc/hostname to {mine}/h"
    assert said("os.symlink", "/etc/hostname", str(mine / "s"), None) is None
    assert said("os.symlink", str(mine), "/tmp/s", None) == "tried to make a symbolic link /tmp/s"
    unfiltered = isolation.Attempts(["/usr"], [str(mine)], ["/dev/null"], metadata_refused=False)
    unfiltered._hook("os.chmod", ("/etc/hostname", 0o600, None))
    assert unfiltered.take() is None


# -- escape: metadata outside the sandbox ------------------------------------------------------

@pytest.mark.slow
@needs_sandbox
def test_no_system_call_changes_a_files_mode_times_owner_or_attributes(arena, monkeypatch):
    targets = [_target(arena, "setup.py", 0o644, "work"), _target(arena)]
    before = [_facts(t) for t in targets]
    code, rec = _in_sandbox(arena, monkeypatch, "changes_metadata", METADATA_CALLS,
                            DPAUDIT_HOSTILE_TARGETS=":".join(map(str, targets)))
    assert [_facts(t) for t in targets] == before, "the child changed a file's metadata"
    contained(code, rec)


@needs_sandbox
@pytest.mark.parametrize("what,call", [
    ("mode", "os.chmod(T, 0o4777)"),
    pytest.param("times", "os.utime(T, (0, 0))", marks=pytest.mark.slow),
    pytest.param("owner", "os.chown(T, os.getuid(), os.getgid())", marks=pytest.mark.slow),
    pytest.param("extended attributes", "os.setxattr(T, 'user.dpaudit', b'1')",
                 marks=pytest.mark.slow),
])
def test_a_metadata_change_through_python_is_named_as_refused(arena, monkeypatch, what, call):
    """The hook names what the kernel refused, and only that: ``os.chmod`` was once named
    "blocked" while the change was made."""
    target = _target(arena)
    before = _facts(target)
    body = SWALLOWED.format(call=call)
    code, rec = _in_sandbox(arena, monkeypatch, "python_metadata", body,
                            DPAUDIT_HOSTILE_TARGET=target)
    assert _facts(target) == before, "the child changed the file's metadata"
    assert (code, rec["verdict"]) == (6, "error"), rec["error"]
    assert f"tried to change the {what} of {target} (blocked by the sandbox: landlock" \
        in rec["error"], rec["error"]


@pytest.mark.slow  # a faster test of the same rule runs in the fast subset
@needs_sandbox
def test_fchmod_of_a_file_in_its_own_folder_is_refused_too(arena, monkeypatch):
    """The kernel cannot tell a descriptor of a file in the private folder from a read-only one of
    a file elsewhere (``fchmod`` needs no write access), so both are refused; in its own folder,
    where nothing outside is at stake, the refusal is not an ERROR: ``Path.touch`` (which tries
    ``utime`` first) still creates a file there."""
    body = """\
        import pathlib
        path = os.path.join(os.environ["TMPDIR"], "mine")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
        expect({"fchmod": outcome("fchmod", fd, 0o644),
                "chmod": outcome("chmod", path.encode(), 0o644)}, ("EPERM",))
        try:
            os.fchmod(fd, 0o644)
        except OSError:
            pass
        else:
            raise RuntimeError("os.fchmod succeeded")
        pathlib.Path(os.environ["TMPDIR"], "touched").touch()
        if stat.S_IMODE(os.stat(path).st_mode) != 0o600:
            raise RuntimeError("the mode changed")
        """
    contained(*_in_sandbox(arena, monkeypatch, "fchmod_own_file", body))


@needs_sandbox
def test_the_report_and_working_folders_keep_their_mode_and_every_report_is_written(
        arena, monkeypatch):
    """A child that makes the folder of the reports (or the working folder) unwritable: every
    report is still written, both folders are as they were."""
    folders = [arena["tmp"], arena["work"]]
    before = [_facts(f)[:3] for f in folders]  # its times change: the reports are written there
    body = """\
        for folder in (os.environ["DPAUDIT_HOSTILE_REPORTS"], os.environ["DPAUDIT_HOSTILE_WORK"]):
            expect({"chmod": outcome("chmod", folder.encode(), 0),
                    "fchmodat": outcome("fchmodat", AT_FDCWD, folder.encode(), 0),
                    "utimes": outcome("utimes", folder.encode(), None)}, ("EPERM",))
            try:
                os.chmod(folder, 0)
            except OSError:
                pass
        """
    try:
        code, rec = _in_sandbox(arena, monkeypatch, "chmods_report_folder", body,
                                DPAUDIT_HOSTILE_REPORTS=arena["tmp"],
                                DPAUDIT_HOSTILE_WORK=arena["work"])  # check() read every report
    finally:
        for folder in folders:
            folder.chmod(0o755) if not os.access(folder, os.W_OK) else None
    assert [_facts(f)[:3] for f in folders] == before
    assert (code, rec["verdict"]) == (6, "error"), rec["error"]
    assert f"tried to change the mode of {arena['tmp']} (blocked" in rec["error"], rec["error"]


@pytest.mark.slow  # a faster test of the same rule runs in the fast subset
@needs_sandbox
def test_no_move_or_link_crosses_the_private_folder(arena, monkeypatch):
    """Landlock refuses a move or hard link into or out of the private folder (a hard link of a
    file it may not read, then read in its own folder, would bypass the read rules)."""
    target = _target(arena)
    outside = target.parent
    before = sorted(os.listdir(outside)), _facts(target)
    body = """\
        T = os.environ["DPAUDIT_HOSTILE_TARGET"].encode()
        out = os.path.dirname(T)
        mine = os.path.join(os.environ["TMPDIR"], "mine").encode()
        os.close(os.open(mine, os.O_WRONLY | os.O_CREAT, 0o600))
        here = os.path.join(os.environ["TMPDIR"], "here").encode()
        expect({"rename_in": outcome("renameat2", AT_FDCWD, T, AT_FDCWD, here, 0),
                "rename_out": outcome("renameat2", AT_FDCWD, mine, AT_FDCWD, out + b"/moved", 0),
                "exchange": outcome("renameat2", AT_FDCWD, mine, AT_FDCWD, T, 2),
                "link_in": outcome("linkat", AT_FDCWD, T, AT_FDCWD, here, 0),
                "link_etc_in": outcome("linkat", AT_FDCWD, b"/etc/hostname", AT_FDCWD, here, 0),
                "link_out": outcome("linkat", AT_FDCWD, mine, AT_FDCWD, out + b"/linked", 0),
                "symlink_out": outcome("symlinkat", b"/", AT_FDCWD, out + b"/sym")},
               ("EXDEV", "EACCES", "EPERM", "ENOENT"))
        if os.path.exists(here):
            raise RuntimeError("moved or linked a file into its folder")
        """
    code, rec = _in_sandbox(arena, monkeypatch, "moves_and_links", body,
                            DPAUDIT_HOSTILE_TARGET=target)
    assert (sorted(os.listdir(outside)), _facts(target)) == before
    contained(code, rec)


@needs_sandbox
@pytest.mark.parametrize("verb,call", [
    ("link", "os.link(T, os.path.join(os.environ['TMPDIR'], 'here'))"),
    pytest.param("move", "os.rename(T, os.path.join(os.environ['TMPDIR'], 'here'))",
                 marks=pytest.mark.slow),
])
def test_a_move_or_link_through_python_is_named(arena, monkeypatch, verb, call):
    target = _target(arena)
    body = SWALLOWED.format(call=call)
    code, rec = _in_sandbox(arena, monkeypatch, f"python_{verb}", body,
                            DPAUDIT_HOSTILE_TARGET=target)
    assert target.exists()
    assert (code, rec["verdict"]) == (6, "error"), rec["error"]
    assert f"tried to {verb} {target} to /" in rec["error"], rec["error"]


# -- escape: /etc is readable by name only ------------------------------------------------------

def _etc_secret():
    """A root-only runner config under /etc where the test may plant one (root), else None."""
    if not os.access("/etc", os.W_OK):
        return None
    folder = f"/etc/dpaudit-hostile-{uuid.uuid4().hex[:8]}"
    os.mkdir(folder, 0o700)
    path = os.path.join(folder, "config.toml")
    with open(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600), "w") as fh:
        fh.write('token = "glrt-hunter2"\n')
    return path


@pytest.mark.slow
@needs_sandbox
def test_etc_is_readable_only_by_name(arena, monkeypatch):
    """What Python needs of /etc opens; the rest does not, a planted root-only runner config
    (as root) and an ordinary world-readable file alike."""
    needed = [p for p in ("/etc/ld.so.cache", "/etc/localtime") if os.path.exists(p)]
    denied = [p for p in ("/etc/hostname", "/etc/hosts", "/etc/fstab", "/etc/shadow",
                          "/etc/ssh/sshd_config") if os.path.isfile(p)
              and os.path.realpath(p).startswith("/etc/")]  # not a link to a file under /usr
    secret = _etc_secret()
    denied += [secret] if secret else []
    assert needed and denied
    body = OPENS_DENIED_AND_NEEDED
    try:
        code, rec = _in_sandbox(arena, monkeypatch, "reads_etc", body,
                                DPAUDIT_HOSTILE_DENIED=":".join(denied),
                                DPAUDIT_HOSTILE_NEEDED=":".join(needed))
    finally:
        if secret:
            os.remove(secret)
            os.rmdir(os.path.dirname(secret))
    contained(code, rec)


@pytest.mark.slow  # scipy imported by every child the check starts
@needs_sandbox
def test_what_python_numpy_and_scipy_need_of_etc_is_readable(arena, monkeypatch):
    """The other side of the allow-list: numpy, scipy, the time zone, OpenSSL's hashes, the user
    database and the MIME types work in the child, and nothing is named. (scipy.stats, pandas,
    scikit-learn, statsmodels, diffprivlib, OpenDP and python-dp were traced by hand: their imports
    take longer than this suite's time limit allows under load.)"""
    head = dedent("""\
        import datetime, getpass, hashlib, locale, mimetypes, ssl, tempfile, time
        import scipy.linalg, scipy.special
        """)
    body = """\
        time.localtime(); datetime.datetime.now().astimezone(); hashlib.sha256(b"x").hexdigest()
        ssl.create_default_context(); getpass.getuser(); locale.setlocale(locale.LC_ALL, "")
        mimetypes.guess_type("x.csv"); float(scipy.special.ndtr(0.5)); tempfile.mkdtemp()
        """
    contained(*_in_sandbox(arena, monkeypatch, "needs_of_etc", body, head))


def test_the_read_roots_hold_no_other_entry_of_etc():
    from dpaudit.execution import isolation  # private: the allow-list checked

    roots = isolation.read_roots([])
    etc = {r for r in roots if r == "/etc" or r.startswith("/etc/")}
    allowed = {os.path.realpath(os.path.join("/etc", n)) for n in isolation.ETC_READABLE}
    assert etc <= allowed, sorted(etc - allowed)


# -- metadata probes: other processes ---------------------------------------------------------

@pytest.mark.slow
@needs_sandbox
def test_nothing_of_another_process_is_read_beyond_its_existence(arena, monkeypatch):
    """Of ``/proc/N`` (dpaudit's own process here) no file opens, no link reads (its working
    folder, its program, its open files), no folder lists; nor does ``/proc`` itself list. (Its
    existence, owner and start time, by ``stat``, Landlock cannot hide: docs/sandbox.md.)"""
    body = """\
        P = f"/proc/{os.getppid()}"
        def opens(path, flags=os.O_RDONLY):
            fd = libc.open(path.encode(), flags)
            if fd < 0:
                return errno.errorcode.get(ctypes.get_errno(), "?")
            os.close(fd)
            return "succeeded"
        def reads_link(path):
            buf = ctypes.create_string_buffer(4096)
            if libc.readlink(path.encode(), buf, 4096) < 0:
                return errno.errorcode.get(ctypes.get_errno(), "?")
            return "succeeded"
        results = {p: opens(P + p) for p in ("/environ", "/cmdline", "/status", "/maps", "/mem")}
        results.update({p: opens(p, os.O_RDONLY | os.O_DIRECTORY)
                        for p in ("/proc", P, P + "/fd", P + "/task")})
        results.update({p: reads_link(P + p) for p in ("/cwd", "/exe", "/root", "/fd/0",
                                                       "/ns/mnt")})
        expect(results, ("EACCES", "EPERM"))
        """
    contained(*_in_sandbox(arena, monkeypatch, "reads_other_process", body))


# -- escape: /opt and /sys are readable only where Python, its packages and numpy need them -------

@pytest.mark.slow
@needs_sandbox
@pytest.mark.skipif(not os.access("/opt", os.W_OK), reason="plants a runner's credentials in /opt")
def test_a_runners_credentials_under_opt_are_not_readable(arena, monkeypatch):
    """A self-hosted runner keeps its credentials under /opt (``/opt/actions-runner/.credentials``):
    a 0600 file there, owned by the child's own user (root here, so the mode alone does not stop
    it), does not open, nor does its folder list; of /sys, a file no CPU count needs does not open
    either, while what numpy and OpenBLAS read of it (the CPUs online) does."""
    folder = f"/opt/dpaudit-test-runner-{uuid.uuid4().hex[:8]}"
    os.mkdir(folder, 0o700)
    secret = os.path.join(folder, ".credentials")
    with open(os.open(secret, os.O_WRONLY | os.O_CREAT, 0o600), "w") as fh:
        fh.write('{"token": "AAAA-runner-secret"}\n')
    denied = [secret, folder]
    denied += [p for p in ("/sys/kernel/uevent_seqnum", "/sys/power/state", "/sys/block")
               if os.path.exists(p)]
    needed = [p for p in ("/sys/devices/system/cpu/online", "/sys/devices/system/cpu/possible")
              if os.path.exists(p)]
    assert needed
    body = OPENS_DENIED_AND_NEEDED
    try:
        code, rec = _in_sandbox(arena, monkeypatch, "reads_opt", body,
                                DPAUDIT_HOSTILE_DENIED=":".join(denied),
                                DPAUDIT_HOSTILE_NEEDED=":".join(needed))
    finally:
        os.remove(secret)
        os.rmdir(folder)
    contained(code, rec)
