"""A tiny filesystem (a tmpfs of a few KiB) that a test's MPI jobs can fill, for any user.

Three ways to get one, tried in this order:

- ``mount``: the tests run as root: ``mount -t tmpfs`` on the directory.
- ``userns``: an unprivileged user namespace (``unshare --user --mount``), where the
  kernel allows it (Debian 12 does; Ubuntu 24.04's AppArmor may not). A holder process
  keeps the namespace and its tmpfs alive; the job enters it (``nsenter --user --mount
  --preserve-credentials``, so it keeps the user's own uid, mapped to itself) and the
  test reads the files through ``/proc/<holder>/root``. Needs no privilege at all.
- ``sudo``: ``sudo -n mount -t tmpfs -o uid=...`` (passwordless sudo, which setup.sh's
  apt step already relies on) and ``sudo -n umount``.

``MPISCOPE_TEST_TINYFS=mount|userns|sudo`` forces one. Without any of them the test fails
in one line that says what it needs (docs/install.md, "Tests that need privileges").
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

METHODS = ("mount", "userns", "sudo")

# The holder of the ``userns`` method: mount(2) itself (mount(8) refuses a non-root
# uid even with the capability), say "ready", and keep the namespace until stdin closes.
_HOLDER = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.mount(b"tmpfs", sys.argv[1].encode(), b"tmpfs", 0, sys.argv[2].encode()) != 0:
    sys.exit("mount: " + os.strerror(ctypes.get_errno()))
print("ready", flush=True)
sys.stdin.read()
"""


@dataclass
class TinyFS:
    """The tmpfs as the job sees it (``job``) and as the test reads it (``view``);
    ``prefix`` goes in front of the job's command line."""

    method: str
    job: Path
    view: Path
    prefix: list[str] = field(default_factory=list)


def _options(size: int) -> str:
    return f"size={size},mode=0700,uid={os.getuid()},gid={os.getgid()}"


@contextlib.contextmanager
def _mount(mnt: Path, size: int, sudo: list[str]):
    subprocess.run([*sudo, "mount", "-t", "tmpfs", "-o", _options(size), "tmpfs", str(mnt)],
                   check=True, capture_output=True, text=True, timeout=60)
    try:
        yield TinyFS("sudo" if sudo else "mount", mnt, mnt)
    finally:
        subprocess.run([*sudo, "umount", "-l", str(mnt)], check=True, timeout=60)


@contextlib.contextmanager
def _userns(mnt: Path, size: int):
    holder = subprocess.Popen(
        ["unshare", "--user", "--map-current-user", "--keep-caps", "--mount",
         "--propagation", "private", sys.executable, "-c", _HOLDER, str(mnt), _options(size)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        if holder.stdout.readline().strip() != "ready":
            holder.stdin.close()
            raise subprocess.CalledProcessError(holder.wait(timeout=60), holder.args,
                                                stderr=holder.stderr.read())
        yield TinyFS("userns", mnt, Path(f"/proc/{holder.pid}/root{mnt}"),
                     ["nsenter", f"--target={holder.pid}", "--user", "--mount",
                      "--preserve-credentials", "--wd=."])
    finally:
        if holder.poll() is None:
            holder.stdin.close()
            holder.wait(timeout=60)


def _ways() -> list[str]:
    forced = os.environ.get("MPISCOPE_TEST_TINYFS")
    if forced:
        if forced not in METHODS:
            raise pytest.UsageError(f"MPISCOPE_TEST_TINYFS={forced}: one of {', '.join(METHODS)}")
        return [forced]
    return ["mount"] if os.getuid() == 0 else ["userns", "sudo"]


@contextlib.contextmanager
def tiny_fs(mnt: Path, size: int = 8192, method: str | None = None):
    """A ``size``-byte tmpfs on the empty directory ``mnt``, owned by the running user;
    unmounted (or its namespace ended) on exit."""
    mnt.mkdir(parents=True, exist_ok=True)
    why = []
    for way in [method] if method else _ways():
        try:
            ctx = _userns(mnt, size) if way == "userns" else \
                _mount(mnt, size, ["sudo", "-n"] if way == "sudo" else [])
            fs = ctx.__enter__()
        except (OSError, subprocess.SubprocessError) as e:
            err = (getattr(e, "stderr", None) or str(e)).strip().splitlines()
            why.append(f"{way}: {err[-1] if err else e}")
            continue
        try:
            yield fs
        finally:
            ctx.__exit__(None, None, None)
        return
    pytest.fail("a tiny filesystem for the full-disk tests needs root, passwordless sudo or "
                "unprivileged user namespaces (docs/install.md); tried " + "; ".join(why),
                pytrace=False)
