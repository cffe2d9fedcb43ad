"""The sandbox child's seccomp filter: an allow-list of system calls, with argument rules.

Classic BPF built by hand (libseccomp is not a dependency): the architecture and the x32 ABI are
checked first, then the system call number is looked up in a binary tree of the allowed and
refused calls. Calls CPython, numpy, scipy and threads need are allowed; calls that reach out of
the process (sockets, namespaces, mounts, ``ptrace``, ``perf_event_open``, ``bpf``, ``mknod``,
module loading, System V IPC, kernel keys) and every change of a file's mode, times, owner or
extended attributes (:data:`METADATA`) fail with EPERM, and any call the filter does not know
(a newer kernel's) with ENOSYS, so glibc falls back (``clone3`` to ``clone``). Argument rules:
``prlimit64``, ``sched_*``, ``get/setpriority`` and ``ioprio_*`` only on the process itself (a
child set dpaudit's CPU limit to one second), ``clone`` without namespace flags, ``kill`` not to
every process, no ``chattr +i``, ``FS_IOC_FSSETXATTR``, ``TIOCSTI`` or ``TIOCLINUX`` ioctl.
The syscall numbers come from :mod:`dpaudit.execution.syscalls`. Used by
:func:`dpaudit.execution.isolation.enter`.
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct
import sys
from typing import Iterable, Optional

from dpaudit.execution import syscalls

__all__ = ["seccomp_program", "install", "METADATA"]

_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2

_libc = ctypes.CDLL(None, use_errno=True)


#: (audit arch, syscall table, x32 bit) of the architectures the filter knows
_SECCOMP_ARCH = {
    "x86_64": (0xC000003E, syscalls.X86_64, 0x40000000),
    "aarch64": (0xC00000B7, syscalls.AARCH64, None),
}

#: What CPython, numpy, scipy, OpenBLAS and threads need (a name missing on an arch is skipped).
_ALLOW = frozenset("""
    read write readv writev pread64 pwrite64 preadv pwritev preadv2 pwritev2 open openat openat2
    creat close close_range lseek stat fstat lstat newfstatat statx statfs fstatfs access faccessat
    faccessat2 getdents getdents64 readlink readlinkat getcwd chdir fchdir mkdir mkdirat rmdir
    unlink unlinkat rename renameat renameat2 link linkat symlink symlinkat truncate ftruncate
    fallocate fsync fdatasync syncfs sync_file_range flock fcntl dup dup2 dup3 pipe pipe2 sendfile
    splice tee copy_file_range fadvise64 readahead umask getxattr lgetxattr fgetxattr listxattr
    llistxattr flistxattr
    memfd_create
    brk mmap munmap mremap mprotect madvise msync mincore mlock munlock mlock2 mlockall munlockall
    membarrier get_mempolicy set_mempolicy mbind pkey_alloc pkey_free pkey_mprotect mseal
    map_shadow_stack
    fork vfork execve execveat exit exit_group wait4 waitid tkill tgkill rt_sigaction
    rt_sigprocmask rt_sigreturn rt_sigsuspend rt_sigpending rt_sigtimedwait sigaltstack pause
    getpid getppid gettid getuid geteuid getgid getegid getgroups getresuid getresgid getpgid
    getpgrp getsid set_tid_address set_robust_list futex futex_waitv futex_wake futex_wait
    futex_requeue sched_yield sched_get_priority_max sched_get_priority_min getrlimit setrlimit
    getrusage times sysinfo uname prctl arch_prctl rseq getrandom capget getcpu restart_syscall
    clock_gettime clock_getres clock_nanosleep nanosleep gettimeofday time alarm setitimer
    getitimer timer_create timer_settime timer_gettime timer_getoverrun timer_delete
    timerfd_create timerfd_settime timerfd_gettime eventfd eventfd2 epoll_create epoll_create1
    epoll_ctl epoll_wait epoll_pwait epoll_pwait2 poll ppoll select pselect6 signalfd signalfd4
    landlock_create_ruleset landlock_add_rule landlock_restrict_self seccomp
