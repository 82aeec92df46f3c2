"""Helpers for tests that run real MPI programs.

Every MPI test runs on each implementation mpiscope was built for: Open MPI
with up to 16 oversubscribed ranks, MPICH with 2 ranks (MPICH busy-polls, so
oversubscribing it is ~1000x slower on a 2-core machine).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from mpiscope import native

REPO = Path(__file__).resolve().parent.parent

# Ranks each implementation is tested with.
NRANKS = {"openmpi": 16, "mpich": 2}


def mpi_env(extra: dict | None = None) -> dict:
    env = dict(os.environ)
    env.update({
        "OMPI_ALLOW_RUN_AS_ROOT": "1",
        "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
        "OMPI_MCA_rmaps_base_oversubscribe": "1",
        # Containers often forbid the CMA single-copy mechanism.
        "OMPI_MCA_btl_vader_single_copy_mechanism": "none",
        "PYTHONPATH": str(REPO / "src") + os.pathsep + env.get("PYTHONPATH", ""),
    })
    if extra:
        env.update(extra)
    return env


def launcher(impl: str, n: int) -> list[str]:
    """The mpirun command line for n ranks of implementation impl."""
    if impl == "openmpi":
        return ["mpirun.openmpi", "--oversubscribe", "--bind-to", "none", "-n", str(n)]
    if impl == "mpich":
        return ["mpirun.mpich", "-n", str(n)]
    return ["mpirun", "-n", str(n)]


def mpiscope_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "mpiscope.cli", *args]


def run(cmd: list[str], cwd=None, env: dict | None = None, timeout: float = 300,
        check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, cwd=cwd, env=mpi_env(env), capture_output=True, text=True,
                          timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, cmd))} exited {proc.returncode}\n"
                             f"stdout:\n{proc.stdout[-4000:]}\nstderr:\n{proc.stderr[-4000:]}")
    return proc


def impls() -> list[str]:
    return [i for i in native.available_impls() if i in NRANKS]


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            kids.setdefault(ppid, []).append(int(entry.name))
    return kids


def running(pid: int) -> bool:
    """The process exists and is not a zombie (a killed launcher's ranks stay zombies
    until init reaps them)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def tree_stacks(pid: int, limit: int = 12) -> str:
    """The stacks of process ``pid`` and up to ``limit`` processes below it (eu-stack,
    elfutils), each headed by its command line: what a hung run was waiting in, for
    the failure message, taken before the tree is killed."""
    kids, todo, tree = _children(), [pid], []
    while todo and len(tree) < limit:
        p = todo.pop(0)
        tree.append(p)
        todo += kids.get(p, [])
    out = []
    for p in tree:
        try:
            with open(f"/proc/{p}/cmdline", "rb") as f:
                argv = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        try:
            st = subprocess.run(["eu-stack", "-p", str(p)], capture_output=True, text=True,
                                timeout=30)
            stack = st.stdout or st.stderr
        except (OSError, subprocess.TimeoutExpired) as e:
            stack = f"(no stack: {e})"
        out.append(f"--- pid {p}: {argv[:200]}\n{stack[-4000:]}")
    return "\n".join(out)


def kill_tree(pid: int) -> None:
    """SIGKILL process ``pid`` and every process below it: a launcher and all its ranks.

    ``os.killpg`` of the launcher's session is not enough: Open MPI's mpirun puts each
    rank in a process group of its own, and MPICH's hydra each proxy and rank in a
    session of its own, so the ranks of a killed launcher lived on (a rank waiting
    forever, or spinning). The tree is stopped first (SIGSTOP, until no new process
    appears), so that nothing forks past the count, then killed; returns once none of
    it runs.
    """
    stopped: set[int] = set()
    while True:
        kids, todo, tree = _children(), [pid], set()
        while todo:
            p = todo.pop()
            if p not in tree:
                tree.add(p)
                todo += kids.get(p, [])
        new = tree - stopped
        if not new:
            break
        for p in new:
            try:
                os.kill(p, signal.SIGSTOP)
            except ProcessLookupError:
                pass
        stopped |= new
    for p in stopped:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass
    end = time.monotonic() + 30
    while any(running(p) for p in stopped) and time.monotonic() < end:
        time.sleep(0.02)


def marked_processes(name: str, value: str) -> dict[int, str]:
    """pid -> command line of every live process whose environment has name=value (a
    job's launcher, proxies and ranks carry a mark set where it was started)."""
    want = f"{name}={value}".encode()
    found = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if want not in f.read().split(b"\0"):
                    continue
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                found[int(pid)] = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # gone meanwhile
            pass
    return found
