"""The report on synthetic stencil profiles whose traffic follows from the grid."""

from __future__ import annotations

import pytest

from mpiscope import read, testing
from mpiscope.report import build_report

N, PX, STEPS, HALO = 256, 16, 100, 8192  # 16 x 16 grid, non-periodic


@pytest.fixture(scope="module")
def profiles(tmp_path_factory):
    d = tmp_path_factory.mktemp("synthetic")
    full = testing.write_synthetic(d / "full.mpiscope", N, ppn=16, steps=STEPS, halo_bytes=HALO)
    summ = testing.write_synthetic(d / "summ.mpiscope", N, mode="summary", ppn=16, steps=STEPS,
                                   halo_bytes=HALO)
    return read(full), read(summ)


def test_grid_traffic_on_and_off_node(profiles):
    full, _ = profiles
    edges = 2 * (PX - 1) * PX  # directed neighbour pairs along one axis
    p = build_report(full)["p2p"]  # 16 ranks per node = one grid row per node
    assert (p["on_node_msgs"], p["off_node_msgs"]) == (edges * STEPS, edges * STEPS)
    assert p["off_node_bytes"] == edges * STEPS * HALO
    p = build_report(full, ppn=32)["p2p"]  # two rows per node: half the vertical edges join
    assert p["on_node_msgs"] == (edges + edges // 2 + 16) * STEPS
    assert p["total_msgs"] == 2 * edges * STEPS
    p = build_report(full, ppn=N)["p2p"]
    assert p["off_node_msgs"] == 0


def test_hot_rank_is_max_pe_of_compute_and_its_neighbours_wait_less(profiles):
    full, _ = profiles
    rep = build_report(full)
    hot = N // 3
    compute = next(r for r in rep["summary"] if r["metric"] == "compute")
    wait = next(r for r in rep["summary"] if r["metric"] == "wait")
    assert compute["max_pe"] == hot and wait["min_pe"] == hot
    assert compute["imbalance_pct"] > 50
    waitall = next(f for f in rep["functions"] if f["name"] == "MPI_Waitall")
    assert waitall["time_per_rank"]["min_pe"] == hot
    isend = next(f for f in rep["functions"] if f["name"] == "MPI_Isend")
    assert isend["calls"] == 2 * 2 * (PX - 1) * PX * STEPS
    assert isend["bytes_sent"] == isend["calls"] * HALO


def test_summary_file_agrees_with_full(profiles):
    full, summ = profiles
    a, b = build_report(full), build_report(summ)
    assert a["summary"] == b["summary"]
    assert a["histogram"] == b["histogram"]
    fa = {f["name"]: f for f in a["functions"]}
    for f in b["functions"]:
        g = fa[f["name"]]
        assert f["time_per_rank"] == g["time_per_rank"]
        assert (f["calls"], f["bytes_sent"], f["bytes_recv"]) == \
            (g["calls"], g["bytes_sent"], g["bytes_recv"])
    assert {k: b["p2p"][k] for k in ("on_node_msgs", "off_node_bytes")} == \
        {k: a["p2p"][k] for k in ("on_node_msgs", "off_node_bytes")}


def test_top_pairs_are_grid_neighbours(profiles):
    full, _ = profiles
    pairs = build_report(full, top=5)["top_pairs"]
    assert len(pairs) == 5
    for p in pairs:  # every pair moved the same bytes: ties go to the lowest pairs
        assert p["b"] - p["a"] in (1, PX) and p["bytes"] == 2 * STEPS * HALO
    assert [(p["a"], p["b"]) for p in pairs] == [(0, 1), (0, 16), (1, 2), (1, 17), (2, 3)]
