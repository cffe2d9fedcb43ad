"""Isolation of the sandbox child: what it may read, write, reach and start (Linux, unprivileged).

The child calls :func:`enter` before it imports numpy, dpaudit's numeric modules or the audited
file; until then it has imported only the standard library's essentials, from the Python
installation alone (it runs as ``python -I`` in its private folder, so neither the working folder
nor ``PYTHONPATH`` is on its import path then). Three levels (``dpaudit check --isolation``):

``strict`` (the default where the kernel has it)
    * **Capabilities**: every one is dropped (bounding, ambient, effective, permitted,
      inheritable) and no-new-privileges is set, so a child of root is root without privileges:
      no ``perf_event_open`` across the machine, no ``sethostname``, no ``bpf``, no device nodes,
      no ``chattr +i``.
    * **Landlock** (Linux ≥ 5.13; ABI 4 for TCP, ABI 6 for scopes): the child may read only the
      Python installation, the import path, the system folders, the working folder and the
      mechanism's own folder (unless :func:`~dpaudit.execution.shares.too_broad`: :func:`~dpaudit.execution.shares.shared_reads`), of ``/opt`` only
      what of these lies there, of ``/etc`` and ``/sys``
      only what :data:`ETC_READABLE` and :data:`SYS_READABLE` name, and of ``/proc`` only its
      own entry and machine-wide facts (no other process's environment); it
      may write, move, link or remove only in its private folder (``TMPDIR``; no device nodes
      there, no device ioctl) and write ``/dev/null``; it may execute no program; it may not bind
      or connect TCP ports, nor signal or connect to processes outside its own sandbox. The kernel
      interface is called directly through ctypes (three system calls, ``landlock(7)``).
      Landlock does not cover ``stat``, ``access``, ``chdir`` or ``readlink`` of a path: the
      child can learn that a file exists, and its size, owner and times, not what it holds.
    * **seccomp** (x86-64 and arm64): an allow-list of the system calls CPython, numpy, scipy and
      threads use (numbers in :mod:`dpaudit.execution.syscalls`); any other call fails with
      ``ENOSYS`` (so the C library falls back, e.g. from ``clone3`` to ``clone``), and the
      dangerous ones by name with ``EPERM``: sockets (no UDP or Unix-socket route out),
      ``io_uring`` (its requests bypass seccomp), ``setsid``/``setpgid`` (no leaving the process
      group that dpaudit kills), System V IPC, POSIX message queues and the kernel keyring (their
      objects outlive the child), ``perf_event_open``, ``bpf``, ``ptrace``, ``mknod``, mounts and
      namespaces, module loading, ``reboot``, ``kexec``, clock setters, ``personality``, uid and
      capability changes and the like; and every change of a file's mode, times, owner or
      extended attributes (``chmod``, ``utime``, ``chown``, ``setxattr`` and their relatives),
      which Landlock does not cover, whatever the file (the filter cannot read a path).
      Arguments are checked where a call can reach another process: ``prlimit64``,
      ``sched_set*``/``sched_get*``, ``setpriority``/``getpriority`` and ``ioprio_*`` only on the
      child itself (pid 0 or its own), ``clone`` without a namespace flag, ``kill`` not on every
      process (-1), and ``ioctl`` without ``FS_IOC_SETFLAGS``, ``FS_IOC_FSSETXATTR``, ``TIOCSTI``
      or ``TIOCLINUX``.
    * Of ``/dev`` only :data:`DEVICES` (no terminal, no ``/dev/shm``), with no device ioctl.
``process``
    A separate process in its own session with a scrubbed environment, no capabilities,
    no-new-privileges and resource limits (address space, CPU time, open files, processes, file
    size), but full access to files and network. This is what ``strict`` falls back to where the
    kernel lacks Landlock (the seccomp filter still applies there); the record then says
    ``process only``.
``none``
    In dpaudit's own process (``--in-process``; trusted code only).

An audit hook (PEP 578, :class:`Attempts`) names what a mechanism *tried*: a write, read,
socket, connection or program start that the rules above deny is written at once to a pipe that
dpaudit reads, and the batch then fails with, e.g., ``tried to write /home/u/x (blocked by the
sandbox)`` even if the mechanism swallowed the error. The hook only names; the kernel enforces.
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
import struct
import sys
from typing import Callable, Iterable, Optional, Sequence

from dpaudit.execution import seccomp
from dpaudit.execution.seccomp import seccomp_program  # noqa: F401 - re-exported
from dpaudit.execution.shares import Shared, secret_name, share, too_broad

__all__ = ["ISOLATION_LEVELS", "enter", "landlock_abi", "Attempts", "read_roots",
           "drop_privileges", "seccomp_program"]

ISOLATION_LEVELS = ("strict", "process", "none")

# -- Landlock (include/uapi/linux/landlock.h) ----------------------------------------------------
_SYS_CREATE, _SYS_ADD_RULE, _SYS_RESTRICT = 444, 445, 446   # the same number on every arch
_CREATE_VERSION = 1
_RULE_PATH_BENEATH, _RULE_NET_PORT = 1, 2
_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_MAKE_CHAR, _MAKE_BLOCK = 1 << 6, 1 << 11
_REFER, _TRUNCATE, _IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1
_SCOPE_ABSTRACT_UNIX, _SCOPE_SIGNAL = 1 << 0, 1 << 1
_PR_SET_NO_NEW_PRIVS = 38

# -- capabilities (include/uapi/linux/prctl.h, capability.h, securebits.h) ------------------------
_PR_CAPBSET_DROP, _PR_SET_SECUREBITS, _PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 24, 28, 47, 4
_CAP_VERSION_3 = 0x20080522
#: noroot, no-setuid-fixup, keep-caps and no-ambient-raise, each locked
_SECUREBITS = 0xEF

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


def _fs_rights(abi: int) -> int:
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= _REFER
    if abi >= 3:
        rights |= _TRUNCATE
    if abi >= 5:
        rights |= _IOCTL_DEV
    return rights


def _landlock(read: Iterable[str], write: Iterable[str], write_files: Iterable[str],
              listed: Iterable[str] = ()) -> int:
    """Restrict this process (and what it starts) with Landlock; return the ABI used. ``listed``
    folders may be listed, not read (:func:`~dpaudit.execution.shares.shared_reads`: their other entries are in ``read``)."""
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
        # the private folder: no program, no device node (a recreated /dev/kmsg), no device ioctl
        write_rights = handled & ~(_EXECUTE | _MAKE_CHAR | _MAKE_BLOCK | _IOCTL_DEV)
        for paths, rights in ((read, read_rights), (write, write_rights),
                              (write_files, file_rights), (listed, _READ_DIR)):
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


def drop_privileges() -> None:
    """Drop every capability of this process and set no-new-privileges.

    Lock the securebits (root gains nothing at an exec), empty the bounding set (0 to
    ``cap_last_cap``) and the ambient set, then empty the effective, permitted and inheritable
    sets. A process without CAP_SETPCAP (not root) cannot touch its bounding set or securebits;
    it has no capability to lose, and no-new-privileges keeps it from gaining one by an exec."""
    if not sys.platform.startswith("linux"):  # pragma: no cover - the sandbox is Linux's
        return
    _libc.prctl(_PR_SET_SECUREBITS, _SECUREBITS, 0, 0, 0)  # fails without CAP_SETPCAP: fine
    try:
        with open("/proc/sys/kernel/cap_last_cap", "rb") as fh:
            last = int(fh.read())
    except (OSError, ValueError):  # pragma: no cover - no /proc
        last = 63
    for cap in range(last + 1):
        if _libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            if ctypes.get_errno() == errno.EPERM:
                break  # no CAP_SETPCAP: the bounding set is not ours to change
    _libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)  # EINVAL before Linux 4.3
    header = ctypes.create_string_buffer(struct.pack("=Ii", _CAP_VERSION_3, 0), 8)
    data = ctypes.create_string_buffer(bytes(24), 24)  # two words of effective/permitted/inheritable
    if _libc.capset(header, data) != 0:
        raise OSError(ctypes.get_errno(), "capset failed")
    if _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")


#: What of /etc the strict child may read, by name (an allow-list: /etc also holds a runner's
#: root-only configuration, kubeconfigs, keys and tokens, which the child once read and could put
#: in the text of its ERROR, and so in every report). Measured by tracing the child through the
#: sandbox's tests, the examples and imports of numpy, scipy, pandas, scikit-learn, statsmodels,
#: diffprivlib, OpenDP and python-dp: the dynamic loader's cache (every native library), the time
#: zone (``time``, ``datetime``, pandas), OpenSSL's configuration where Debian and Red Hat keep it
#: (read when ``hashlib`` and ``ssl`` start), the user database (``getpass.getuser``, ``~user``:
#: names and home folders; password hashes live in ``shadow``) and the MIME types ``mimetypes``
#: reads (an unreadable one it finds breaks ``mimetypes.guess_type``). None holds a secret.
ETC_READABLE = (
    "ld.so.cache", "localtime", "timezone",
    "ssl/openssl.cnf", "pki/tls/openssl.cnf", "crypto-policies/back-ends/opensslcnf.config",
    "passwd", "group", "nsswitch.conf",
    "mime.types", "httpd/mime.types", "httpd/conf/mime.types", "apache/mime.types",
    "apache2/mime.types")


def _etc_entries(etc: str = "/etc") -> list[str]:
    """The paths of :data:`ETC_READABLE` under ``etc`` (Landlock can only allow, so /etc is
    allowed file by file)."""
    return [os.path.join(etc, name) for name in ETC_READABLE]


#: What of /sys the strict child may read, by name (the rest, e.g. firmware tables, block devices,
#: power and kernel settings, answers no question a mechanism asks). Measured by tracing the
#: child through the examples and numpy, scipy and OpenBLAS: the CPUs possible and online (the C
#: library's CPU count, OpenBLAS's threads; their topology and caches, which hwloc and psutil read,
#: lie in the same folder), the NUMA nodes, numpy's look at transparent huge pages, and the
#: cgroup CPU quota that joblib (scikit-learn's ``n_jobs``), loky and dask read, which they open
#: when it exists (an unreadable one breaks ``joblib.cpu_count``).
SYS_READABLE = (
    "devices/system/cpu", "devices/system/node", "kernel/mm/transparent_hugepage/enabled",
    "fs/cgroup/cpu.max", "fs/cgroup/cpu/cpu.cfs_quota_us", "fs/cgroup/cpu/cpu.cfs_period_us",
    "fs/cgroup/cpuacct/cpu.cfs_quota_us", "fs/cgroup/cpuacct/cpu.cfs_period_us")


def _python_roots(homes: Iterable[str] = (), around: Optional[Shared] = None) -> set[str]:
    """The Python installation and what its packages need outside the system folders: the
    prefixes, the import path (site-packages, dist-packages and what ``.pth`` files add), and the
    folders of ``LD_LIBRARY_PATH`` (a package's native libraries). /opt is granted only through
    these: a self-hosted runner keeps its credentials there (``/opt/actions-runner``). None that
    is :func:`~dpaudit.execution.shares.too_broad` (``LD_LIBRARY_PATH=/root`` or a ``.pth`` line ``/`` once shared a home
    or everything; the system folders are granted on their own). With ``around``, a folder that
    is not the installation's is shared into it (:func:`~dpaudit.execution.shares.share`: without its .git and the like)."""
    homes = tuple(homes)
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    roots = {p for p in sys.path if p}
    roots |= {p for p in os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep)
              if os.path.isabs(p)}
    inside = tuple(os.path.realpath(p).rstrip("/") + "/" for p in prefixes)
    kept = {p for p in prefixes if not too_broad(p, homes)}
    for p in sorted(roots):  # in order: the words of what is held back are the record's
        if too_broad(p, homes):
            continue
        if around is None or (os.path.realpath(p) + "/").startswith(inside):
            kept.add(p)
        else:  # a folder a .pth line or LD_LIBRARY_PATH adds (an editable install's checkout)
            share(p, "the import path's folder", around, [], homes)
    return kept


