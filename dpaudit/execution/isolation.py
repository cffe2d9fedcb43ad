"""Isolation of the sandbox child: what it may read, write, reach and start (Linux, unprivileged).

The child calls :func:`enter` before it imports the audited file. Three levels
(``dpaudit check --isolation``):

``strict`` (the default where the kernel has it)
    * **Landlock** (Linux ≥ 5.13; ABI 4 for TCP, ABI 6 for scopes): the child may read only the
      Python installation, the import path, the system folders, the working folder and the
      mechanism's own folder, and of ``/proc`` only its own entry and machine-wide facts (no
      other process's environment); it may write only its private folder (``TMPDIR``) and ``/dev/null``;
      it may execute no program; it may not bind or connect TCP ports, nor signal or connect to
      processes outside its own sandbox. The kernel interface is called directly through ctypes
      (three system calls, ``landlock(7)``).
    * **seccomp** (x86-64 and arm64): ``socket``, ``socketpair``, ``io_uring_setup`` (its
      requests bypass seccomp), ``setsid`` and ``setpgid`` fail with ``EPERM``, so there is no
      UDP or Unix-socket route out and no leaving the process group that dpaudit kills; so do
      System V IPC (``shmget``, ``msgget``, ``semget``, …) and the kernel keyring (``add_key``,
      ``keyctl``), whose objects outlive the child and are a channel to any process of the user.
    * Of ``/dev`` only :data:`DEVICES` (no terminal, no ``/dev/shm``), with no device ioctl.
``process``
    A separate process in its own session with a scrubbed environment and resource limits
    (address space, CPU time, open files, processes, file size), but full access to files and
    network. This is what ``strict`` falls back to where the kernel lacks Landlock; the record
    then says ``process only``.
``none``
    In dpaudit's own process (``--in-process``; trusted code only).

An audit hook (PEP 578) names what a mechanism *tried*: a write, read, socket, connection or
program start that the rules above deny is recorded, and the batch then fails with, e.g.,
``tried to write /home/u/x (blocked by the sandbox)`` even if the mechanism swallowed the error.
The hook only names; the kernel enforces.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct
import sys
from typing import Iterable, Optional, Sequence

__all__ = ["ISOLATION_LEVELS", "enter", "landlock_abi", "Attempts", "read_roots", "strict_available"]

ISOLATION_LEVELS = ("strict", "process", "none")

# -- Landlock (include/uapi/linux/landlock.h) ----------------------------------------------------
_SYS_CREATE, _SYS_ADD_RULE, _SYS_RESTRICT = 444, 445, 446   # the same number on every arch
_CREATE_VERSION = 1
_RULE_PATH_BENEATH, _RULE_NET_PORT = 1, 2
_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_REFER, _TRUNCATE, _IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1
_SCOPE_ABSTRACT_UNIX, _SCOPE_SIGNAL = 1 << 0, 1 << 1
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2

# -- seccomp: (audit arch, {syscall: number}, x32 bit) ------------------------------------------
_SECCOMP_ARCH = {
    "x86_64": (0xC000003E, {"socket": 41, "socketpair": 53, "setpgid": 109, "setsid": 112,
                            "io_uring_setup": 425,
                            "shmget": 29, "shmat": 30, "shmctl": 31, "semget": 64, "semop": 65,
                            "semctl": 66, "shmdt": 67, "msgget": 68, "msgsnd": 69, "msgrcv": 70,
                            "msgctl": 71, "semtimedop": 220,
                            "add_key": 248, "request_key": 249, "keyctl": 250}, 0x40000000),
    "aarch64": (0xC00000B7, {"socket": 198, "socketpair": 199, "setpgid": 154, "setsid": 157,
                             "io_uring_setup": 425,
                             "msgget": 186, "msgctl": 187, "msgrcv": 188, "msgsnd": 189,
                             "semget": 190, "semctl": 191, "semtimedop": 192, "semop": 193,
                             "shmget": 194, "shmctl": 195, "shmat": 196, "shmdt": 197,
                             "add_key": 217, "request_key": 218, "keyctl": 219}, None),
}
#: The device files the strict child may open (read; /dev/null also write). Not /dev as a whole:
#: a terminal there (/dev/pts/N) let it read the user's keystrokes and, by TIOCSTI, type commands
#: into the user's shell; /dev/shm held other programs' shared memory; /dev/kmsg the kernel log.
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def landlock_abi() -> int:
    """The kernel's Landlock ABI version (0 when Landlock is missing or disabled)."""
    if not sys.platform.startswith("linux"):
        return 0
    abi = _libc.syscall(_SYS_CREATE, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_VERSION))
    return max(0, int(abi))


def strict_available() -> bool:
    return landlock_abi() >= 1


def _fs_rights(abi: int) -> int:
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= _REFER
    if abi >= 3:
        rights |= _TRUNCATE
    if abi >= 5:
        rights |= _IOCTL_DEV
    return rights