""".split())

#: Changes of a file's mode, times, owner or extended attributes, refused with EPERM whatever the
#: file: Landlock does not cover them, and a child (its user owns the files it would change) set
#: the setuid bit on a root-owned file and made a 0600 secret world-readable. The filter cannot
#: read a path or tell what a descriptor names (``fchmod`` needs no write access: a read-only
#: descriptor of a file elsewhere is enough), so files in the private folder are refused too.
METADATA = frozenset("""
    chmod fchmod fchmodat fchmodat2 utime utimes utimensat futimesat chown fchown lchown fchownat
    setxattr lsetxattr fsetxattr removexattr lremovexattr fremovexattr
""".split())

#: Refused by name with EPERM: a way out, into the kernel, or to another process.
_DENY = frozenset("""
    socket socketpair connect bind listen accept accept4 sendto recvfrom sendmsg recvmsg sendmmsg
    recvmmsg shutdown getsockopt setsockopt getsockname getpeername
    io_uring_setup io_uring_enter io_uring_register setsid setpgid
    shmget shmat shmctl shmdt semget semop semctl semtimedop msgget msgsnd msgrcv msgctl
    mq_open mq_unlink mq_timedsend mq_timedreceive mq_notify mq_getsetattr
    add_key request_key keyctl
    perf_event_open bpf userfaultfd ptrace process_vm_readv process_vm_writev kcmp pidfd_getfd
    pidfd_open pidfd_send_signal process_madvise process_mrelease get_robust_list migrate_pages
    move_pages mknod mknodat reboot kexec_load kexec_file_load init_module finit_module
    delete_module sethostname setdomainname mount umount2 mount_setattr move_mount open_tree
    fsopen fsconfig fsmount fspick pivot_root chroot swapon swapoff unshare setns
    open_by_handle_at name_to_handle_at acct quotactl quotactl_fd clock_settime clock_adjtime
    settimeofday adjtimex syslog iopl ioperm modify_ldt personality setuid setgid setreuid
    setregid setresuid setresgid setfsuid setfsgid setgroups capset fanotify_init fanotify_mark
    memfd_secret vhangup
""".split()) | METADATA

#: calls whose first argument is a pid: allowed on the child itself only (0 or its own pid)
_OWN_PID = frozenset("""
    prlimit64 sched_setaffinity sched_getaffinity sched_setscheduler sched_getscheduler
    sched_setparam sched_getparam sched_setattr sched_getattr sched_rr_get_interval