def read_roots(extra: Sequence[str], homes: Iterable[str] = (),
               around: Optional[Shared] = None) -> list[str]:
    """What the strict child may read: Python and its import path, the system folders (of /opt
    only what Python needs, of /etc and /sys only what :data:`ETC_READABLE` and
    :data:`SYS_READABLE` name), ``extra`` (the working and mechanism's folders, the user's
    ``PYTHONPATH``: :func:`~dpaudit.execution.shares.shared_reads`). ``homes`` are the machine's home folders
    (:func:`~dpaudit.execution.shares.user_homes`, told by dpaudit's process: the child's own ``HOME`` is its private
    folder)."""
    roots = {"/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", *_python_roots(homes, around),
             *DEVICES,
             *_etc_entries(), *(os.path.join("/sys", name) for name in SYS_READABLE)}
    # of /proc, only this process's own folder and the machine-wide facts: not other processes
    # (a parent's environment is readable there even under Landlock's ptrace rules), and of
    # /proc/sys the kernel's and memory's settings (its net/ holds root-only keys)
    roots |= {"/proc/self", "/proc/cpuinfo", "/proc/meminfo", "/proc/stat", "/proc/sys/kernel",
              "/proc/sys/vm", "/proc/loadavg", "/proc/filesystems"}
    roots |= set(extra)
    return sorted({os.path.realpath(p) for p in roots if os.path.exists(p)})


