"""MPI-IO aggregators on real nodes: the ranks that really write a collectively written
file (tests/programs/place_io.c: each rank's write_bytes from /proc/self/io, which
counts file data only) are the aggregators `mpiscope place aggregators` names, one
per node, for the run's own placement and, predicted from another run's profile
with `--order`, for a placement not yet run.

MPICH's ROMIO (cb_config_list *:1: the first rank of each node), launched by srun with
Slurm's PMI-2 so that a round-robin placement keeps each host one node (hydra would
split it: docs/placement.md). Open MPI's OMPIO chooses aggregators by rules of its
own, which `place aggregators` does not model (docs/placement.md gives what it did
here).
"""

from __future__ import annotations

import json
import re

import mpitest
from mpiscope import read
from profile_expect import program_path

COUNT = 65536  # doubles per rank: 512 KiB, a 2 MiB file for 4 ranks


def run_io(vcluster, tmp_path, name: str, *srun_opts: str) -> tuple[dict, object, str]:
    """place_io on 4 MPICH ranks, 2 per node: (rank -> (host, bytes written), profile)."""
    out = tmp_path / name
    r = vcluster.run(mpitest.mpiscope_cmd(
        "run", "--dir", str(out), "--", "srun", "-N", "2", "-n", "4", "--ntasks-per-node=2",
        *srun_opts, "--mpi=pmi2", program_path("mpich", "place_io"), str(tmp_path / f"{name}.dat"),
        str(COUNT)), cwd=tmp_path)
    assert "place_io ok" in r.stdout, r.stdout[-2000:]
    wrote = {int(m[1]): (m[2], int(m[3])) for m in
             re.finditer(r"^io (\d+) (\S+) (-?\d+)$", r.stdout, re.M)}
    assert sorted(wrote) == [0, 1, 2, 3]
    profile = next(out.glob("*.mpiscope"))
    return wrote, read(profile), str(profile)


def aggregators(vcluster, tmp_path, *args: str) -> dict:
    r = vcluster.run(mpitest.mpiscope_cmd("place", "aggregators", *args, "--json"), cwd=tmp_path)
    files = json.loads(r.stdout)
    assert len(files) == 1, files
    return files[0]


def writers(wrote: dict) -> list[int]:
    """Ranks that wrote file data. The file is 2 MiB: an aggregator writes its half."""
    assert all(b >= 0 for _, b in wrote.values()), wrote
    return sorted(r for r, (_, b) in wrote.items() if b > 0)


def test_romio_aggregators_one_per_node(vcluster, tmp_path):
    block, block_prof, block_path = run_io(vcluster, tmp_path, "block", "-m", "block")
    cyclic, cyclic_prof, cyclic_path = run_io(vcluster, tmp_path, "cyclic", "-m", "cyclic")
    for wrote, prof, path in ((block, block_prof, block_path), (cyclic, cyclic_prof, cyclic_path)):
        agg = aggregators(vcluster, tmp_path, path)
        assert (agg["cb_nodes"], agg["cb_config_list"], agg["rule"]) == (2, "*:1", "romio")
        # What the library did: these ranks wrote the file, one on each node, and together
        # everything (ROMIO's writes are whole; page-cache accounting is per 4 KiB page).
        assert writers(wrote) == agg["aggregators"]
        assert sorted(wrote[r][0] for r in agg["aggregators"]) == ["node1", "node2"]
        assert sum(b for _, b in wrote.values()) >= 4 * COUNT * 8
        host = {int(n["node"]): n["hostname"].decode() for n in prof.nodes}
        assert [host[n] for n in agg["nodes"]] == [wrote[r][0] for r in agg["aggregators"]]
        assert agg["distinct_nodes"] == 2 and not agg["crowded"]
    assert writers(block) == [0, 2] and writers(cyclic) == [0, 1]
    # Predicted before running: the block run's profile judged under the round-robin order.
    order = tmp_path / "rr.order"
    vcluster.run(mpitest.mpiscope_cmd("place", "method", "0", "--ranks", "4", "-n", "2", "-o",
                                      str(order)), cwd=tmp_path)
    predicted = aggregators(vcluster, tmp_path, block_path, "--order", str(order), "--ppn", "2")
    assert predicted["aggregators"] == writers(cyclic)
