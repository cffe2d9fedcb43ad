"""Folders too broad to share with the audited code (``dpaudit.execution.shares.shared_reads``).

The strict child may read the working folder and the mechanism's folder. Run from ``/`` (a
container's default working folder), from the home folder or from /tmp, that was every file the
user can read: a mechanism read an SSH key planted in the home folder and was NOT REFUTED. Such a
folder is now held back, and a mechanism kept directly in one gets its own file only; the record's
isolation says what was not shared.
"""

from __future__ import annotations

import json
import os

import pytest

from dpaudit.execution.isolation import landlock_abi
from dpaudit.execution.shares import shared_reads, too_broad, user_homes
from .test_hostile import arena  # noqa: F401 - the fixture

ABI = landlock_abi()
needs_landlock = pytest.mark.skipif(ABI < 1, reason=f"needs Landlock (ABI {ABI} here)")
FLAGS = ("--epsilon=1", "--samples=1000", "--call-timeout=2", "--timeout=60", "--quiet")

READS_SECRET = """\
import os

def f(data, rng):
    with open(os.environ["SECRET_PATH"]) as fh:
        fh.read()
    return round(float(data.sum() + rng.laplace()), 3)
"""
HONEST = """\
def f(data, rng):
    return round(float(data.sum() + rng.laplace()), 3)
"""


def test_the_root_a_home_what_holds_it_and_shared_temporary_folders_are_too_broad(tmp_path):
    home = tmp_path / "home" / "alice"
    (home / "project").mkdir(parents=True)
    (tmp_path / "link").symlink_to(home)
    homes = [str(home)]
    assert too_broad("/", homes) == "the root of the file system"
    assert too_broad(str(home), homes) == "a user's home folder"
    assert too_broad(str(tmp_path / "link"), homes) == "a user's home folder"  # by its real path
    assert too_broad(str(tmp_path / "home"), homes) == f"it holds the home folder {home}"
    assert too_broad(str(tmp_path), homes) == f"it holds the home folder {home}"
    for shared in ("/tmp", "/var/tmp", "/dev/shm"):
        if os.path.isdir(shared) and not os.path.islink(shared):
            # (this test's home lies under /tmp itself: a home elsewhere)
            assert too_broad(shared, ["/home/alice"]) == "a temporary folder every program shares"
    assert too_broad(str(home / "project"), homes) is None
    # every user's home counts, not only the running user's (run as root, /home holds them all)
    pwd = pytest.importorskip("pwd")
    assert {e.pw_dir for e in pwd.getpwall() if os.path.isdir(e.pw_dir)} <= user_homes()
    assert too_broad(str(tmp_path / "home2"), homes) is None  # a name that only begins alike


def test_a_broad_folder_is_held_back_and_a_mechanism_kept_there_gets_its_file(tmp_path):
    home = tmp_path / "home"
    project = home / "project"
    project.mkdir(parents=True)
    target = str(home / "m.py")
    shared = shared_reads(str(home), target, str(project), ["/", str(project)], [str(home)])
    assert shared.reads == [str(project / "dpaudit"), str(project), target] and not shared.listed
    assert shared.held == [f"the working folder {home} (a user's home folder)",
                           f"the mechanism's folder {home} (a user's home folder): only its file",
                           "the PYTHONPATH entry / (the root of the file system)"]
    shared = shared_reads(str(project), str(project / "m.py"), "/", [], [str(home)])
    assert (shared.reads, shared.listed, shared.held) == (
        ["/dpaudit", str(project), str(project / "m.py")], [], [])


def test_system_folders_and_what_lies_in_them_are_too_broad():
    for path in ("/etc", "/etc/ssh", "/proc", "/proc/1", "/sys", "/dev", "/run", "/boot"):
        assert too_broad(path, []) == f"the system's own {'/' + path.split('/')[1]}", path
    for path in ("/opt", "/var", "/var/lib", "/srv", "/mnt", "/usr"):
        assert too_broad(path, []) == "a folder of the system's", path
    for path in ("/opt/app", "/srv/project", "/var/lib/jenkins/workspace/job"):
        assert too_broad(path, []) is None, path