class Attempts:
    """The audit hook that names what the strict rules deny, so the ERROR can say what was tried.

    Each attempt is written at once, as one line ``tried to ... (blocked by the sandbox: ...)``,
    to ``channel``, a pipe whose other end dpaudit holds and reads after each reply; the child
    also keeps the first few for its own messages (:meth:`take`). The audited code runs in the
    same interpreter, so the hook is built not to be switched off from Python: it has no flag or
    list that silences it, it keeps its rules and every function it calls in its own default
    arguments (no module global, closure cell or builtin it looks up at run time), and it refuses
    (raises in the ``object.__setattr__`` and ``object.__delattr__`` events) any change of the
    code or defaults of a function of this module and of this class's attributes. Clearing the
    child's own copy changes nothing: dpaudit already has the line, and reads the pipe also when
    the child dies. Closing the pipe is seen by dpaudit as tampering.

    What it cannot prevent: code that calls the C library directly (ctypes: ``open(2)`` through
    ``libc``, or writing over the interpreter's memory, which can unhook it) raises no audit
    event, and a process it forked can keep the pipe open while it closes its own end; such an
    attempt is then not named. The audited code can also write lines of its own into the pipe;
    that only earns it an ERROR. The kernel (Landlock, seccomp) refuses what is denied whether or
    not it is named: the hook only names, the kernel enforces.

    It names what the kernel refuses, and only that: a read, write, removal, move or link outside
    the folders Landlock allows, and, where seccomp is in force (``metadata_refused``), a change of
    the mode, times, owner or extended attributes of a file outside the private folder (the filter
    refuses them in that folder too, :data:`dpaudit.execution.seccomp.METADATA`, but nothing
    outside is at stake there, and ``pathlib.Path.touch`` tries ``utime`` before it creates).
    """

    __slots__ = ("_kept", "_hook")  # no instance attribute to shadow a method with

    def __init__(self, read: Sequence[str], write: Sequence[str], write_files: Sequence[str],
                 channel: Optional[int] = None, isolation: str = "strict",
                 metadata_refused: bool = True, listed: Sequence[str] = ()) -> None:
        self._kept: list[str] = []
        self._hook = _make_hook(tuple(r.rstrip("/") + "/" for r in read),
                                tuple(w.rstrip("/") + "/" for w in write),
                                frozenset(write_files), channel, isolation, self._kept,
                                type(self), metadata_refused,
                                tuple(f.rstrip("/") + "/" for f in sorted(listed, key=len,
                                                                          reverse=True)))

    def install(self) -> None:
        sys.addaudithook(self._hook)

    def take(self) -> Optional[str]:
        """The first denied attempt since the last call (None when there was none, or when the
        audited code broke this copy: dpaudit has the line from the pipe anyway)."""
        try:
            kept = self._kept
            first = kept[0] if kept else None
            del kept[:]
            return first
        except Exception:
            return None


