"""The suite's user-dependent parts (user_parts.py) as a second user, so that a part that
works only for root, or only until root has run, cannot come back unseen (issue 34).

- As root (CI): a user is created for the test (``mpiscope-t<pid>``, no sudo, a home in a
  temporary directory), runs the parts with a user's PATH (no /usr/sbin), and is deleted;
  afterwards no file of that user is left in /tmp, /var/tmp or /dev/shm (but the
  ``/tmp/pytest-of-<user>`` pytest keeps, removed too) and no process of it runs.
- As a user with passwordless sudo: root runs the parts, in this user's checkout.
- Meanwhile this side holds its own user's big-message lock: the other side must not wait
  for it or trip over its file.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

import mpitest

PARTS = "tests/users/user_parts.py"
PREFIX = "mpiscope-t"  # created users: PREFIX + the pid of the pytest that made them
USER_PATH = "/usr/local/bin:/usr/bin:/bin"  # a login user's PATH: the daemons' sbin is not on it


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=kw.pop("timeout", 120), **kw)


def _sudo_works() -> bool:
    return shutil.which("sudo") is not None and _run(["sudo", "-n", "true"]).returncode == 0


def _forget_stale_users() -> None:
    """Users an earlier run created and could not delete (its pytest was killed)."""
    for p in pwd.getpwall():
        pid = p.pw_name[len(PREFIX):]
        if p.pw_name.startswith(PREFIX) and pid.isdigit() and not Path(f"/proc/{pid}").exists():
            _run(["pkill", "-KILL", "-u", p.pw_name])
            _run(["userdel", p.pw_name])
            shutil.rmtree(Path(tempfile.gettempdir()) / f"pytest-of-{p.pw_name}", True)


@contextlib.contextmanager
def _created_user(home: Path):
    _forget_stale_users()
    name = f"{PREFIX}{os.getpid()}"
    for _ in range(20):  # useradd fails while another one holds /etc/passwd's lock
        made = _run(["useradd", "--no-create-home", "--home-dir", str(home),
                     "--shell", "/bin/sh", name])
        if made.returncode == 0 or "lock" not in made.stderr:
            break
        time.sleep(0.5)
    assert made.returncode == 0, made.stderr
    user = pwd.getpwnam(name)
    try:
        home.mkdir()
        os.chown(home, user.pw_uid, user.pw_gid)
        yield user
    finally:
        _run(["pkill", "-KILL", "-u", name])
        _run(["userdel", name])
        shutil.rmtree(Path(tempfile.gettempdir()) / f"pytest-of-{name}", True)


def _reaches(user, path: Path) -> bool:
    return _run(["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}",
                 "--init-groups", "test", "-r", str(path)]).returncode == 0


def _leftovers(uid: int, name: str, work: Path) -> list[str]:
    found = _run(["find", "/tmp", "/var/tmp", "/dev/shm", "-xdev", "-user", str(uid),
                  "-not", "-path", f"/tmp/pytest-of-{name}*",
                  "-not", "-path", f"{work}/*"]).stdout.split()
    # running processes (a killed job's ranks are zombies until init reaps them)
    procs = [p for p in _run(["ps", "-u", str(uid), "-o", "pid=,stat=,args="]).stdout.splitlines()
             if p.split()[1][0] != "Z"]
    return found + procs


def _as_created_user(work: Path) -> tuple[subprocess.CompletedProcess, list[str]]:
    with _created_user(work / "home") as user:
        env = {"PATH": USER_PATH, "HOME": user.pw_dir, "USER": user.pw_name,
               "LOGNAME": user.pw_name, "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}
        as_user = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}",
                   "--init-groups", "env", "-i", *[f"{k}={v}" for k, v in env.items()]]
        repo = mpitest.REPO
        pytest_cmd = [".venv/bin/python", "-m", "pytest", "-q", "-p", "no:cacheprovider", PARTS]
        if _reaches(user, repo / PARTS):
            cmd, cwd = [*as_user, *pytest_cmd], repo
        else:  # the checkout is under a directory only root enters: show it elsewhere
            seen = work / "repo"
            seen.mkdir()
            cmd = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                   'mount --bind "$1" "$2" && cd "$2" && shift 2 && exec "$@"', "sh",
                   str(repo), str(seen), *as_user, *pytest_cmd]
            cwd = work
        proc = _run(cmd, cwd=cwd, timeout=600)
        return proc, _leftovers(user.pw_uid, user.pw_name, work)


@pytest.mark.privileged
def test_user_dependent_parts_as_another_user(user_lock):
    work = Path(tempfile.mkdtemp(prefix="mpiscope-other-user-"))
    try:
        os.chmod(work, 0o755)  # the created user reaches its home in it
        with user_lock("big-message"):
            if os.getuid() == 0:
                proc, left = _as_created_user(work)
                assert left == [], left
            elif _sudo_works():
                env = [f"PATH={os.environ['PATH']}", "PYTHONDONTWRITEBYTECODE=1"]
                proc = _run(["sudo", "-n", "env", "-i", *env, ".venv/bin/python", "-m",
                             "pytest", "-q", "-p", "no:cacheprovider", PARTS],
                            cwd=mpitest.REPO, timeout=600)
            else:
                pytest.fail("running the suite's parts as another user needs root or "
                            "passwordless sudo (docs/install.md)", pytrace=False)
        assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
        assert " passed" in proc.stdout and "failed" not in proc.stdout, proc.stdout[-2000:]
    finally:
        shutil.rmtree(work, True)
