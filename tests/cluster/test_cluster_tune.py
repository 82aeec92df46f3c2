"""`mpiscope tune` across the virtual cluster's 4 nodes: the stencil mini-app started
round-robin (srun -m cyclic: each node holds a column of the 4x4 rank grid) gets the rank
order `place from-profile` computes from its traffic and grid_order's for the app's own
MPI_Cart_create grid (a 2x2 cell per node), and keeps each with a gain whose 95 %
interval lies above 0; started in a good order (2x2 cells of the grid per node, through
the app's own --rank-order), there is no order to try and nothing is kept.

The links run at 2mbit while the tunes run: at faster rates the 16 ranks on this
machine's two shared cores, not the link, pace the halo exchange (docs/testing.md,
perf/cluster/stencil_orders.py), and no order could show a gain.
"""

from __future__ import annotations

import json

import pytest

import mpitest
from mpiscope import native

# 2x2 cells of the 4x4 grid for consecutive groups of 4 world ranks (the k-th entry is
# the grid rank of world rank k; `mpiscope place grid -R -c 2,2 -g 4,4`).
CELLS = "0,1,4,5,2,3,6,7,8,9,12,13,10,11,14,15"
RATE = "2mbit"


def tune(vcluster, tmp_path, name: str, *launch: str) -> dict:
    """One tune of the rank orders alone (the nodes' unbound ranks would add a binding
    candidate, which Slurm's task/none here cannot apply)."""
    r = vcluster.run(mpitest.mpiscope_cmd("tune", "--json", "--runs", "3", "--only",
                                          "rank-order,grid-order", "--dir",
                                          str(tmp_path / name), "--", *launch),
                     cwd=tmp_path, timeout=900)
    return json.loads(r.stdout)


@pytest.mark.alone  # it judges timings: nothing else runs beside it (tests/conftest.py)
def test_tune_rank_order_round_robin_vs_good(vcluster, tmp_path):
    stencil = str(native.program("openmpi", "examples/stencil"))
    app = [stencil, "--grid", "1024x1024", "--procs", "4x4", "--steps", "30"]
    (tmp_path / "cells.order").write_text(CELLS + "\n")
    srun = ["srun", "-N", "4", "-n", "16", "--mpi=pmix"]
    with vcluster.rate(RATE):
        rr = tune(vcluster, tmp_path, "rr", *srun, "-m", "cyclic", *app)
        good = tune(vcluster, tmp_path, "good", *srun, *app, "--rank-order",
                    str(tmp_path / "cells.order"))
    assert "off-node-placement" in {f["rule"] for f in rr["baseline"]["findings"]}
    for kind in ("rank-order", "grid-order"):
        (order,) = [c for c in rr["candidates"] if c["kind"] == kind]
        assert "--distribution=arbitrary" in order["command"] and "cyclic" not in order["command"]
        hostfile = order["env"]["SLURM_HOSTFILE"]
        assert hostfile in order["files"]
        hosts = open(hostfile).read().split()
        # 4 ranks per node, each node a 2x2 cell of the grid (ranks r, r+1, r+4, r+5)
        by_node = {h: sorted(r for r, x in enumerate(hosts) if x == h) for h in set(hosts)}
        assert sorted(by_node) == vcluster.hosts
        assert all(len(rs) == 4 and rs[1] - rs[0] == 1 and rs[2] - rs[0] == 4 and
                   rs[3] - rs[0] == 5 for rs in by_node.values()), (kind, by_node)
        assert order["kept"] and order["ci_pct"][0] > 0, {
            k: order[k] for k in ("kind", "verdict", "why", "gain_pct", "ci_pct", "welch_ci_pct",
                                  "pairs", "time_s", "baseline_time_s")}
        assert order["finding_cost_s"]["candidate"] < order["finding_cost_s"]["baseline"]
        if kind == "grid-order":
            assert "grid_order -R -g 4,4 -c 2,2" in order["change"]
    best = rr["recommended"]
    assert best["kind"] in ("rank-order", "grid-order")
    assert best["env"]["SLURM_HOSTFILE"] in best["files"]
    # started in a good order: no order to try, none kept
    assert "off-node-placement" not in {f["rule"] for f in good["baseline"]["findings"]}
    assert not [c for c in good["candidates"] if c["kind"] in ("rank-order", "grid-order")]
