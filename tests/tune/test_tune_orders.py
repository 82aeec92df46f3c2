"""tune's rank-order candidates from a profile (no run): Cray's grid_order for the
program's own Cartesian grid, next to place from-profile's order.

The profile is mpiscope.testing's synthetic 2-D 5-point stencil on a 4x4 grid (row-major
rank numbers, non-periodic), 4 consecutive ranks per node: each node holds a row, so the
12 vertical grid edges cross nodes. A 2x2 cell per node cuts 8 edges; a 4x1 column would
cut 12 again: grid_order must pick 2x2 (rank r's node holds r, r+1, r+4, r+5).
"""

from __future__ import annotations

from mpiscope import read, testing
from mpiscope.run.launcher_args import parse
from mpiscope.tune.candidates import candidates, cart_dims, grid_order

CART = {"0000000000000002": {"name": "cart 4x4 of world", "named": False}}


def _profile(tmp_path, ppn: int = 4, comms: dict | None = CART):
    s = testing.synthetic(16, ppn=ppn, steps=10)
    if comms is not None:
        s["meta"]["communicators"] = comms
    path = testing.write_profile(tmp_path / "s.mpiscope", nranks=16, meta=s["meta"],
                                 ranks=s["ranks"], funcs=s["funcs"], hist=s["hist"],
                                 peers=s["peers"], regions=s["regions"], nodes=s["nodes"])
    return read(path)


def test_grid_order_picks_the_cell_with_fewest_bytes_off_node(tmp_path):
    prof = _profile(tmp_path)
    assert cart_dims(prof) == (4, 4)
    cmd = parse(["mpirun.openmpi", "-n", "16", "./stencil"])
    cand = grid_order(prof, cmd)
    assert cand["kind"] == "grid-order" and "-g 4,4 -c 2,2" in cand["change"]
    # measured off-node bytes fall by a third: 12 crossing edges -> 8
    before, after = (int(x.replace(",", "")) for x in
                     cand["change"].split("off-node bytes ")[1].rstrip(")").split(" -> "))
    assert after * 3 == before * 2, cand["change"]
    # the Open MPI rankfile: rank r on host/slot; each node a 2x2 cell
    hosts = {}
    for line in cand["order"]["text"].splitlines():
        if line.startswith("rank "):
            rank, where = line[5:].split("=", 1)
            hosts.setdefault(where.split()[0], []).append(int(rank))
    cells = sorted(sorted(rs) for rs in hosts.values())
    assert cells == [[0, 1, 4, 5], [2, 3, 6, 7], [8, 9, 12, 13], [10, 11, 14, 15]], cells
    assert cand["knobs"] == ["binding", "placement"] and cand["order"]["ppn"] == 4


def test_no_grid_order_without_a_cartesian_grid_or_a_gain(tmp_path):
    cmd = parse(["mpirun.openmpi", "-n", "16", "./stencil"])
    assert grid_order(_profile(tmp_path, comms=None), cmd) is None      # no MPI_Cart_create
    other = {"0000000000000002": {"name": "cart 2x4 of split(color 0) of world"}}
    assert grid_order(_profile(tmp_path, comms=other), cmd) is None     # not of all ranks
    assert grid_order(_profile(tmp_path, ppn=16), cmd) is None          # one node: no gain


def test_placement_finding_gives_both_orders(tmp_path):
    prof = _profile(tmp_path)
    finding = {"rule": "off-node-placement", "title": "t", "cost_s": 1.0, "fix": "f"}
    cands, manual = candidates(prof, {"findings": [finding]}, parse(["mpirun.openmpi", "-n", "16", "x"]))
    assert sorted(c["kind"] for c in cands) == ["grid-order", "rank-order"] and not manual
    assert all(c["findings"][0]["rule"] == "off-node-placement" for c in cands)
    # both as Open MPI rankfiles (the launcher in use), each naming its origin
    texts = [c["order"]["text"] for c in cands]
    assert all(t.startswith("# mpiscope tune: place ") and "\nrank 0=" in t for t in texts)
