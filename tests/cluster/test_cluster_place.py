"""Rank orders across the virtual cluster's nodes: an order `mpiscope place` writes for
each launcher, applied with `mpiscope run --order`, is obeyed on real hosts (every
rank's host, and its core where the order binds one, as the rank itself reports it),
and the off-node traffic the profile measured equals `mpiscope place evaluate`'s
prediction for the order, both from the stencil's geometry and from the profile's
own peer matrix.

tests/programs/place_halo.c reports where each rank runs, then exchanges a 5-point
halo of BYTES per message for STEPS steps on a PX x PY grid numbered row-major.
Every order here differs from what the launcher would do without it, so a launcher
ignoring the order fails the host check.
"""

from __future__ import annotations

import json
import re

import pytest

import mpitest
from mpiscope import read
from mpiscope.report.build import build_report
from profile_expect import program_path

BYTES, STEPS = 1000, 10
HOSTS4 = "node1,node2,node3,node4"


def place(vcluster, tmp_path, *args) -> None:
    vcluster.run(mpitest.mpiscope_cmd("place", *args), cwd=tmp_path)


def seen_hosts(stdout: str) -> dict[int, tuple[str, str]]:
    """rank -> (host, bound cpus) from place_halo's whereami lines."""
    out = {}
    for m in re.finditer(r"^whereami (\d+) (\S+) (-?\d+) (\S*)$", stdout, re.M):
        out[int(m[1])] = (m[2], m[4])
    return out


def expected_from_file(path, fmt: str, launch_hosts: list[str]) -> dict[int, tuple[str, str | None]]:
    """rank -> (host, core or None) as the order file says, read here independently of
    mpiscope's reader: slurm = host per line; openmpi = rank R=HOST slot=S; hydra =
    host:count runs in rank order; cray = node j's ranks on line j, node j = j-th host."""
    lines = [ln.split("#", 1)[0].strip() for ln in path.read_text().splitlines()]
    lines = [ln for ln in lines if ln]
    if fmt == "slurm":
        return {r: (h, None) for r, h in enumerate(lines)}
    if fmt == "openmpi":
        return {int(m[1]): (m[2], m[3]) for m in
                (re.fullmatch(r"rank (\d+)=(\S+) slot=(\d+)", ln) for ln in lines)}
    if fmt == "hydra":
        ranks = [h for ln in lines for h in [ln.split(":")[0]] * int(ln.split(":")[1])]
        return {r: (h, None) for r, h in enumerate(ranks)}
    assert fmt == "cray"
    return {int(r): (launch_hosts[j], None) for j, ln in enumerate(lines) for r in ln.split(",")}


def predicted(vcluster, tmp_path, ppn: int, grid: str, order, profile) -> list[dict]:
    """place evaluate's traffic for the order: from the stencil (per step, times STEPS)
    and from the measured profile's peer matrix."""
    out = []
    for source in (["--grid", grid, "--stencil", "5", "--bytes", str(BYTES)],
                   ["--profile", str(profile)]):
        r = vcluster.run(mpitest.mpiscope_cmd("place", "evaluate", "-n", str(ppn), *source,
                                              "--order", str(order), "--json"), cwd=tmp_path)
        t = json.loads(r.stdout)["traffic"]
        scale = STEPS if source[0] == "--grid" else 1
        out.append({k: t[k] * scale for k in ("on_msgs", "on_bytes", "off_msgs", "off_bytes")})
    return out