_RUN = frozenset({"subprocess.Popen", "os.exec", "os.posix_spawn", "os.spawn", "os.system",
                  "os.startfile"})
_CHANGE = frozenset({"os.remove", "os.mkdir", "os.rmdir", "shutil.rmtree", "os.truncate"})
#: (audit event, what it changes): refused by seccomp whatever the file, so always named
_METADATA = (("os.chmod", "mode"), ("os.chown", "owner"), ("os.utime", "times"),
             ("os.setxattr", "extended attributes"), ("os.removexattr", "extended attributes"))
#: (audit event, verb): refused by Landlock when either end is outside the private folder
_MOVE = (("os.rename", "move"), ("os.link", "link"), ("os.symlink", "make a symbolic link"))
_SOCKET = frozenset({"socket.connect", "socket.bind", "socket.sendto"})
_EVENTS = frozenset({"open", "socket.__new__", "socket.getaddrinfo", "object.__setattr__",
                     "object.__delattr__"}) \
    | _RUN | _CHANGE | _SOCKET | frozenset(e for e, _ in _METADATA + _MOVE)
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def _resolve(path: str, follow: bool, last: bool = True, _getcwd: Callable = os.getcwd,
             _lstat: Callable = os.lstat, _readlink: Callable = os.readlink,
             _islink: Callable = stat.S_ISLNK, _error: type = OSError,
             _reversed: Callable = reversed) -> str:
    """``path`` made absolute and normalised; with ``follow``, symbolic links resolved (what
    ``os.path.realpath`` does, from built-in functions bound here, out of the audited code's
    reach), the last one only with ``last`` (a move or a link acts on the entry itself)."""
    todo = path.split("/")
    if not path.startswith("/"):
        todo = _getcwd().split("/") + todo
    todo.reverse()
    done, hops = "", 0
    while todo:
        name = todo.pop()
        if name == "" or name == ".":
            continue
        if name == "..":
            done = done.rpartition("/")[0]
            continue
        step = done + "/" + name
        if follow and hops < 40 and (last or todo):
            try:
                link = _islink(_lstat(step).st_mode)
            except _error:
                link = False
            if link:
                hops += 1
                target = _readlink(step)
                if target.startswith("/"):
                    done = ""
                todo.extend(_reversed(target.split("/")))
                continue
        done = step
    return done or "/"