def _landlock(read: Iterable[str], write: Iterable[str], write_files: Iterable[str]) -> int:
    """Restrict this process (and what it starts) with Landlock; return the ABI used."""
    abi = landlock_abi()
    if abi < 1:
        raise OSError(errno.ENOSYS, "Landlock is not available")
    handled = _fs_rights(abi)
    net = (_NET_BIND_TCP | _NET_CONNECT_TCP) if abi >= 4 else 0
    scoped = (_SCOPE_ABSTRACT_UNIX | _SCOPE_SIGNAL) if abi >= 6 else 0
    attr = struct.pack("=QQQ", handled, net, scoped)
    size = 8 if abi < 4 else (16 if abi < 6 else 24)
    buf = ctypes.create_string_buffer(attr[:size], size)
    ruleset = _libc.syscall(_SYS_CREATE, buf, ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    try:
        read_rights = _READ_FILE | _READ_DIR  # no ioctl on a device (TIOCSTI and the like)
        file_rights = _READ_FILE | _WRITE_FILE | (_TRUNCATE if abi >= 3 else 0)
        for paths, rights in ((read, read_rights), (write, handled & ~_EXECUTE),
                              (write_files, file_rights)):
            for path in paths:
                _add_path_rule(ruleset, path, rights)
        if _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        if _libc.syscall(_SYS_RESTRICT, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    finally:
        os.close(ruleset)
    return abi


def _add_path_rule(ruleset: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # a root that does not exist grants nothing
    try:
        if not os.path.isdir(path):
            rights &= _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE | _IOCTL_DEV
        rule = ctypes.create_string_buffer(struct.pack("=Qi", rights, fd), 12)
        if _libc.syscall(_SYS_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH),
                         rule, ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), f"landlock_add_rule({path}) failed")
    finally:
        os.close(fd)


def _seccomp() -> bool:
    """Deny sockets, io_uring and leaving the process group (EPERM); False on another arch."""
    arch = _SECCOMP_ARCH.get(platform.machine())
    if arch is None:
        return False
    audit_arch, numbers, x32 = arch
    deny = 0x00050000 | errno.EPERM   # SECCOMP_RET_ERRNO | EPERM
    allow = 0x7FFF0000                # SECCOMP_RET_ALLOW
    body = [(0x20, 0, 0, 4)]          # ld arch
    # jeq arch: fall through, else jump to the final deny
    checks = [(0x35, "deny", 0, x32)] if x32 is not None else []
    checks += [(0x15, "deny", 0, nr) for nr in sorted(numbers.values())]
    prog = body + [(0x15, 0, "deny", audit_arch), (0x20, 0, 0, 0)] + checks + [(0x06, 0, 0, allow),
                                                                            (0x06, 0, 0, deny)]
    last = len(prog) - 1
    raw = b""
    for i, (code, jt, jf, k) in enumerate(prog):
        jt = last - i - 1 if jt == "deny" else jt
        jf = last - i - 1 if jf == "deny" else jf
        raw += struct.pack("=HBBI", code, jt, jf, k)
    filters = ctypes.create_string_buffer(raw, len(raw))

    class _Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = _Prog(len(prog), ctypes.addressof(filters))
    if _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    if _libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")
    return True


def read_roots(extra: Sequence[str]) -> list[str]:
    """Folders the strict child may read: Python, the import path, system folders, ``extra``."""
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, "/usr", "/lib", "/lib64", "/lib32",
             "/bin", "/sbin", "/etc", "/opt", "/sys", *DEVICES}
    # of /proc, only this process's own folder and the machine-wide facts: not other processes
    # (a parent's environment is readable there even under Landlock's ptrace rules)
    roots |= {"/proc/self", "/proc/cpuinfo", "/proc/meminfo", "/proc/stat", "/proc/sys",
              "/proc/loadavg", "/proc/filesystems"}
    roots |= {p for p in sys.path if p}
    roots |= set(extra)
    return sorted({os.path.realpath(p) for p in roots if os.path.exists(p)})


