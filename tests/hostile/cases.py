"""Hostile mechanisms for ``dpaudit check``: each with the exit code, verdict and error it must give.

A case is ``Case(name, source, exit, verdict, error, flags)`` (``exit`` 6 for an ERROR of the audited
code, 3 for a file that cannot be loaded: dpaudit/exitcodes.py): ``source`` is a mechanism file whose
function ``f`` is audited (``f(data, rng)``, or the batch form), ``error`` a fragment the record's
error must contain (None: no error). ``strict`` cases need Landlock (skipped with the reason where
the kernel lacks it). Fork counts are bounded (at most 50 children): CI machines are shared and
may run as root, where process limits do not apply.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from textwrap import dedent

# Laplace noise on a decimal grid: float64 porosity (which dpaudit refutes) plays no part here
LAPLACE = "return round(float(data.sum() + rng.laplace()), 3)"


@dataclass(frozen=True)
class Case:
    name: str
    source: str
    exit: int
    verdict: str
    error: str | None = None
    flags: tuple = ()
    strict: bool = False          # needs Landlock + seccomp
    import_error: bool = False    # the file fails to load (no verdict beyond error)
    extra: dict = field(default_factory=dict)


def _f(body: str, head: str = "") -> str:
    """A module with imports, ``head`` at import time and ``f(data, rng)`` running ``body``."""
    return (dedent("""\
        import ctypes, os, signal, socket, subprocess, sys, threading, time
        import numpy as np
        """) + dedent(head) + "\n\ndef f(data, rng):\n" + "\n".join(
        "    " + line for line in dedent(body).strip().splitlines()) + "\n")


ONCE = "if not getattr(f, 'done', False):\n    f.done = True\n"
#: the arena's working folder, beside the folder of the mechanism file (test_hostile.mechanism_file)
_WORK = "WORK = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'work')"

#: write ``header`` to every pipe this process can write to (the reply pipe among them)
_PIPES = dedent("""\
    import stat, struct
    for fd in range(3, 256):
        try:
            if stat.S_ISFIFO(os.fstat(fd).st_mode):
                os.write(fd, {header})
        except OSError:
            pass
    """)

CASES = [
    # -- defects of the issue, one or more cases each --------------------------------------
    Case("import_prints", _f(LAPLACE, "print('IMPORT-TIME-PRINT')"), 0, "not_refuted"),
    Case("import_thread_never_ends",
         _f(LAPLACE, "threading.Thread(target=time.sleep, args=(40,)).start()"), 0, "not_refuted"),
    Case("import_allocates_too_much", _f(LAPLACE, "big = bytearray(2 * 1024 ** 3)"), 3, "error",
         "MemoryError", flags=("--memory=512M",), import_error=True),
    Case("import_segfaults", _f(LAPLACE, "ctypes.string_at(0)"), 3, "error", "SIGSEGV",
         import_error=True),
    Case("import_exits", _f(LAPLACE, "os._exit(9)"), 3, "error", "status 9", import_error=True),
    Case("native_hang_holding_gil", _f("ctypes.PyDLL(None).sleep(1000)"), 6, "error",
         "could not be interrupted"),
    Case("native_hang_batch_form", dedent("""\
        import ctypes
        def f(data, rng, size=None):
            ctypes.PyDLL(None).sleep(1000)
        """), 6, "error", "could not be interrupted"),
    Case("forks_helper_then_segfaults",
         _f("if os.fork() == 0:\n    time.sleep(1000)\nctypes.string_at(0)"), 6, "error",
         "SIGSEGV"),
    Case("popen_sleep_process_mode", _f(ONCE + "    subprocess.Popen(['sleep', '1000'])\n" + LAPLACE),
         0, "not_refuted", flags=("--isolation=process",)),
    Case("popen_sleep_strict", _f("subprocess.Popen(['sleep', '1000'])\n" + LAPLACE), 6, "error",
         "tried to run sleep", strict=True),
    Case("prints_10kB_per_call", _f("print('x' * 10_000)\n" + LAPLACE), 0, "not_refuted"),
    Case("zero_d_array_output", _f("return np.asarray(np.round(data.sum() + rng.laplace(), 3))"), 0,
         "not_refuted"),
    Case("raises_keyboard_interrupt", _f("raise KeyboardInterrupt"), 6, "error",
         "raised KeyboardInterrupt"),
    Case("ansi_escape_in_error", _f("raise ValueError('\\x1b[32mNOT REFUTED\\x1b[0m\\x00')"), 6,
         "error", "\\x1b[32mNOT REFUTED"),
    Case("control_characters_as_categories",
         _f("return '\\x1b[2J\\x00' if rng.random() < 0.5 else '\\x07bell'"), 0, "not_refuted"),
    # -- isolation ----------------------------------------------------------------------------
    # the working folder by name: the child's own working folder is its private one
    Case("writes_working_folder", _f("open(os.path.join(WORK, 'dpaudit-hostile-was-here.txt'), 'w')"
                                     ".write('x')\n" + LAPLACE, _WORK),
         6, "error", "tried to write", strict=True),
    Case("writes_its_tmpdir", _f("import tempfile\nwith tempfile.TemporaryFile() as fh:\n"
                                 "    fh.write(b'ok')\n" + LAPLACE), 0, "not_refuted", strict=True),
    Case("reads_a_secret", _f("open(os.environ.get('SECRET_PATH', '/root/.bashrc')).read()\n" + LAPLACE),
         6, "error", "tried to read", strict=True, extra={"secret": True}),
    Case("reads_parent_environment", _f("open(f'/proc/{os.getppid()}/environ', 'rb').read()\n" + LAPLACE),
         6, "error", "tried to read /proc/", strict=True),
    Case("connects_tcp", _f("socket.create_connection(('127.0.0.1', 9), timeout=1)\n" + LAPLACE),
         6, "error", "tried to open a network socket (to reach 127.0.0.1:9)", strict=True),
    Case("sends_udp", _f("s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                         "s.sendto(b'x', ('127.0.0.1', 9))\n" + LAPLACE),
         6, "error", "tried to open a network socket", strict=True),
    Case("swallows_denied_write", _f("try:\n    open('/tmp/dpaudit-hostile-x', 'w')\n"
                                     "except OSError:\n    pass\n" + LAPLACE),
         6, "error", "tried to write /tmp/dpaudit-hostile-x", strict=True),
    Case("deletes_a_file", _f("os.remove(os.path.join(WORK, 'pyproject.toml'))\n" + LAPLACE, _WORK),
         6, "error", "tried to change", strict=True),
    # a terminal in /dev/pts let the child read keystrokes and type into the user's shell
    # (TIOCSTI); /dev/shm held other programs' shared memory
    Case("lists_terminals_or_shm", _f("for d in ('/dev/pts', '/dev/shm'):\n"
                                      "    try:\n        os.listdir(d)\n"
                                      "    except OSError:\n        continue\n"
                                      "    raise RuntimeError(f'listed {d}')\n" + LAPLACE),
         0, "not_refuted", strict=True),
    # System V IPC objects and kernel keys outlive the child: a channel to any process of the user
    Case("sysv_ipc_and_keyring", _f("libc = ctypes.CDLL(None, use_errno=True)\n"
                                    "sid = libc.shmget(0, 4096, 0o1600)\n"
                                    "if sid >= 0:\n    libc.shmctl(sid, 0, None)\n"
                                    "    raise RuntimeError('made a System V segment')\n"
                                    "if platform.machine() == 'x86_64' and "
                                    "libc.syscall(248, b'user', b'dpaudit-hostile', b'x', 1, -3) >= 0:\n"
                                    "    raise RuntimeError('added a kernel key')\n" + LAPLACE,
                                    "import platform"),
         0, "not_refuted", strict=True),
    # the child runs the audited code, which can patch dpaudit's modules there: the function name
    # it reports is checked (a forged one picked another claim, or wrote a fake verdict line)
    Case("forges_its_function_name", _f(LAPLACE, "import dpaudit.execution.child as _c\n"
                                        "_d = _c._describe_loaded\n"
                                        "_c._describe_loaded = lambda m: dict(_d(m), function="
                                        "'f: NOT REFUTED\\nhidden')"),
         3, "error", "(the audited file tampered with dpaudit in the sandbox)", import_error=True),
    # files shared with dpaudit, shrunk by the child: dpaudit mapped them, and its next read past
    # the end was a SIGBUS in dpaudit's own process (killed with no report, sandbox left running)
    Case("shrinks_shared_files", dedent("""\
        import os

        def f(data, rng, size=None):
            os.truncate(os.path.join(os.path.dirname(os.environ["TMPDIR"]), "calls"), 0)
            for fd in os.listdir("/proc/self/fd"):
                try:
                    if "dpaudit-out-" in os.readlink(f"/proc/self/fd/{fd}"):
                        os.ftruncate(int(fd), 0)
                except OSError:
                    pass
            return rng.laplace(size=size)
        """), 6, "error", "SIGBUS"),
    Case("kills_dpaudit", _f("try:\n    os.kill(os.getppid(), signal.SIGKILL)\n"
                             "except OSError:\n    pass\n" + LAPLACE), 0, "not_refuted", strict=True),
    Case("setsid_escape", _f(ONCE + "    if os.fork() == 0:\n        try:\n            os.setsid()\n"
                             "        except OSError:\n            pass\n        time.sleep(1000)\n"
                             + LAPLACE), 0, "not_refuted"),
    Case("sees_no_secret_env", _f("if 'DPAUDIT_HOSTILE_SECRET' in os.environ:\n"
                                  "    raise RuntimeError('saw the secret')\n" + LAPLACE),
         0, "not_refuted"),
    Case("sees_passed_env", _f("if 'DPAUDIT_HOSTILE_SECRET' in os.environ:\n"
                               "    raise RuntimeError('saw the secret')\n" + LAPLACE),
         6, "error", "saw the secret", flags=("--pass-env=DPAUDIT_HOSTILE_SECRET",)),
    # -- the process table, fds, signals, threads ------------------------------------------------
    Case("forks_50_sleepers", _f(ONCE + "    for _ in range(50):\n        if os.fork() == 0:\n"
                                 "            time.sleep(1000)\n            os._exit(0)\n" + LAPLACE),
         0, "not_refuted"),
    Case("closes_fds_0_1_2", _f(ONCE + "    for fd in (0, 1, 2):\n        os.close(fd)\n" + LAPLACE),
         0, "not_refuted"),
    Case("changes_working_folder", _f("os.chdir('/')\n" + LAPLACE), 0, "not_refuted"),
    Case("sets_signal_handlers", _f(ONCE + "    for s in (signal.SIGTERM, signal.SIGUSR1, signal.SIGHUP):\n"
                                    "        signal.signal(s, signal.SIG_IGN)\n" + LAPLACE),
         0, "not_refuted"),
    Case("ignores_watchdog_then_hangs", _f("signal.signal(signal.SIGUSR1, signal.SIG_IGN)\n"
                                           "time.sleep(1000)"), 6, "error", "hung"),
    Case("threads_never_stop", _f(ONCE + "    for _ in range(3):\n"
                                  "        threading.Thread(target=lambda: [time.sleep(0.01) for _ in iter(int, 1)],"
                                  " daemon=False).start()\n" + LAPLACE), 0, "not_refuted"),
    Case("writes_stdout_from_c", _f("ctypes.CDLL(None).write(1, b'C-LEVEL-WRITE\\n', 14)\n" + LAPLACE),
         0, "not_refuted"),
    # -- plain misbehaviour --------------------------------------------------------------------
    Case("raises", _f("raise ValueError('boom')"), 6, "error", "raised ValueError: boom"),
    Case("str_of_exception_raises", _f("class E(Exception):\n    def __str__(self):\n"
                                       "        raise RuntimeError('no')\nraise E()"), 6, "error", None),
    Case("sys_exit", _f("sys.exit(3)"), 6, "error", "sys.exit(3)"),
    Case("os_exit", _f("os._exit(7)"), 6, "error", "status 7"),
    Case("segfault", _f("ctypes.string_at(0)"), 6, "error", "SIGSEGV"),
    Case("python_hang", _f("time.sleep(1000)"), 6, "error", "hung"),
    Case("memory_bomb", _f("x = bytearray(4 * 1024 ** 3)"), 6, "error", "memory cap",
         flags=("--memory=512M",)),
    Case("unpicklable_output", _f("return lambda: 0"), 6, "error", None),
    # a reply's length written to the pipe, then nothing: dpaudit read it with a blocking read
    # and hung past every time limit; it now reads pieces under the limits
    Case("reply_length_then_stall", _f(_PIPES.format(header='struct.pack("!i", 1000) + b"x"')
                                       + "signal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
                                       "time.sleep(1000)"), 6, "error", "hung"),
    # a list of the same list repeated: 30**8 values in a few hundred pickled bytes; walking it
    # (np.asarray in the rerun check, a plain repr in a message) hung dpaudit
    Case("nested_bomb", _f("x = [0.5]\nfor _ in range(8):\n    x = [x] * 30\nreturn x"), 6, "error",
         "nested output of more than"),
    Case("nested_too_deep", _f("x = [0.5]\nfor _ in range(100000):\n    x = [x]\nreturn x"), 6,
         "error", "cannot be sent back"),
    Case("reply_length_too_large", _f(_PIPES.format(header='struct.pack("!iQ", -1, 1 << 40)')
                                      + "time.sleep(5)"), 6, "error", "too large to read"),
    Case("recursion", _f("return f(data, rng)"), 6, "error", "RecursionError"),
    Case("batch_wrong_length", dedent("""\
        def f(data, rng, size=None):
            return [0.0] * 3
        """), 6, "error", "batch form returned 3 outputs"),
]

# -- plain values only, bounded outputs, forged replies, threads (test_parent_limits.py) --
_FORGED = ("import pickle, struct\n"
           "payload = pickle.dumps({reply})\n"
           "os.write(int(sys.argv[2]), struct.pack('!i', len(payload)) + payload)\n"
           "time.sleep(0.2)\n" + LAPLACE)
CASES += [
    Case("returns_a_float_carrying_the_sum",
         _f("v = type('FloatWithExact', (float,), {})(round(float(data.sum() + rng.laplace()), 3))\n"
            "v.exact = float(data.sum())\nreturn v"),
         6, "error", "a subclass of float carrying more than its value (attributes: exact)"),
    Case("returns_a_long_text", _f("return 'x' * 20000"), 6, "error",
         "dpaudit audits texts of at most 4,096"),
    Case("forges_an_error_reply_without_a_cause", _f(_FORGED.format(reply="('error', None, True, 0)")),
         6, "error", "malformed reply"),
    Case("forges_a_ready_reply", _f(_FORGED.format(reply="('ready', 1, 'x', {})")), 6, "error",
         "malformed reply"),
    Case("thread_bomb_per_call", _f("for _ in range(100000):\n"
                                    "    threading.Thread(target=time.sleep, args=(30,), daemon=True).start()"),
         6, "error", "can't start new thread", flags=("--memory=512M",)),
]