# -- the audit hook's pieces: each returns the attempt an event names ("" for none). Like the hook,
# each binds every name it uses in its positional defaults (no module global, closure cell or
# builtin looked up at run time) and, defined in this file, is guarded by the hook against a new
# code or defaults; the hook holds them in its own defaults, so rebinding a name here changes
# nothing. What an event is judged against (the folders, the channel) comes from the hook.

_FSENC = sys.getfilesystemencoding()


def _named_open(args: tuple, _reads: tuple, _writes: tuple, _files: frozenset,
                _listed: tuple = (), _resolve: Callable = _resolve,
                _decode: Callable = bytes.decode, _secret: Callable = secret_name,
                _fsenc: str = _FSENC, _str: type = str, _bytes: type = bytes, _int: type = int,
                _isinstance: Callable = isinstance, _flags: int = _WRITE_FLAGS) -> str:
    """``open``: a write outside the writable folders and files, a read outside the readable
    and writable folders. Of a folder shared entry by entry (``_listed``, each ending in ``/``),
    only a read of a held-back entry (:func:`secret_name`) is named: a file that did not exist
    when the child started (a module's ``__pycache__``) is not shared either, but looking for one
    is no attempt, and the kernel refuses a read of it anyway."""
    path, mode, flags = args
    if _isinstance(path, _bytes):
        path = _decode(path, _fsenc, "surrogateescape")
    if not _isinstance(path, _str):
        return ""
    writes = (_isinstance(mode, _str) and ("w" in mode or "a" in mode or "x" in mode
                                           or "+" in mode)) \
        or (_isinstance(flags, _int) and flags & _flags)
    real = _resolve(path, True)
    if writes:
        if not (real in _files or (real + "/").startswith(_writes)):
            return "tried to write " + _resolve(path, False)
        return ""
    if (real + "/").startswith(_reads + _writes):
        return ""
    for folder in _listed:
        if (real + "/").startswith(folder):
            if not _secret((real + "/")[len(folder):].split("/", 1)[0]):
                return ""
            break
    return "tried to read " + _resolve(path, False)


