"""Helpers for tests that run real MPI programs.

Every MPI test runs on each implementation mpiscope was built for: Open MPI
with up to 16 oversubscribed ranks, MPICH with 2 ranks (MPICH busy-polls, so
oversubscribing it is ~1000x slower on a 2-core machine).
"""

from __future__ import annotations

import os
import subprocess
import sys
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
