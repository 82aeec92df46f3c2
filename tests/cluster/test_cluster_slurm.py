"""Slurm across the virtual cluster's nodes: a scaling study whose points are sbatch jobs
of `launcher.ppn` ranks per node, snapshots of a hung 4-node job (one spool file per
node, merged into one profile), and summary mode over 4 nodes against full mode's
reduction.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
import uuid

import mpitest
from mpiscope import read
from mpiscope.errors import UserError
from profile_expect import assert_summary_agrees, program_path

PPN = 2


def node_hosts(prof) -> list[str]:
    """The host of every rank, from the profile's NODES and RANKS."""
    host = {int(n["node"]): n["hostname"].decode() for n in prof.nodes}
    return [host[int(n)] for n in prof.ranks["node"]]


def test_scale_study_through_slurm_across_nodes(vcluster, tmp_path):
    """mpiscope scale run --submit slurm --wait: P = 2, 4, 8 with launcher.ppn = 2, so
    each point is an sbatch job of P/2 nodes, and srun inside it puts 2 ranks on each."""
    halo = program_path("openmpi", "place_halo")
    study = tmp_path / "study.toml"
    study.write_text(f"""
[study]
name = "halo-weak"
kind = "weak"
ranks = [2, 4, 8]
command = "{halo} {{px}} 2 1000 10"
output = "halo-weak"
timeout = 120
[params]
px = [1, 2, 4]
[launcher]
command = "srun --mpi=pmix -n {{np}}"
ppn = {PPN}
mpi = "openmpi"
[slurm]
options = ["--time=00:05:00"]
""")
    r = vcluster.run(mpitest.mpiscope_cmd("scale", "run", str(study), "--submit", "slurm",
                                          "--wait"), cwd=tmp_path, timeout=300)
    jobs = [ln.split()[-1] for ln in r.stdout.splitlines() if ln.startswith("submitted")]
    assert len(jobs) == 3, r.stdout
    for n in (2, 4, 8):
        att = tmp_path / f"halo-weak/points/np{n:05d}-rep1/attempt1"
        script = (att / "job.sbatch").read_text()
        assert f"#SBATCH --nodes={n // PPN}" in script
        assert f"#SBATCH --ntasks-per-node={PPN}" in script
        rec = json.loads((att / "point.json").read_text())
        assert rec["status"] == "done", (rec, (att / "stderr.txt").read_text()[-2000:])
        prof = read(att / rec["profile"])
        assert prof.nranks == n
        # srun in the job put 2 ranks on each of the job's nodes, node1 first.
        assert node_hosts(prof) == [f"node{r // PPN + 1}" for r in range(n)]
        assert sorted(int(x["nranks"]) for x in prof.nodes) == [PPN] * (n // PPN)
    assert vcluster.run(mpitest.mpiscope_cmd("scale", "status", str(tmp_path / "halo-weak")),
                        cwd=tmp_path).stdout.splitlines()[-1] == "3 done"


def test_snapshot_of_a_hung_4_node_job(vcluster, tmp_path):
    """tests/programs/deadlock.c on 8 ranks over 4 nodes hangs on purpose; scancel
    --signal=USR1 (as a user would) snapshots it: the spool has one file per node on
    the shared filesystem, says where every rank waits, and merges into one profile."""
    name = f"vc-deadlock-{uuid.uuid4().hex[:8]}"
    cmd = mpitest.mpiscope_cmd("run", "--dir", str(tmp_path), "--", "srun", "-N", "4", "-n",
                               "8", f"--ntasks-per-node={PPN}", f"--job-name={name}",
                               "--mpi=pmix", program_path("openmpi", "deadlock"))
    job = subprocess.Popen(cmd, cwd=tmp_path, env=vcluster.env(), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    out: list[str] = []
    threading.Thread(target=lambda: out.extend(job.stdout), daemon=True).start()
    try:
        end = time.monotonic() + 90
        while sum("deadlock: rank" in line for line in out) < 8:
            assert time.monotonic() < end and job.poll() is None, "".join(out)
            time.sleep(0.2)
        time.sleep(1)       # every rank into its last call
        vcluster.run(["scancel", "--signal=USR1", f"--name={name}"])
        spool, prof, last = None, None, None
        while time.monotonic() < end:
            spools = list(tmp_path.glob("*.spool"))
            if spools:
                spool = spools[0]
                try:
                    prof = read(spool)
                    last = prof.meta["snapshot"]
                    if last["answered"] == 8:
                        break
                except UserError as err:
                    last = str(err)
            time.sleep(0.2)
        assert prof is not None and prof.meta["snapshot"]["answered"] == 8, last
        assert job.poll() is None, "the job must still hang after the snapshot"
        # One spool file per node (named by the node's lowest rank), nothing per rank.
        assert sorted(p.name for p in spool.iterdir()) == \
            ["meta.json", "node0.snap", "node2.snap", "node4.snap", "node6.snap"]
        assert node_hosts(prof) == [f"node{r // PPN + 1}" for r in range(8)]
        rep = json.loads(vcluster.run(mpitest.mpiscope_cmd("report", "--json", str(spool)),
                                      cwd=tmp_path).stdout)
        where = {(w["state"], w["from"]): (w["count"], w["ranks"])
                 for w in rep["snapshot"]["where"]}
        assert where == {("MPI_Recv", 7): (7, list(range(7))), ("MPI_Barrier", None): (1, [7])}
        # What ran before the hang: the ring's 8 messages, 4 of them between nodes.
        assert (rep["p2p"]["on_node_msgs"], rep["p2p"]["off_node_msgs"]) == (4, 4)
        merged_path = vcluster.run(mpitest.mpiscope_cmd("merge", str(spool)),
                                   cwd=tmp_path).stdout.strip()
        merged = read(merged_path)
        assert merged.is_partial and merged.nranks == 8
        assert merged.funcs.tobytes() == prof.funcs.tobytes()
        assert merged.inflight.tobytes() == prof.inflight.tobytes()
        assert node_hosts(merged) == node_hosts(prof)
    finally:
        vcluster.run(["scancel", f"--name={name}"], check=False)
        try:
            job.wait(timeout=60)
        except subprocess.TimeoutExpired:
            mpitest.kill_tree(job.pid)
            job.wait()


def test_summary_mode_over_4_nodes(vcluster, tmp_path):
    """The same halo run on 4 nodes in full and in summary mode: the runtime's own
    reduction over ranks (min/max/sum/minPE/maxPE, on- and off-node traffic from the
    real nodes) equals full mode's, count for count."""
    profiles = {}
    for mode in ("full", "summary"):
        out = tmp_path / mode
        vcluster.run(mpitest.mpiscope_cmd(
            "run", "--mode", mode, "--dir", str(out), "--", "srun", "-N", "4", "-n", "8",
            f"--ntasks-per-node={PPN}", "--mpi=pmix", program_path("openmpi", "place_halo"),
            "4", "2", "1000", "10"), cwd=tmp_path)
        profiles[mode] = read(next(out.glob("*.mpiscope")))
    full, summ = profiles["full"], profiles["summary"]
    assert node_hosts(full) == [f"node{r // PPN + 1}" for r in range(8)]
    assert_summary_agrees(full, summ)
    on_off = {}
    for mode, prof in profiles.items():
        rep = json.loads(vcluster.run(mpitest.mpiscope_cmd(
            "report", "--json", str(next((tmp_path / mode).glob("*.mpiscope")))),
            cwd=tmp_path).stdout)
        on_off[mode] = {k: rep["p2p"][k] for k in ("on_node_msgs", "on_node_bytes",
                                                   "off_node_msgs", "off_node_bytes")}
    assert on_off["summary"] == on_off["full"]
    assert on_off["full"]["on_node_msgs"] > 0 and on_off["full"]["off_node_msgs"] > 0


def test_one_communicator_row_per_node(vcluster, tmp_path):
    """MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) on 2 nodes makes one communicator per node,
    made by one call: the profile has a row for each, with its own members and counts
    (issue 27 item 8; tests/programs/node_comm.c)."""
    out = tmp_path / "prof"
    r = vcluster.run(mpitest.mpiscope_cmd(
        "run", "--dir", str(out), "--", "srun", "-N", "2", "-n", "4",
        f"--ntasks-per-node={PPN}", "--mpi=pmix", program_path("openmpi", "node_comm")),
        cwd=tmp_path)
    assert sorted(ln for ln in r.stdout.splitlines() if ln.startswith("node_comm:")) == \
        [f"node_comm: rank {k} first {k - k % PPN} size {PPN}" for k in range(4)]
    path = next(out.glob("*.mpiscope"))
    assert node_hosts(read(path)) == ["node1", "node1", "node2", "node2"]
    rep = json.loads(vcluster.run(mpitest.mpiscope_cmd("report", "--json", str(path)),
                                  cwd=tmp_path).stdout)
    nodes = [c for c in rep["communicators"] if c["size"] == PPN]
    barriers = {tuple(c["world_ranks"]): sum(f["calls"] for f in c["functions"]
                                             if f["name"] == "MPI_Barrier") for c in nodes}
    # node1: ranks 0-1, first 0: 1 barrier each; node2: ranks 2-3, first 2: 3 each
    assert barriers == {(0, 1): 2 * 1, (2, 3): 2 * 3}, rep["communicators"]
    assert len({c["id"] for c in nodes}) == 2