def _named_change(event: str, args: tuple, _writes: tuple, _resolve: Callable = _resolve,
                  _decode: Callable = bytes.decode, _fsenc: str = _FSENC, _str: type = str,
                  _bytes: type = bytes, _isinstance: Callable = isinstance) -> str:
    """A removal, a new folder or a truncation outside the private folder."""
    path = args[0]
    if _isinstance(path, _bytes):
        path = _decode(path, _fsenc, "surrogateescape")
    # a removal acts on the entry itself, a truncation on the file a link leads to
    if _isinstance(path, _str) and not (_resolve(path, True, event == "os.truncate")
                                        + "/").startswith(_writes):
        return "tried to change " + _resolve(path, False)
    return ""


def _named_metadata(event: str, args: tuple, _writes: tuple, _metadata: tuple = _METADATA,
                    _readlink: Callable = os.readlink, _resolve: Callable = _resolve,
                    _decode: Callable = bytes.decode, _fsenc: str = _FSENC, _str: type = str,
                    _bytes: type = bytes, _int: type = int, _isinstance: Callable = isinstance,
                    _error: type = Exception) -> str:
    """A change of the mode, owner, times or extended attributes of a file (by path or by file
    descriptor) outside the private folder."""
    path = args[0]
    if _isinstance(path, _bytes):
        path = _decode(path, _fsenc, "surrogateescape")
    real = ""
    if _isinstance(path, _int):
        try:
            path = real = _readlink(f"/proc/self/fd/{path}")
        except _error:
            path = f"file descriptor {path}"
    elif _isinstance(path, _str):
        real, path = _resolve(path, True), _resolve(path, False)
    else:
        path = "a file"
    if real and (real + "/").startswith(_writes):
        return ""  # refused in its own folder too, where nothing is at stake: not named
    text = ""
    for name, what in _metadata:
        if name == event:
            text = f"tried to change the {what} of {path}"
    return text


def _named_move(event: str, args: tuple, _writes: tuple, _move: tuple = _MOVE,
                _resolve: Callable = _resolve, _decode: Callable = bytes.decode,
                _fsenc: str = _FSENC, _str: type = str, _bytes: type = bytes,
                _isinstance: Callable = isinstance) -> str:
    """A move, link or symbolic link with an end outside the private folder."""
    ends = [args[0], args[1]]
    for i in (0, 1):
        if _isinstance(ends[i], _bytes):
            ends[i] = _decode(ends[i], _fsenc, "surrogateescape")
    src, dst = ends
    if not _isinstance(dst, _str) or not _isinstance(src, _str):
        return ""
    dst = _resolve(dst, True, False)
    inside = (dst + "/").startswith(_writes)
    if event != "os.symlink":  # a symbolic link's target is only text
        src = _resolve(src, True, event == "os.link")
        inside = inside and (src + "/").startswith(_writes)
    if inside:
        return ""
    text = ""
    for name, verb in _move:
        if name == event:
            text = f"tried to {verb} {src} to {dst}" if event != "os.symlink" \
                else f"tried to {verb} {dst}"
    return text