def check_run(vcluster, tmp_path, stdout: str, order, fmt: str, launch_hosts: list[str],
              ppn: int, grid: str, default_hosts: dict[int, str]) -> dict:
    assert "place_halo ok" in stdout, stdout[-2000:]
    want = expected_from_file(order, fmt, launch_hosts)
    seen = seen_hosts(stdout)
    assert sorted(seen) == sorted(want) == list(range(len(want)))
    assert {r: seen[r][0] for r in seen} == {r: h for r, (h, _) in want.items()}
    assert {r: h for r, (h, _) in want.items()} != default_hosts, \
        "the order is the launcher's default placement: it proves nothing"
    for r, (_, core) in want.items():
        if core is not None:                       # a rankfile binds rank r to that core
            assert seen[r][1] == core, (r, seen[r], core)
    files = sorted((tmp_path / "run").glob("*.mpiscope"))
    assert len(files) == 1, files
    prof = read(files[0])
    hostname = {int(n["node"]): n["hostname"].decode() for n in prof.nodes}
    assert [hostname[int(n)] for n in prof.ranks["node"]] == [seen[r][0] for r in sorted(seen)]
    p2p = build_report(prof)["p2p"]
    measured = {"on_msgs": p2p["on_node_msgs"], "on_bytes": p2p["on_node_bytes"],
                "off_msgs": p2p["off_node_msgs"], "off_bytes": p2p["off_node_bytes"]}
    from_grid, from_profile = predicted(vcluster, tmp_path, ppn, grid, order, files[0])
    assert measured == from_grid == from_profile
    return measured


