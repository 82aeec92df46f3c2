"""Every launcher across the virtual cluster's nodes (tests/vcluster.py, docs/testing.md):
``mpiscope run -- srun``, ``mpirun.openmpi --host`` and ``mpirun.mpich -hosts``.

The profile must know the real nodes (NODES: node1..node4 and their rank counts,
each rank's node), count the traffic exactly as on one node, and its measured
on-node/off-node split must equal what ``mpiscope report --ppn`` predicts from a
one-node run of the same program for the same placement, and what the program's
known traffic gives by hand.
"""

from __future__ import annotations

import re

import pytest

import mpitest
from mpiscope import read
from mpiscope.report.build import build_report
from profile_expect import (assert_profile, assert_rank_sanity, p2p_blocking, program_path,
                            run_killable)

PPN = 2
SPLIT_KEYS = ("on_node_msgs", "on_node_bytes", "off_node_msgs", "off_node_bytes")


def profile_in(outdir):
    files = sorted(outdir.glob("*.mpiscope"))
    assert len(files) == 1, files
    return read(files[0])


@pytest.fixture(scope="module")
def one_node_model(tmp_path_factory):
    """model(impl, nranks): the --ppn model of the same program run on this machine alone
    (one run per implementation and rank count)."""
    cache = {}

    def model(impl: str, nranks: int) -> dict:
        if (impl, nranks) not in cache:
            out = tmp_path_factory.mktemp(f"one-node-{impl}-{nranks}")
            cmd = mpitest.mpiscope_cmd("run", "--dir", str(out), "--mpi", impl, "--",
                                       *mpitest.launcher(impl, nranks),
                                       program_path(impl, "p2p_blocking"))
            rc, _, err = run_killable(cmd, out, mpitest.mpi_env(), 120)
            assert rc == 0, err[-3000:]
            cache[impl, nranks] = build_report(profile_in(out), ppn=PPN)["p2p"]
        return cache[impl, nranks]
    return model


def by_hand(nranks: int) -> dict:
    """On/off-node messages and bytes of p2p_blocking's known traffic, rank r on node r // PPN."""
    t = dict.fromkeys(SPLIT_KEYS, 0)
    for (rank, peer), (msgs, nbytes) in p2p_blocking(nranks, {}).peers.items():
        where = "on" if rank // PPN == peer // PPN else "off"
        t[f"{where}_node_msgs"] += msgs
        t[f"{where}_node_bytes"] += nbytes
    return t


def check_across_nodes(prof, nranks: int, polls: dict, model: dict) -> None:
    assert_profile(prof, p2p_blocking(nranks, polls))
    assert_rank_sanity(prof)
    nnodes = nranks // PPN
    # The real nodes: one NODES record per host, named as the host is, and each rank's.
    hosts = {int(n["node"]): n["hostname"].decode() for n in prof.nodes}
    assert sorted((h, int(n["nranks"])) for h, n in zip(hosts.values(), prof.nodes)) == \
        [(f"node{k}", PPN) for k in range(1, nnodes + 1)]
    assert [hosts[int(n)] for n in prof.ranks["node"]] == \
        [f"node{r // PPN + 1}" for r in range(nranks)]
    measured = build_report(prof)["p2p"]
    assert measured["source"] == "ranks"
    split = {k: measured[k] for k in SPLIT_KEYS}
    assert split == {k: model[k] for k in SPLIT_KEYS} == by_hand(nranks)
    assert split["on_node_msgs"] > 0 and split["off_node_msgs"] > 0


def test_srun_openmpi_4_nodes(vcluster, tmp_path, one_node_model):
    """mpiscope run -- srun -N 4 -n 8 --mpi=pmix (Open MPI), block placement."""
    prog = program_path("openmpi", "p2p_blocking")
    r = vcluster.run(mpitest.mpiscope_cmd(
        "run", "--dir", str(tmp_path / "run"), "--", "srun", "-N", "4", "-n", "8",
        f"--ntasks-per-node={PPN}", "-m", "block", "--mpi=pmix", prog), cwd=tmp_path)
    check_across_nodes(profile_in(tmp_path / "run"), 8, polls(r.stderr),
                       one_node_model("openmpi", 8))


def test_mpirun_openmpi_hosts(vcluster, tmp_path, one_node_model):
    """mpiscope run -- mpirun.openmpi --host node1:2,...,node4:2 (ssh from node1)."""
    prog = program_path("openmpi", "p2p_blocking")
    r = vcluster.run(mpitest.mpiscope_cmd(
        "run", "--dir", str(tmp_path / "run"), "--", "mpirun.openmpi", "--host",
        vcluster.host_arg(PPN), "-n", "8", "--bind-to", "none", prog),
        node="node1", cwd=tmp_path)
    check_across_nodes(profile_in(tmp_path / "run"), 8, polls(r.stderr),
                       one_node_model("openmpi", 8))


@pytest.mark.parametrize("launch", ["hydra", "srun"])
def test_mpich_two_nodes(vcluster, tmp_path, launch, one_node_model):
    """MPICH at 4 ranks on 2 nodes (it busy-polls: as few ranks per core as gives both
    on- and off-node pairs): hydra over ssh from node1, and srun with Slurm's PMI-2."""
    prog = program_path("mpich", "p2p_blocking")
    if launch == "hydra":
        cmd, node = ["mpirun.mpich", "-hosts", vcluster.host_arg(PPN, nodes=2), "-n", "4"], "node1"
    else:
        cmd, node = ["srun", "-N", "2", "-n", "4", f"--ntasks-per-node={PPN}", "-m", "block",
                     "--mpi=pmi2"], None
    r = vcluster.run(mpitest.mpiscope_cmd("run", "--dir", str(tmp_path / "run"), "--", *cmd,
                                          prog), node=node, cwd=tmp_path)
    check_across_nodes(profile_in(tmp_path / "run"), 4, polls(r.stderr),
                       one_node_model("mpich", 4))


def polls(stderr: str) -> dict:
    """(rank, function) -> calls of the program's polling loops (profile_expect.Run.polls)."""
    return {(int(m[1]), m[2]): int(m[3]) for m in
            re.finditer(r"^polls rank (\d+) (\S+) (\d+)$", stderr, re.M)}