def _named_network(event: str, args: tuple, _host: list, _tuple: tuple = (tuple, list),
                   _isinstance: Callable = isinstance, _len: Callable = len) -> str:
    """A socket, a connection, a bind or a datagram; a host looked up is kept in ``_host`` (not
    named) for the socket that follows."""
    if event == "socket.getaddrinfo":
        _host[0] = f"{args[0]}:{args[1]}" if args[1] is not None else f"{args[0]}"
        return ""
    if event == "socket.__new__":
        return "tried to open a network socket" + \
            (f" (to reach {_host[0]})" if _host[0] else "")
    address = args[-1]
    if _isinstance(address, _tuple) and _len(address) >= 2:
        address = f"{address[0]}:{address[1]}"
    verb = "listen on" if event == "socket.bind" else \
        "send to" if event == "socket.sendto" else "connect to"
    return f"tried to {verb} {address}"


def _named_run(args: tuple, _decode: Callable = bytes.decode, _fsenc: str = _FSENC,
               _bytes: type = bytes, _tuple: tuple = (tuple, list),
               _isinstance: Callable = isinstance) -> str:
    """A program started."""
    what = args[0] if args else "a program"
    if _isinstance(what, _tuple):
        what = what[0] if what else "a program"
    if _isinstance(what, _bytes):
        what = _decode(what, _fsenc, "surrogateescape")
    return f"tried to run {what}"


def _tell(text: str, _kept: list, _channel: Optional[int], _isolation: str,
          _write: Callable = os.write, _encode: Callable = str.encode,
          _len: Callable = len) -> None:
    """Keep the first few attempts for the child's own messages and write each, as one line, to
    the pipe dpaudit reads."""
    text = text[:1000]
    if _len(_kept) < 4:
        _kept.append(text)
    if _channel is not None:
        line = f"{text} (blocked by the sandbox: {_isolation})"
        line = line.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")
        _write(_channel, _encode(line + "\n", "utf-8", "backslashreplace"))


def _make_hook(reads: tuple, writes: tuple, write_files: frozenset, channel: Optional[int],
               isolation: str, kept: list, owner: Optional[type] = None,
               metadata_refused: bool = True,
               listed: tuple = ()) -> Callable[[str, tuple], None]:
    """The audit hook; see :class:`Attempts`. Everything it uses is bound in its positional
    defaults (a tuple: keyword-only defaults would sit in a dict the audited code could edit),
    the pieces that name each kind of attempt (``_named_*``, :func:`_tell`) included: they are
    given the hook's rules as arguments and bind the rest in their own positional defaults."""
    host = [""]  # the last looked-up host, named with the socket that follows

    def hook(event: str, args: tuple, _events: frozenset = _EVENTS, _run: frozenset = _RUN,
             _change: frozenset = _CHANGE, _socket: frozenset = _SOCKET,
             _refuses_metadata: bool = metadata_refused,
             _guarded: tuple = ("__code__", "__defaults__", "__kwdefaults__"),
             _file: str = __file__, _reads: tuple = reads, _writes: tuple = writes,
             _files: frozenset = write_files, _listed: tuple = listed,
             _channel: Optional[int] = channel,
             _isolation: str = isolation, _kept: list = kept, _host: list = host,
             _open: Callable = _named_open, _changed: Callable = _named_change,
             _metadata: Callable = _named_metadata, _moved: Callable = _named_move,
             _network: Callable = _named_network, _started: Callable = _named_run,
             _tell: Callable = _tell, _getattr: Callable = getattr, _len: Callable = len,
             _error: type = Exception, _refused: type = RuntimeError,
             _owner: Optional[type] = owner) -> None:
        if event not in _events:
            return
        if event == "object.__setattr__" or event == "object.__delattr__":
            if args and _owner is not None and args[0] is _owner:
                raise _refused("dpaudit's sandbox audit hook may not be changed")
            if _len(args) >= 2 and args[1] in _guarded:
                code = _getattr(args[0], "__code__", None)
                if _getattr(code, "co_filename", None) == _file:
                    raise _refused("dpaudit's sandbox audit hook may not be changed")
            return
        try:
            text = ""
            if event == "open":
                text = _open(args, _reads, _writes, _files, _listed)
            elif event in _change:
                text = _changed(event, args, _writes)
            elif event == "os.chmod" or event == "os.chown" or event == "os.utime" \
                    or event == "os.setxattr" or event == "os.removexattr":
                if not _refuses_metadata:
                    return
                text = _metadata(event, args, _writes)
            elif event == "os.rename" or event == "os.link" or event == "os.symlink":
                text = _moved(event, args, _writes)
            elif event == "socket.getaddrinfo" or event == "socket.__new__" or event in _socket:
                text = _network(event, args, _host)
            elif event in _run:
                text = _started(args)
            if not text:
                return
            _tell(text, _kept, _channel, _isolation)
        except _error:  # naming is best effort; the kernel enforces
            pass

    return hook


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