def block_hosts(hosts: list[str], ppn: int, n: int) -> dict[int, str]:
    return {r: hosts[r // ppn] for r in range(n)}


def test_srun_round_robin_order(vcluster, tmp_path):
    """srun with SLURM_HOSTFILE + --distribution=arbitrary: MPICH method 0 (round-robin),
    which puts no two neighbours of a 4x2 grid on one node."""
    order = tmp_path / "rr.hosts"
    place(vcluster, tmp_path, "method", "0", "--ranks", "8", "-n", "2", "--format", "slurm",
          "--hosts", HOSTS4, "-o", str(order))
    r = vcluster.run(mpitest.mpiscope_cmd(
        "run", "--dir", str(tmp_path / "run"), "--order", str(order), "--", "srun", "-N", "4",
        "-n", "8", "--mpi=pmix", program_path("openmpi", "place_halo"), "4", "2", str(BYTES),
        str(STEPS)), cwd=tmp_path)
    measured = check_run(vcluster, tmp_path, r.stdout, order, "slurm", vcluster.hosts, 2, "4,2",
                         block_hosts(vcluster.hosts, 2, 8))
    assert measured["on_msgs"] == 0


@pytest.mark.parametrize("how", ["grid", "from-profile"])
def test_openmpi_rankfile(vcluster, tmp_path, how):
    """mpirun.openmpi --host ... with a rankfile (rank R=host slot=S, each rank bound to
    its slot's core): grid_order cells of 2x1 on a 4x2 grid, and a METIS order from the
    profile of a round-robin run on the cluster."""
    order = tmp_path / "order.rankfile"
    if how == "grid":
        place(vcluster, tmp_path, "grid", "-R", "-c", "2,1", "-g", "4,2", "--format", "openmpi",
              "--hosts", HOSTS4, "-o", str(order))
    else:
        rr = tmp_path / "rr"
        vcluster.run(mpitest.mpiscope_cmd(
            "run", "--dir", str(rr), "--", "srun", "-N", "4", "-n", "8", "-m", "cyclic",
            "--ntasks-per-node=2", "--mpi=pmix", program_path("openmpi", "place_halo"),
            "4", "2", str(BYTES), str(STEPS)), cwd=tmp_path)
        place(vcluster, tmp_path, "from-profile", str(next(rr.glob("*.mpiscope"))), "-n", "2",
              "--format", "openmpi", "--hosts", "node4,node3,node2,node1", "-o", str(order))
    r = vcluster.run(mpitest.mpiscope_cmd(
        "run", "--dir", str(tmp_path / "run"), "--order", str(order), "--", "mpirun.openmpi",
        "--host", vcluster.host_arg(2), "-n", "8", program_path("openmpi", "place_halo"),
        "4", "2", str(BYTES), str(STEPS)), node="node1", cwd=tmp_path)
    measured = check_run(vcluster, tmp_path, r.stdout, order, "openmpi", vcluster.hosts, 2,
                         "4,2", block_hosts(vcluster.hosts, 2, 8))
    # Both keep every node's pair of ranks neighbours: the fewest off-node messages.
    assert measured["on_msgs"] == 8 * STEPS


def mpich_run(vcluster, tmp_path, order):
    return vcluster.run(mpitest.mpiscope_cmd(
        "run", "--dir", str(tmp_path / "run"), "--order", str(order), "--", "mpirun.mpich",
        "-hosts", vcluster.host_arg(2, nodes=2), "-n", "4", program_path("mpich", "place_halo"),
        "2", "2", str(BYTES), str(STEPS)), node="node1", cwd=tmp_path)


def test_mpich_machine_file(vcluster, tmp_path):
    """mpirun.mpich -hosts node1:2,node2:2 (4 ranks, 2x2 grid) with a hydra machine file:
    grid_order's rows, the first on node2 (node2:2, node1:2)."""
    order = tmp_path / "rows.machinefile"
    place(vcluster, tmp_path, "grid", "-R", "-c", "1,2", "-g", "2,2", "--format", "hydra",
          "--hosts", "node2,node1", "-o", str(order))
    r = mpich_run(vcluster, tmp_path, order)
    assert "warning" not in r.stderr
    measured = check_run(vcluster, tmp_path, r.stdout, order, "hydra", ["node1", "node2"], 2,
                         "2,2", block_hosts(vcluster.hosts, 2, 4))
    assert measured["on_msgs"] == 4 * STEPS


def test_mpich_rank_order_interleaved(vcluster, tmp_path):
    """An MPICH_RANK_ORDER file (Cray MPICH reads it with MPICH_RANK_REORDER_METHOD=3;
    here mpiscope applies it through hydra, node j of the file on the j-th host of
    -hosts): grid_order cells of 2x1, {0,2} on node1 and {1,3} on node2. The ranks land
    there, but hydra makes every run of consecutive ranks on a host a node of its own,
    so MPICH splits node1 and node2 in two (MPI_COMM_TYPE_SHARED) and no message stays
    on-node: mpiscope warns before the launch, and the profile shows four nodes."""
    order = tmp_path / "MPICH_RANK_ORDER"
    place(vcluster, tmp_path, "grid", "-R", "-c", "2,1", "-g", "2,2", "-o", str(order))
    assert order.read_text().split("\n")[-3:-1] == ["0,2", "1,3"]
    r = mpich_run(vcluster, tmp_path, order)
    assert "MPICH's hydra makes each run of consecutive ranks on a host a node of its own" \
        in r.stderr
    want = expected_from_file(order, "cray", ["node1", "node2"])
    assert {k: h for k, (h, _) in seen_hosts(r.stdout).items()} == \
        {k: h for k, (h, _) in want.items()}
    prof = read(next((tmp_path / "run").glob("*.mpiscope")))
    assert sorted(n["hostname"].decode() for n in prof.nodes) == ["node1", "node1", "node2",
                                                                 "node2"]
    p2p = build_report(prof)["p2p"]
    assert p2p["on_node_msgs"] == 0
    # What the order would keep on-node if MPICH saw two nodes, and what it sees: one
    # rank per node.
    on_two_nodes, as_mpich_sees = (
        json.loads(vcluster.run(mpitest.mpiscope_cmd(
            "place", "evaluate", "-n", str(ppn), "--profile", str(next(
                (tmp_path / "run").glob("*.mpiscope"))), "--order", str(order), "--json"),
            cwd=tmp_path).stdout)["traffic"] for ppn in (2, 1))
    assert on_two_nodes["on_msgs"] == 4 * STEPS
    assert (as_mpich_sees["off_msgs"], as_mpich_sees["off_bytes"]) == \
        (p2p["off_node_msgs"], p2p["off_node_bytes"])