class Attempts:
    """An audit hook recording what the strict rules deny, so the ERROR can name it."""

    _WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
    _RUN = frozenset({"subprocess.Popen", "os.exec", "os.posix_spawn", "os.spawn", "os.system",
                      "os.startfile"})
    _EVENTS = frozenset({"open", "socket.__new__", "socket.connect", "socket.bind",
                         "socket.sendto", "socket.getaddrinfo", "os.remove", "os.rename",
                         "os.mkdir", "os.rmdir", "os.chmod", "shutil.rmtree"}) | _RUN

    def __init__(self, read: Sequence[str], write: Sequence[str], write_files: Sequence[str]) -> None:
        self.read = tuple(r.rstrip("/") + "/" for r in read)
        self.write = tuple(w.rstrip("/") + "/" for w in write)
        self.write_files = frozenset(write_files)
        self.tried: list[str] = []
        self._host = ""
        self.active = False

    def install(self) -> None:
        sys.addaudithook(self._hook)
        self.active = True

    def take(self) -> Optional[str]:
        """The first denied attempt since the last call (None when there was none)."""
        first = self.tried[0] if self.tried else None
        self.tried = []
        return first

    def _may_write(self, path: str) -> bool:
        real = os.path.realpath(path)
        return real in self.write_files or (real + "/").startswith(self.write)

    def _may_read(self, path: str) -> bool:
        return (os.path.realpath(path) + "/").startswith(self.read + self.write)

    def _hook(self, event: str, args: tuple) -> None:
        if not self.active or event not in self._EVENTS or len(self.tried) >= 4:
            return
        try:
            self._note(event, args)
        except Exception:  # naming is best effort; the kernel enforces
            pass

    def _note(self, event: str, args: tuple) -> None:
        if event == "open":
            path, mode, flags = args
            if not isinstance(path, (str, bytes)):
                return
            path = os.fsdecode(path)
            writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) \
                or (isinstance(flags, int) and flags & self._WRITE_FLAGS)
            if writes and not self._may_write(path):
                self.tried.append(f"tried to write {os.path.abspath(path)}")
            elif not writes and not self._may_read(path):
                self.tried.append(f"tried to read {os.path.abspath(path)}")
        elif event in ("os.remove", "os.rename", "os.mkdir", "os.rmdir", "os.chmod",
                       "shutil.rmtree"):
            path = args[0]
            if isinstance(path, (str, bytes)) and not self._may_write(os.fsdecode(path)):
                self.tried.append(f"tried to change {os.path.abspath(os.fsdecode(path))}")
        elif event == "socket.getaddrinfo":
            self._host = f"{args[0]}:{args[1]}" if args[1] is not None else f"{args[0]}"
        elif event == "socket.__new__":
            to = f" (to reach {self._host})" if self._host else ""
            self.tried.append(f"tried to open a network socket{to}")
        elif event in ("socket.connect", "socket.bind", "socket.sendto"):
            address = args[-1]
            if isinstance(address, tuple) and len(address) >= 2:
                address = f"{address[0]}:{address[1]}"
            verb = {"socket.bind": "listen on", "socket.sendto": "send to"}.get(event, "connect to")
            self.tried.append(f"tried to {verb} {address}")
        elif event in self._RUN:
            what = args[0] if args else "a program"
            if isinstance(what, (list, tuple)):
                what = what[0] if what else "a program"
            self.tried.append(f"tried to run {os.fsdecode(what) if isinstance(what, bytes) else what}")


def limit_resources(memory: Optional[int], cpu_seconds: Optional[float], nofile: int,
                    extra_processes: int) -> None:
    """rlimits of the child: address space, CPU time, open files, processes, file size, no core
    files. ``RLIMIT_NPROC`` counts every process of the user, so it is set to the user's current
    count plus ``extra_processes`` (it does not bind root)."""
    import resource

    limits = [(resource.RLIMIT_CORE, 0), (resource.RLIMIT_NOFILE, nofile)]
    if memory is not None:
        limits += [(resource.RLIMIT_AS, memory), (resource.RLIMIT_FSIZE, memory)]
    if cpu_seconds is not None:
        limits.append((resource.RLIMIT_CPU, int(cpu_seconds) + 1))
    limits.append((resource.RLIMIT_NPROC, _user_processes() + extra_processes))
    for what, value in limits:
        try:
            soft, hard = resource.getrlimit(what)
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            resource.setrlimit(what, (value, value))
        except (ValueError, OSError):  # pragma: no cover - a hard limit already lower
            pass


def _user_processes() -> int:
    uid, count = os.getuid(), 0
    try:
        for name in os.listdir("/proc"):
            if name.isdigit():
                try:
                    if os.stat(f"/proc/{name}").st_uid == uid:
                        count += 1
                except OSError:
                    pass
    except OSError:  # pragma: no cover - no /proc
        return 4096
    return count


def enter(level: str, *, workdir: str, readable: Sequence[str]) -> tuple[str, Optional[Attempts]]:
    """Apply ``level`` to this process; return the isolation in force, in words, and the audit
    hook naming denied attempts (None below strict)."""
    if level != "strict":
        return "process only", None
    reads = read_roots(list(readable) + [workdir])
    writes, files = [workdir], ["/dev/null"]
    try:
        abi = _landlock(reads, writes, files)
    except OSError as exc:
        return f"process only (Landlock unavailable: {exc.strerror or exc})", None
    words = f"landlock (ABI {abi})"
    try:
        if _seccomp():
            words = f"landlock (ABI {abi}) + seccomp"
    except OSError as exc:  # pragma: no cover - seccomp disabled by the kernel
        words += f"; seccomp unavailable: {exc.strerror or exc}"
    attempts = Attempts(reads, writes, files)
    attempts.install()
    return words, attempts


def child_environment(passed: Iterable[str] = (), base: Optional[dict] = None) -> dict[str, str]:
    """The scrubbed environment of the child: what Python and native libraries need, and the
    variables named in ``passed``; everything else (tokens, keys, the user's settings) stays out."""
    env = os.environ if base is None else base
    keep = {"PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_NUMERIC", "TZ", "PYTHONPATH",
            "PYTHONHOME", "LD_LIBRARY_PATH", "VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONHASHSEED",
            "SYSTEMROOT"} | set(passed)
    out = {k: v for k, v in env.items() if k in keep}
    out.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    return out


def describe_attempt(attempt: str, isolation: str) -> str:
    return f"{attempt} (blocked by the sandbox: {isolation})"