def enter(level: str, *, workdir: str, readable: Sequence[str],
          channel: Optional[int] = None, held: Sequence[str] = (), listed: Sequence[str] = (),
          homes: Sequence[str] = ()) -> tuple[str, Optional[Attempts]]:
    """Apply ``level`` to this process; return the isolation in force, in words, and the audit
    hook naming denied attempts (None below strict), to be installed (:meth:`Attempts.install`)
    before the audited code is imported: after dpaudit's own imports, which it would only slow
    down. ``channel`` is the pipe the hook writes each attempt to; ``readable``, ``listed`` and
    ``held`` are what of the user's folders is shared, listed only, and not shared, in words
    (:func:`~dpaudit.execution.shares.shared_reads`); ``homes`` the machine's home folders (:func:`read_roots`). The child
    loses its capabilities at every level."""
    drop_privileges()
    if level != "strict":
        return "process only", None
    around = Shared([], [], [])  # what of the import path is shared around a .git (share)
    reads = read_roots(list(readable) + [workdir], homes, around)
    reads = sorted(set(reads) | {os.path.realpath(p) for p in around.reads if os.path.exists(p)})
    listed = sorted({os.path.realpath(p) for p in [*listed, *around.listed] if os.path.isdir(p)})
    held = [*held, *around.held]
    writes, files = [workdir], ["/dev/null"]
    try:
        abi = _landlock(reads, writes, files, listed)
    except OSError as exc:
        words = f"process only (Landlock unavailable: {exc.strerror or exc})"
        try:
            if seccomp.install():
                words += " + seccomp"
        except OSError:  # pragma: no cover - seccomp disabled by the kernel
            pass
        return words, None
    words, filtered = f"landlock (ABI {abi})", False
    try:
        # before ABI 3 Landlock does not cover truncate(2) by path: refused outright then
        if seccomp.install(deny=("truncate",) if abi < 3 else ()):
            words, filtered = f"landlock (ABI {abi}) + seccomp", True
    except OSError as exc:  # pragma: no cover - seccomp disabled by the kernel
        words += f"; seccomp unavailable: {exc.strerror or exc}"
    words = held_words(words, held)
    return words, Attempts(reads, writes, files, channel, words, metadata_refused=filtered,
                           listed=listed)


#: the longest isolation words the child may send before it imports the file (the parent takes
#: nothing longer: :meth:`dpaudit.execution.sandbox.SandboxExecutor.start`)
WORDS_MAX = 200


def held_words(words: str, held: Sequence[str], most: int = WORDS_MAX) -> str:
    """``words`` with what of the user's folders is not shared, as many names as fit in ``most``
    characters and how many more: a folder holding a few checkouts (each its ``.git``) or
    ``.env`` files made words the parent refused, and every check failed with "the sandbox child
    did not say which isolation it entered"."""
    held = list(held)
    if not held:
        return words[:most]
    head = words + "; not shared: "
    for k in range(len(held), 0, -1):
        more = len(held) - k
        text = "; ".join(held[:k]) + (f" and {more} more" if more else "")
        if len(head) + len(text) <= most:
            return head + text
    tail = f" and {len(held) - 1} more" if len(held) > 1 else ""
    room = most - len(head) - len(tail) - 1
    if room > 10:
        return head + held[0][:room] + "…" + tail
    # a long first part (a seccomp error's text): cut it, never the fact that something is held
    note = f"; not shared: {len(held)} entr{'y' if len(held) == 1 else 'ies'}"
    return words[:most - len(note) - 1] + "…" + note


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