""".split())
#: (which, who): PRIO_PROCESS = 0, IOPRIO_WHO_PROCESS = 1, then who must be 0 or its own pid
_OWN_WHO = {"getpriority": 0, "setpriority": 0, "ioprio_get": 1, "ioprio_set": 1}
#: CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET
_CLONE_NAMESPACES = 0x7E020000
#: FS_IOC_SETFLAGS (64- and 32-bit), FS_IOC_FSSETXATTR, TIOCSTI, TIOCLINUX
_DENIED_IOCTLS = (0x40086602, 0x40046602, 0x401C5820, 0x5412, 0x541C)

_LD, _JEQ, _JGE, _JSET, _JA, _RET = 0x20, 0x15, 0x35, 0x45, 0x05, 0x06
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000


def _block(body: list, deny: int = errno.EPERM) -> list:
    """``body`` with ``"allow"``/``"deny"`` jump targets resolved to two returns appended."""
    targets = {"allow": len(body), "deny": len(body) + 1}
    out = []
    for i, (code, jt, jf, k) in enumerate(body):
        jt = targets[jt] - i - 1 if isinstance(jt, str) else jt
        jf = targets[jf] - i - 1 if isinstance(jf, str) else jf
        out.append((code, jt, jf, k))
    return out + [(_RET, 0, 0, _RET_ALLOW), (_RET, 0, 0, _RET_ERRNO | deny)]


def seccomp_program(machine: str, pid: int,
                    deny: Iterable[str] = ()) -> Optional[list[tuple[int, int, int, int]]]:
    """The filter for ``machine`` (``x86_64``, ``aarch64``) in a process ``pid``, as classic BPF
    instructions ``(code, jt, jf, k)``; None on another architecture. ``deny`` names calls of
    the allow-list refused (EPERM) too, where Landlock does not cover them on this kernel.

    The syscall number is looked up in a binary tree of the allowed and refused calls; a call
    with an argument rule gets a short block of its own."""
    arch = _SECCOMP_ARCH.get(machine)
    if arch is None:
        return None
    audit_arch, table, x32 = arch
    numbers = dict(syscalls.NEWER, **table)
    lo, hi = ((0, 4) if sys.byteorder == "little" else (4, 0))

    def arg(i: int, half: int) -> int:
        return 16 + 8 * i + half

    def own_pid(i: int) -> list:
        return [(_LD, 0, 0, arg(i, hi)), (_JEQ, 0, "deny", 0), (_LD, 0, 0, arg(i, lo)),
                (_JEQ, "allow", 0, 0), (_JEQ, "allow", "deny", pid)]

    actions: dict[int, list] = {}

    def add(name: str, block: list) -> None:
        nr = numbers.get(name)
        if nr is not None:
            actions[nr] = block

    for name in _ALLOW:
        add(name, [(_RET, 0, 0, _RET_ALLOW)])
    for name in _DENY | set(deny):
        add(name, [(_RET, 0, 0, _RET_ERRNO | errno.EPERM)])
    add("clone3", [(_RET, 0, 0, _RET_ERRNO | errno.ENOSYS)])  # glibc falls back to clone
    for name in _OWN_PID:
        add(name, _block(own_pid(0)))
    for name, which in _OWN_WHO.items():
        add(name, _block([(_LD, 0, 0, arg(0, lo)), (_JEQ, 0, "deny", which),
                          (_LD, 0, 0, arg(0, hi)), (_JEQ, 0, "deny", 0)] + own_pid(1)))
    add("clone", _block([(_LD, 0, 0, arg(0, lo)), (_JSET, "deny", "allow", _CLONE_NAMESPACES)]))
    add("kill", _block([(_LD, 0, 0, arg(0, lo)), (_JEQ, "deny", "allow", 0xFFFFFFFF)]))
    add("ioctl", _block([(_LD, 0, 0, arg(1, lo))]
                        + [(_JEQ, "deny", 0, request) for request in _DENIED_IOCTLS]))

    def tree(items: list) -> list:
        if len(items) <= 4:
            code = []
            for nr, block in items:
                code += [(_JEQ, 0, len(block), nr)] + block
            return code + [(_RET, 0, 0, _RET_ERRNO | errno.ENOSYS)]
        mid = len(items) // 2
        left, right = tree(items[:mid]), tree(items[mid:])
        return [(_JGE, 0, 1, items[mid][0]), (_JA, 0, 0, len(left))] + left + right

    prog = [(_LD, 0, 0, 4), (_JEQ, 1, 0, audit_arch), (_RET, 0, 0, _RET_ERRNO | errno.EPERM),
            (_LD, 0, 0, 0)]
    if x32 is not None:  # the x32 ABI's numbers: a second table the filter does not know
        prog += [(_JGE, 0, 1, x32), (_RET, 0, 0, _RET_ERRNO | errno.EPERM)]
    return prog + tree(sorted(actions.items()))


def install(deny: Iterable[str] = ()) -> bool:
    """Install the allow-list filter on this process (``deny``: see :func:`seccomp_program`);
    False on an architecture it does not know."""
    prog = seccomp_program(os.uname().machine, os.getpid(), deny)
    if prog is None:
        return False
    raw = b"".join(struct.pack("=HBBI", *ins) for ins in prog)
    filters = ctypes.create_string_buffer(raw, len(raw))

    class _Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = _Prog(len(prog), ctypes.addressof(filters))
    if _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    if _libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")
    return True
