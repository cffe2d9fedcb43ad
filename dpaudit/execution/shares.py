"""What of the user's files the strict sandbox child may read: which folders are too broad to share
(the root, the system's folders, homes, shared temporary folders), and how a folder holding a
checkout's credentials (``.git``, ``.env`` and the like, at any depth) is shared around them.

Decided in dpaudit's process for the working folder, the mechanism's folder and ``PYTHONPATH``
(:func:`shared_reads`, which knows the user's homes), and in the child for its own import path
(:func:`dpaudit.execution.isolation.read_roots`); Landlock then enforces it
(:func:`dpaudit.execution.isolation.enter`). Imports only the standard library: the child uses it
before it is isolated. The rules and why, each with the hole it closed: docs/sandbox.md.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

__all__ = ["too_broad", "user_homes", "secret_name", "Shared", "shared_reads", "share",
           "SHARED_TEMP", "SYSTEM_TREES", "SYSTEM_ROOTS", "SECRET_NAMES", "MAX_ENTRIES",
           "UNSEARCHED"]


#: folders every program of the machine writes to: other programs keep their files there (a
#: Kerberos ticket cache, an agent's socket folder, another tool's token)
SHARED_TEMP = ("/tmp", "/var/tmp", "/dev/shm")
#: the system's own folders, never a project's: neither they nor anything in them is shared
#: whole (run from /etc, the child read /etc/shadow; from /proc, other processes' command lines)
SYSTEM_TREES = ("/etc", "/proc", "/sys", "/dev", "/run", "/boot")
#: folders that hold the machine's other files: not shared whole themselves (from /opt the child
#: read a runner's credentials), while a project in one of their folders is (``/opt/app``)
SYSTEM_ROOTS = ("/opt", "/var", "/var/lib", "/srv", "/mnt", "/media", "/home", "/root", "/usr",
                "/usr/local", "/snap")


def too_broad(path: str, homes: Iterable[str]) -> Optional[str]:
    """Why the folder ``path`` is not given whole to the strict child (None when it may be): the
    root of the file system, the system's folders (:data:`SYSTEM_TREES`, :data:`SYSTEM_ROOTS`), a
    home folder in ``homes`` (:func:`user_homes`) or a folder that holds one (keys, cloud
    credentials, shell history), or a shared temporary folder (:data:`SHARED_TEMP`). Run from
    ``/`` (a container's default working folder) or from ``~``, the working folder once let the
    audited code read every file the user can."""
    real = os.path.realpath(path)
    if real == "/":
        return "the root of the file system"
    if real in {os.path.realpath(t) for t in SHARED_TEMP}:
        return "a temporary folder every program shares"
    for tree in SYSTEM_TREES:
        if real == tree or real.startswith(tree + "/"):
            return f"the system's own {tree}"
    if real in SYSTEM_ROOTS:
        return "a folder of the system's"
    for home in sorted({os.path.realpath(h) for h in homes if h and os.path.isabs(h)}):
        if real == home:
            return "a user's home folder"
        if home.startswith(real.rstrip("/") + "/"):
            return f"it holds the home folder {home}"
    return None


def user_homes() -> set[str]:
    """The home folders on this machine: ``$HOME`` and every one in the password database (run as
    root, ``/home`` held every user's keys; a service's home, ``/var/lib/jenkins``, holds its
    credentials)."""
    homes = {os.path.expanduser("~")}
    try:
        import pwd

        homes |= {entry.pw_dir for entry in pwd.getpwall() if os.path.isdir(entry.pw_dir)}
    except ImportError:  # pragma: no cover - not a Unix
        pass
    return homes


#: entries never shared from a working, mechanism's, ``PYTHONPATH`` or import-path folder, at
#: any depth: a checkout's credentials (``actions/checkout`` leaves the job's token in
#: ``.git/config``, a second checkout in its own ``.git``), environment files, a tool's keys. Such
#: a folder is shared around them, entry by entry (:func:`shared_reads`)
SECRET_NAMES = frozenset({".git", ".env", ".netrc", ".git-credentials", ".pypirc", ".npmrc",
                          ".aws", ".ssh", ".gnupg", ".docker", ".kube", ".terraform.d"})
#: a folder with more entries than this (all depths) and a secret name among them is not shared:
#: one rule per entry, and a pull request must not switch the rule off by adding files
MAX_ENTRIES = 50_000


def secret_name(name: str) -> bool:
    """Whether an entry of a shared folder is held back (:data:`SECRET_NAMES`, ``.env.*``)."""
    return name in SECRET_NAMES or name.startswith(".env.")


@dataclass(frozen=True)
class Shared:
    """What of the user's files the strict child may read: ``reads`` whole, ``listed`` folders
    it may list but not read (their other entries are in ``reads``), and what was held back, in
    words (``held``)."""

    reads: list
    listed: list
    held: list


def shared_reads(cwd: str, target: str, package_root: str, pythonpath: Sequence[str],
                 homes: Iterable[str]) -> Shared:
    """What of the user's files the strict child may read (:class:`Shared`).

    The working folder, the mechanism's folder and the user's ``PYTHONPATH`` entries are shared
    (:func:`share`) unless :func:`too_broad`: then the mechanism's folder is replaced by the
    mechanism's file (its neighbours cannot be imported), and a working folder or ``PYTHONPATH``
    entry is left out. The mechanism's file itself is always readable, unless it leads to what is
    held back. Of the folder dpaudit is imported from, only the ``dpaudit`` package (an editable
    install's is the whole checkout)."""
    homes = tuple(homes)
    out = Shared([os.path.join(package_root, "dpaudit")], [], [])
    secrets: list[str] = []
    why = too_broad(cwd, homes)
    if why:
        out.held.append(f"the working folder {cwd} ({why})")
    else:
        share(cwd, "the working folder", out, secrets, homes)
    folder = os.path.dirname(target)
    why = too_broad(folder, homes)
    if why:
        out.held.append(f"the mechanism's folder {folder} ({why}): only its file")
    elif os.path.realpath(folder) != os.path.realpath(cwd) or too_broad(cwd, homes):
        share(folder, "the mechanism's folder", out, secrets, homes)
    done = {os.path.realpath(p) for p in (cwd, folder)}  # shared above, or held back
    for entry in pythonpath:
        why = too_broad(entry, homes)
        if why:
            out.held.append(f"the PYTHONPATH entry {entry} ({why})")
        elif os.path.realpath(entry) in done:
            continue
        elif _links_out(entry, (cwd, folder)):
            # written inside the checkout, it leads out of it (a committed `src -> ~/.ssh`)
            out.held.append(f"the PYTHONPATH entry {entry} (a link out of the folder it is in)")
        else:
            share(entry, "the PYTHONPATH entry", out, secrets, homes)
    # the mechanism's file, also as a link to a file elsewhere (the user named it), unless it
    # leads to what is held back: run as Python, a .env's `KEY=value` names its value in the
    # NameError it raises
    if _clear(target, secrets) and not _hidden(target, secrets, homes):
        out.reads.append(target)
    return out


def _links_out(path: str, folders: Sequence[str]) -> bool:
    """Whether ``path``, written inside one of ``folders``, leads (links resolved) out of it."""
    here = os.path.abspath(path)
    for f in folders:
        if here.startswith(os.path.abspath(f).rstrip("/") + "/"):
            return not os.path.realpath(path).startswith(os.path.realpath(f).rstrip("/") + "/")
    return False


def _hidden(folder: str, secrets: Sequence[str], homes: Sequence[str]) -> bool:
    """Whether ``folder``, its links resolved, is or lies in what is held back: a path with a
    :func:`secret_name` in it, a held-back path of ``secrets``, or a hidden folder of a home
    (``~/.ssh``, ``~/.config``: a committed link ``src -> ~/.ssh`` passed every other check)."""
    real = os.path.realpath(folder)
    if any(secret_name(part) for part in real.split("/")) or not _clear(folder, secrets, False):
        return True
    for home in homes:
        base = os.path.realpath(home).rstrip("/") + "/"
        if real.startswith(base) and real[len(base):].startswith("."):
            return True
    return False


def share(folder: str, name: str, out: Shared, secrets: list, homes: Sequence[str] = ()) -> bool:
    """Share ``folder`` (into ``out``; the real paths held back are added to ``secrets``): whole when
    no entry at any depth is a :func:`secret_name`; else around them: each folder on the way to
    one may be listed, every other entry is read whole, and an entry that is a link to what is
    not shared (out of the folder, or to a held-back entry) is left out; not at all beside more
    than :data:`MAX_ENTRIES` entries. Whether it was shared. Runs in dpaudit's process for the
    user's folders, and in the child for its own import path (a ``.pth`` line of an editable
    install names a checkout). A folder that is or lies in what is held back (:func:`_hidden`)
    is not shared."""
    if _hidden(folder, secrets, homes):
        out.held.append(f"{name} {folder} (it leads to what is not shared)")
        return False
    found = _secrets_in(folder)
    if isinstance(found, str):
        out.held.append(f"{name} {folder} ({found})")
        return False
    if not found:
        out.reads.append(folder)
        return True
    secrets.extend(os.path.realpath(f) for f in found)
    left: list[str] = []
    _around(folder, folder, found, secrets, out, left)
    shown = sorted(_shown(os.path.relpath(f, folder)) for f in found)
    if len(shown) > 4:  # a folder of many checkouts: the words stay short (isolation.held_words)
        shown = shown[:3] + [f"{len(shown) - 3} more"]
    out.held.append(f"{', '.join(shown)} of {name} {folder}" +
                    (f", and its links to what is not shared ({', '.join(sorted(left))})"
                     if left else ""))
    return True


#: folders not looked into for credential names: a virtual environment's (it holds a
#: ``pyvenv.cfg``; a project's own ``.venv`` has tens of thousands of files), and caches a
#: program writes. A checkout cannot carry a ``.git`` folder (git refuses the path), so what a
#: pull request puts in them is its own, not the user's
UNSEARCHED = frozenset({"__pycache__", "node_modules", ".mypy_cache", ".pytest_cache",
                        ".ruff_cache", ".tox", ".nox"})


def _secrets_in(folder: str) -> "list[str] | str":
    """The entries of ``folder``, at any depth, that are held back (links are not followed, nor
    are :data:`UNSEARCHED` folders and virtual environments); or why it cannot be told: more
    than :data:`MAX_ENTRIES` entries, or a folder in it that cannot be listed (a walk that
    skipped it would share what it holds)."""
    found: list[str] = []
    seen, failed = 0, []
    for root, dirs, files in os.walk(folder, onerror=failed.append):
        seen += len(dirs) + len(files)
        if seen > MAX_ENTRIES:
            return (f"more than {MAX_ENTRIES:,} entries to search for .git, .env and the like: "
                    "too many to share one by one")
        found += [os.path.join(root, n) for n in dirs + files if secret_name(n)]
        dirs[:] = [d for d in dirs if not secret_name(d) and d not in UNSEARCHED
                   and not os.path.exists(os.path.join(root, d, "pyvenv.cfg"))]
    if failed:
        return "a folder in it cannot be listed, so it cannot be searched for .git, .env and the like"
    return found


def _around(top: str, folder: str, found: list, secrets: list, out: Shared, left: list) -> None:
    """List ``folder`` and share its entries, around the held-back paths ``found`` beneath it."""
    out.listed.append(folder)
    try:
        entries = sorted(os.listdir(folder))
    except OSError:
        return
    for e in entries:
        path = os.path.join(folder, e)
        if path in found:
            continue
        if any(f.startswith(path + "/") for f in found):
            _around(top, path, found, secrets, out, left)
        elif not _links_out(path, (top,)) and _clear(path, secrets):
            out.reads.append(path)
        else:
            left.append(_shown(os.path.relpath(path, top)))


def _clear(path: str, secrets: Sequence[str], holding: bool = True) -> bool:
    """Whether ``path``, its links resolved, neither is, lies in nor (with ``holding``) holds a
    held-back path (``secrets``: real paths, as :func:`share` keeps them)."""
    real = os.path.realpath(path)
    for r in secrets:
        if real == r or real.startswith(r + "/") or (holding and r.startswith(real + "/")):
            return False
    return True


def _shown(name: str) -> str:
    """A name as the words about what is held back show it: quoted, escapes and all, unless
    plainly printable (a checkout's file names are anyone's: ``.env.\x1b[2J`` must not reach a
    terminal)."""
    return name if name.isprintable() else repr(name)
