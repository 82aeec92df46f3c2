"""A cluster of virtual nodes on this machine, for tests across nodes (scripts/vcluster.sh,
docs/testing.md): node1..nodeN, each with its own hostname, address, shaped link, sshd
and slurmd; slurmctld on this machine, which is the cluster's login node (srun, sbatch).

    from vcluster import VCluster
    with VCluster(nodes=4, rate="100mbit") as c:
        c.run(["srun", "-N", "4", "-n", "8", "--mpi=pmix", prog])           # here, as on a login node
        c.run(["mpirun.openmpi", "--host", c.host_arg(2), "-n", "8", prog],  # on node1, over ssh
              node="node1")
        c.hosts                                                              # ["node1", ..., "node4"]

Tests take the session fixture ``vcluster`` (registered in tests/conftest.py): one cluster
for the whole test run, brought up at the first test that asks for it and taken down
at the end of the run, whatever the tests did. conftest puts every test using it in one
xdist group (``--dist loadgroup``, scripts/test.sh), so one worker runs them all; the
cluster is also guarded by a lock, so a second test run on this machine (another
worktree, or ``-n 2`` without loadgroup) waits for it rather than pulling it down.

Root only, as the script is. Launchers that name nodes (``mpirun --host``, hydra's
``-hosts``) run on a node (``node=``): node names resolve inside the nodes only, this
machine's own /etc/hosts is never touched.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

import mpitest

SCRIPT = mpitest.REPO / "scripts" / "vcluster.sh"
STATE = Path(os.environ.get("VCLUSTER_DIR", "/tmp/mpiscope-vcluster"))
# The rate of the test run's links: slow enough that the link, not this machine's two
# shared cores, limits an off-node transfer (docs/testing.md), fast enough that the
# tests' messages cross it in well under a second.
TEST_RATE = "100mbit"
TEST_NODES = 4
# Open MPI across the nodes (docs/testing.md):
# - waiting ranks yield the core (8 ranks share 2 cores: a rank that spins steals the core
#   of the rank it waits for);
# - the UCX PML (shared memory on a node, TCP between nodes) instead of ob1 with the TCP
#   BTL, whose MPI_Init calls a NULL message callback when a peer's first message comes
#   in early: 2 of 20 plain and 4 of 20 profiled srun launches of 8 ranks on 4 nodes
#   crashed so (1 of 31 with every endpoint made in MPI_Init); with UCX 0 of 40 and 0 of 20.
OPEN_MPI_ACROSS_NODES = {"OMPI_MCA_mpi_yield_when_idle": "1", "OMPI_MCA_pml": "ucx",
                         "OMPI_MCA_pml_ucx_tls": "any", "OMPI_MCA_pml_ucx_devices": "any"}


@dataclass
class Result:
    cmd: list
    rc: int
    stdout: str
    stderr: str

    def check(self) -> "Result":
        assert self.rc == 0, (f"{' '.join(map(str, self.cmd))} exited {self.rc}\n"
                              f"stdout:\n{self.stdout[-3000:]}\nstderr:\n{self.stderr[-3000:]}")
        return self


def _script(*args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, VCLUSTER_DIR=str(STATE)))
    return proc


class VCluster:
    """start() brings the cluster up (after taking down whatever a killed run left),
    stop() takes it down; both through scripts/vcluster.sh."""

    def __init__(self, nodes: int = TEST_NODES, rate: str = TEST_RATE):
        self.nodes = nodes
        self.rate_now = rate
        self._lock = None

    # -- lifetime ---------------------------------------------------------------
    def start(self) -> "VCluster":
        if os.geteuid() != 0:
            raise RuntimeError("the virtual cluster needs root (network namespaces, a bridge)")
        STATE.mkdir(parents=True, exist_ok=True)
        (STATE / ".vcluster").touch()
        self._lock = open(STATE / "session.lock", "a")
        fcntl.flock(self._lock, fcntl.LOCK_EX)   # another run's cluster: wait for its end
        try:
            for args in (("down",), ("up", str(self.nodes), "--rate", self.rate_now)):
                proc = _script(*args)
                if proc.returncode != 0:
                    raise RuntimeError(f"scripts/vcluster.sh {' '.join(args)} failed: "
                                       f"{proc.stderr.strip() or proc.stdout.strip()}")
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        try:
            proc = _script("down")
            if proc.returncode != 0:
                raise RuntimeError(f"scripts/vcluster.sh down failed: {proc.stderr.strip()}")
        finally:
            if self._lock is not None:
                self._lock.close()   # releases the lock
                self._lock = None

    def __enter__(self) -> "VCluster":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- what tests use ---------------------------------------------------------
    @property
    def hosts(self) -> list[str]:
        return [f"node{k}" for k in range(1, self.nodes + 1)]

    def host_arg(self, ppn: int, nodes: int | None = None) -> str:
        """``node1:ppn,node2:ppn,...`` for ``--host`` / ``-hosts`` over the first nodes."""
        return ",".join(f"{h}:{ppn}" for h in self.hosts[:nodes or self.nodes])

    @property
    def slurm_conf(self) -> str:
        return str(STATE / "slurm" / "slurm.conf")

    def env(self, extra: dict | None = None) -> dict:
        """mpitest's MPI environment, Slurm's client configuration and OPEN_MPI_ACROSS_NODES."""
        return mpitest.mpi_env({"SLURM_CONF": self.slurm_conf, "VCLUSTER_DIR": str(STATE),
                                **OPEN_MPI_ACROSS_NODES, **(extra or {})})

    def run(self, cmd: list, node: str | None = None, env: dict | None = None,
            cwd=None, timeout: float = 120, check: bool = True) -> Result:
        """Run cmd here (node=None: the login node, where srun and sbatch run) or on a node
        (its network, hostname and mounts; the filesystem is shared). After ``timeout``
        seconds the process group gets SIGTERM (srun and mpirun end their job on it),
        10 s later what is left of the tree here SIGKILL; rc is then -999."""
        full = [str(SCRIPT), "exec", node, "--", *map(str, cmd)] if node else list(map(str, cmd))
        proc = subprocess.Popen(full, cwd=cwd, env=self.env(env), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            out, err = proc.communicate(timeout=timeout)
            rc = proc.returncode
        except subprocess.TimeoutExpired:
            # srun and mpirun end their job's ranks on every node on SIGTERM; what is left
            # here is killed (mpitest.kill_tree), and `down` ends anything left on a node.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                out, err = proc.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                mpitest.kill_tree(proc.pid)
                out, err = proc.communicate()
            rc, err = -999, err + f"\n[killed after {timeout} s]\n"
        result = Result(full, rc, out, err)
        return result.check() if check else result

    @property
    def link_MBps(self) -> float:
        """The links' rate in MB/s (10^6 bytes, as the bench kernels count): what one
        node can send, or receive, at most."""
        m = re.fullmatch(r"(\d+)([kmg]?)(bit|bps)", self.rate_now.lower())
        bits = int(m[1]) * {"": 1, "k": 10**3, "m": 10**6, "g": 10**9}[m[2]]
        return bits / 8e6 if m[3] == "bit" else bits / 1e6

    def set_rate(self, rate: str) -> None:
        """Reshape every link in place (the nodes and daemons stay up)."""
        proc = _script("up", str(self.nodes), "--rate", rate)
        if proc.returncode != 0:
            raise RuntimeError(f"reshaping to {rate} failed: {proc.stderr.strip()}")
        self.rate_now = rate

    @contextlib.contextmanager
    def rate(self, rate: str):
        """The links at ``rate`` inside the block, back to what they were after it."""
        before = self.rate_now
        self.set_rate(rate)
        try:
            yield self
        finally:
            self.set_rate(before)


@pytest.fixture(scope="session")
def vcluster() -> VCluster:
    """The test run's one cluster (TEST_NODES nodes at TEST_RATE), down at the end."""
    with VCluster() as cluster:
        yield cluster