def test_a_checkouts_credentials_are_held_back_entry_by_entry(tmp_path):
    """actions/checkout leaves the job's token in .git/config: a working or mechanism's folder
    that holds .git (or .env, .netrc, ...) is shared entry by entry without it."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    for name in ("m.py", ".env", ".env.local", "data.csv"):
        (repo / name).write_text("x")
    shared = shared_reads(str(repo), str(repo / "m.py"), str(tmp_path), [], [])
    assert shared.listed == [str(repo)]
    assert set(shared.reads) == {str(tmp_path / "dpaudit"), str(repo / "src"), str(repo / "m.py"),
                                 str(repo / "data.csv")}
    assert shared.held == [f".env, .env.local, .git of the working folder {repo}"]
    (repo / ".env.\x1b[2J").write_text("x")  # a name that would clear a terminal is shown quoted
    assert shared_reads(str(repo), str(repo / "m.py"), str(tmp_path), [], []).held == [
        f"'.env.\\x1b[2J', .env, .env.local, .git of the working folder {repo}"]
    (repo / ".env.\x1b[2J").unlink()
    # an entry is granted by what it leads to: a link out of the folder is left out, one inside kept
    (repo / "notes").symlink_to(tmp_path / "elsewhere")
    (tmp_path / "elsewhere").mkdir()
    (repo / "latest").symlink_to(repo / "src")
    (repo / "history").symlink_to(repo / ".git")  # a link to what is held back
    shared = shared_reads(str(repo), str(repo / "m.py"), str(tmp_path), [], [])
    assert str(repo / "latest") in shared.reads and str(repo / "notes") not in shared.reads
    assert str(repo / "history") not in shared.reads
    assert shared.held == [f".env, .env.local, .git of the working folder {repo}, and its links "
                           "to what is not shared (history, notes)"]


def test_a_checkout_with_too_many_entries_to_share_one_by_one_is_not_shared(tmp_path, monkeypatch):
    """Beside .git, more entries than the rules may hold: the folder is not shared (its
    mechanism's file is), so adding files in a pull request cannot switch the rule off."""
    from dpaudit.execution import shares  # the limit, lowered for the test

    monkeypatch.setattr(shares, "MAX_ENTRIES", 3)
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    for name in ("m.py", "a", "b", "c"):
        (repo / name).write_text("x")
    shared = shared_reads(str(repo), str(repo / "m.py"), str(tmp_path), [], [])
    assert shared.reads == [str(tmp_path / "dpaudit"), str(repo / "m.py")] and not shared.listed
    assert shared.held == [f"the working folder {repo} (more than 3 entries to search for .git, "
                           ".env and the like: too many to share one by one)"]


def test_no_import_path_or_library_folder_shares_a_home_or_the_root(tmp_path, monkeypatch):
    from dpaudit.execution import isolation  # private: the read roots of the strict child

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("LD_LIBRARY_PATH", f"{home}:/")
    monkeypatch.syspath_prepend(str(home))  # as a .pth line would
    roots = isolation.read_roots([], [str(home)])
    assert str(home) not in roots and "/" not in roots
    assert not any(r.startswith("/proc/sys/net") or r == "/proc/sys" for r in roots)


def _run(arena, monkeypatch, cwd, mechanism, secret=None):
    from dpaudit.cli import run

    monkeypatch.chdir(cwd)
    if secret is not None:
        monkeypatch.setenv("SECRET_PATH", str(secret))
    out = arena["tmp"] / "r.json"
    code = run(["check", f"{mechanism}:f", *FLAGS, "--pass-env=SECRET_PATH", f"--json={out}"])
    (rec,) = json.loads(out.read_text())["results"]
    return int(code), rec


def _plant(folder, name="id_ed25519"):
    ssh = folder / ".ssh"
    ssh.mkdir(parents=True)
    secret = ssh / name
    secret.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    secret.chmod(0o600)
    return secret


@needs_landlock
def test_run_from_the_home_folder_the_code_cannot_read_a_key_there(arena, monkeypatch):
    home = arena["tmp"] / "home"
    secret = _plant(home)
    monkeypatch.setenv("HOME", str(home))
    mech = arena["tmp"] / "mech" / "m.py"
    mech.parent.mkdir()
    mech.write_text(READS_SECRET)
    code, rec = _run(arena, monkeypatch, home, mech, secret)
    assert (code, rec["verdict"]) == (6, "error"), rec.get("error")
    assert f"tried to read {secret}" in rec["error"], rec["error"]
    assert f"not shared: the working folder {home} (a user's home folder)" in rec["error"]


@pytest.mark.slow
@needs_landlock
def test_run_from_the_root_of_the_file_system_the_code_reads_nothing_outside(arena, monkeypatch):
    secret = _plant(arena["tmp"] / "elsewhere")
    mech = arena["tmp"] / "mech" / "m.py"
    mech.parent.mkdir()
    mech.write_text(READS_SECRET)
    code, rec = _run(arena, monkeypatch, "/", mech, secret)
    assert (code, rec["verdict"]) == (6, "error"), rec.get("error")
    assert f"tried to read {secret}" in rec["error"], rec["error"]
    assert "not shared: the working folder / (the root of the file system)" in rec["error"]


@pytest.mark.slow
@needs_landlock
def test_a_mechanism_kept_in_the_home_folder_runs_on_its_file_alone(arena, monkeypatch, capfd):
    home = arena["tmp"] / "home"
    secret = _plant(home)
    monkeypatch.setenv("HOME", str(home))
    (home / "m.py").write_text(HONEST)
    code, rec = _run(arena, monkeypatch, arena["work"], home / "m.py")
    assert (code, rec["verdict"]) == (0, "not_refuted"), rec.get("error")
    assert rec["isolation"].endswith(f"not shared: the mechanism's folder {home} (a user's home "
                                     "folder): only its file"), rec["isolation"]
    (home / "m.py").write_text(READS_SECRET)
    code, rec = _run(arena, monkeypatch, arena["work"], home / "m.py", secret)
    assert (code, rec["verdict"]) == (6, "error") and f"tried to read {secret}" in rec["error"]
    # its neighbours are not importable, and the error says why
    (home / "helper.py").write_text(HONEST)
    (home / "m.py").write_text("from helper import f  # noqa\n")
    from dpaudit.cli import run

    code = run(["check", f"{home / 'm.py'}:f", *FLAGS])
    err = capfd.readouterr().err
    assert code == 3 and "No module named 'helper'" in err and "keep the mechanism in a folder of its own" in err, err


@needs_landlock
def test_a_mechanism_in_a_checkout_imports_its_neighbours_and_cannot_read_the_token(arena, monkeypatch):
    repo = arena["tmp"] / "repo"
    (repo / ".git").mkdir(parents=True)
    token = repo / ".git" / "config"
    token.write_text('[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic eC1hY2Nlc3M=\n')
    (repo / "helper.py").write_text(HONEST)
    (repo / "m.py").write_text("from helper import f  # noqa\n")
    code, rec = _run(arena, monkeypatch, repo, repo / "m.py")
    assert (code, rec["verdict"]) == (0, "not_refuted"), rec.get("error")
    assert rec["isolation"].endswith(f"not shared: .git of the working folder {repo}")
    (repo / "m.py").write_text(READS_SECRET)
    code, rec = _run(arena, monkeypatch, repo, repo / "m.py", token)
    assert (code, rec["verdict"]) == (6, "error"), rec.get("error")
    assert f"tried to read {token}" in rec["error"], rec["error"]
    # nor through a link the checkout carries to a folder outside it
    secret = _plant(arena["tmp"] / "elsewhere")
    (repo / "notes").symlink_to(secret.parent)
    code, rec = _run(arena, monkeypatch, repo, repo / "m.py", repo / "notes" / secret.name)
    assert (code, rec["verdict"]) == (6, "error"), rec.get("error")
    assert f"tried to read {repo / 'notes' / secret.name}" in rec["error"], rec["error"]


def test_credentials_at_any_depth_and_on_the_import_paths_are_held_back(tmp_path, monkeypatch):
    """A second checkout's .git, a monorepo's backend/.env, a PYTHONPATH entry that is the
    working folder or a link into its .git, a folder a .pth line adds: each is shared around what
    it holds back; a mechanism file that links to a file elsewhere is still readable."""
    from dpaudit.execution import isolation, shares  # private: the child's import-path roots

    ws = tmp_path / "ws"
    for d in ("a/.git", "b", "backend", "lib"):
        (ws / d).mkdir(parents=True)
    (ws / "a" / ".git" / "config").write_text("token")
    (ws / "backend" / ".env").write_text("DB_PASSWORD=x")
    (ws / "backend" / "app.py").write_text("x")
    (ws / "lib" / "python").symlink_to(ws / "a" / ".git")
    elsewhere = tmp_path / "elsewhere.py"
    elsewhere.write_text(HONEST)
    (ws / "b" / "m.py").symlink_to(elsewhere)
    shared = shared_reads(str(ws), str(ws / "b" / "m.py"), str(tmp_path),
                          [str(ws), str(ws / "lib" / "python")], [])
    assert shared.held[0] == f"a/.git, backend/.env of the working folder {ws}"
    assert f"the PYTHONPATH entry {ws / 'lib' / 'python'} (it leads to what is not shared)" in shared.held
    assert set(shared.listed) >= {str(ws), str(ws / "a"), str(ws / "backend")}
    assert str(ws / "backend" / "app.py") in shared.reads and str(ws / "b" / "m.py") in shared.reads
    # ws/lib is shared whole: Landlock resolves its link python -> ../a/.git outside it
    assert not any(r.endswith((".git", ".env")) or r in (str(ws), str(ws / "a")) for r in shared.reads)
    assert len(shared.held) == 2  # the PYTHONPATH entry that is the working folder: shared above
    # the child's own import path: a checkout a .pth line names is shared around its .git
    monkeypatch.syspath_prepend(str(ws / "a"))
    around = shares.Shared([], [], [])
    roots = isolation._python_roots([], around)  # private: the child's import-path roots
    assert str(ws / "a") not in roots and str(ws / "a") in around.listed
    assert f".git of the import path's folder {ws / 'a'}" in around.held


@pytest.mark.slow
@needs_landlock
def test_a_second_checkouts_token_is_not_readable(arena, monkeypatch):
    ws = arena["tmp"] / "ws"
    (ws / "other" / ".git").mkdir(parents=True)
    token = ws / "other" / ".git" / "config"
    token.write_text("extraheader = AUTHORIZATION: basic eC1hY2Nlc3M=\n")
    (ws / "main").mkdir()
    (ws / "main" / "m.py").write_text(READS_SECRET)
    code, rec = _run(arena, monkeypatch, ws, ws / "main" / "m.py", token)
    assert (code, rec["verdict"]) == (6, "error"), rec.get("error")
    assert f"tried to read {token}" in rec["error"], rec["error"]


def test_a_projects_virtual_environment_is_not_searched_nor_counted(tmp_path, monkeypatch):
    """A project's own .venv holds tens of thousands of files: walking it would make a checkout
    with .git unshareable (and slow), and a pull request cannot put the user's secrets there."""
    from dpaudit.execution import shares  # the limit, lowered for the test

    monkeypatch.setattr(shares, "MAX_ENTRIES", 6)
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".venv" / "lib").mkdir(parents=True)
    (repo / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    for i in range(20):
        (repo / ".venv" / "lib" / f"m{i}.py").write_text("x")
    (repo / "node_modules").mkdir()
    (repo / "m.py").write_text(HONEST)
    shared = shared_reads(str(repo), str(repo / "m.py"), str(tmp_path), [], [])
    assert shared.listed == [str(repo)] and str(repo / ".venv") in shared.reads
    assert shared.held == [f".git of the working folder {repo}"]


def test_a_link_committed_into_a_checkout_shares_nothing_it_leads_to(tmp_path):
    """A committed `src -> ~/.ssh` (or to another checkout's .git, or to ~/.config), given as
    PYTHONPATH=src or entered with cd: the home's hidden folders, what has a credential name in
    its path and what a link leads to out of the checkout are not shared."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("key")
    (home / ".config" / "gh").mkdir(parents=True)
    other = home / "work" / "other"
    (other / ".git").mkdir(parents=True)
    repo = home / "work" / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "m.py").write_text(HONEST)
    for name, to in (("src", home / ".ssh"), ("gsrc", other / ".git"), ("csrc", home / ".config")):
        (repo / name).symlink_to(to)
    homes = [str(home)]
    shared = shared_reads(str(repo), str(repo / "m.py"), str(tmp_path),
                          [str(repo / "src"), str(repo / "gsrc"), str(repo / "csrc")], homes)
    assert not any(r.startswith((str(home / ".ssh"), str(home / ".config"), str(other)))
                   or r.endswith(("src", "gsrc", "csrc")) for r in shared.reads), shared.reads
    assert sum("(a link out of the folder it is in)" in h for h in shared.held) == 3, shared.held
    # a mechanism file that links to a home's hidden file or to a .env is not shared: run as
    # Python, `KEY=value` names the value in its NameError
    (home / ".config" / "app.env").write_text("API_KEY=abc123\n")
    (repo / "k.py").symlink_to(home / ".config" / "app.env")
    shared = shared_reads(str(repo), str(repo / "k.py"), str(tmp_path), [], homes)
    assert str(repo / "k.py") not in shared.reads
    # entered with cd: the working folder is a hidden folder of the home, or lies in a .git
    for cwd in (home / ".ssh", other / ".git"):
        shared = shared_reads(str(cwd), str(repo / "m.py"), str(tmp_path), [], homes)
        assert shared.held[0] == f"the working folder {cwd} (it leads to what is not shared)"
        assert not any(r.startswith(str(cwd)) for r in shared.reads)


def test_a_folder_that_cannot_be_searched_is_not_shared(tmp_path, monkeypatch):
    """A folder in the checkout that cannot be listed (a non-root user, mode 0311) would hide
    a .env from the search: the checkout is then not shared."""
    from dpaudit.execution import shares  # the walk

    repo = tmp_path / "repo"
    (repo / "vendor").mkdir(parents=True)
    walk = os.walk

    def unlistable(top, onerror=None, **kw):
        for root, dirs, files in walk(top, onerror=onerror, **kw):
            if root.endswith("vendor") and onerror is not None:
                onerror(PermissionError(13, "Permission denied", root))
                continue
            yield root, dirs, files

    monkeypatch.setattr(shares.os, "walk", unlistable)
    shared = shared_reads(str(repo), str(repo / "m.py"), str(tmp_path), [], [])
    assert shared.held == [f"the working folder {repo} (a folder in it cannot be listed, so it "
                           "cannot be searched for .git, .env and the like)"]
    assert str(repo) not in shared.reads
