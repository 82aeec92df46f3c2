"""`mpiscope report` numbers on tiny inline profiles whose answers are known exactly."""

from __future__ import annotations

import json

import numpy as np
import pytest

import mpitest
from mpiscope import format as fmt
from mpiscope import read, testing
from mpiscope.errors import UserError
from mpiscope.report import build_report
from mpiscope.report import tables as T

FUNCS = ["MPI_Send", "MPI_Recv", "MPI_Allreduce", "MPI_Barrier"]
KINDS = ["p2p", "wait", "coll", "coll"]
OUTER, INNER = fmt.fnv1a64("outer"), fmt.fnv1a64("inner")

# 4 ranks on 2 nodes: {0, 1} on node 0, {2, 3} on node 2.
NODE = [0, 0, 2, 2]
PEERS = [  # sender, receiver, msgs, bytes
    (0, 1, 10, 1000),
    (1, 0, 10, 1000),
    (1, 2, 5, 4000),
    (2, 3, 2, 200),
    (3, 0, 1, 50),
    (2, 1, 5, 4000),
]


def arrays():
    ranks = np.zeros(4, fmt.RANK)
    ranks["rank"] = np.arange(4)
    ranks["node"] = NODE
    ranks["wall"] = [10.0, 10.0, 10.0, 10.0]
    ranks["mpi"] = [1.0, 2.0, 3.0, 6.0]
    ranks["wait"] = [0.5, 4.0, 1.0, 4.0]
    ranks["sync"] = [0.0, 0.0, 0.0, 0.0]
    ranks["threads"] = 1
    for s, d, m, b in PEERS:
        side = "on_node" if NODE[s] == NODE[d] else "off_node"
        ranks[f"{side}_msgs"][s] += m
        ranks[f"{side}_bytes"][s] += b
    funcs = testing.records(fmt.FUNC, [
        # MPI_Send: ranks 0, 1, 2 (rank 3 never sends); rank 0 in two regions.
        dict(rank=0, func=0, region=0, calls=4, bytes_sent=400, time=0.25, time_min=0.01,
             time_max=0.1),
        dict(rank=0, func=0, region=INNER, calls=6, bytes_sent=600, time=0.5, time_min=0.02,
             time_max=0.2),
        dict(rank=1, func=0, region=INNER, calls=15, bytes_sent=5000, time=2.0, time_min=0.05,
             time_max=0.5),
        dict(rank=2, func=0, region=INNER, calls=7, bytes_sent=4200, time=1.0, time_min=0.03,
             time_max=0.3),
        # MPI_Recv, in "outer" on every rank
        *[dict(rank=r, func=1, region=OUTER, calls=3, bytes_recv=300, time=t, time_min=0.1,
               time_max=1.0) for r, t in enumerate([0.25, 0.0, 1.0, 4.0])],
        # MPI_Allreduce, outside regions, equal on every rank
        *[dict(rank=r, func=2, region=0, calls=5, bytes_sent=40, bytes_recv=40, time=1.0,
               time_min=0.2, time_max=0.2) for r in range(4)],
    ])
    hist = testing.records(fmt.HIST, [
        dict(rank=0, func=0, bucket=7, region=0, count=4, time=0.25),    # 64-127 B
        dict(rank=0, func=0, bucket=7, region=INNER, count=6, time=0.5),
        dict(rank=1, func=0, bucket=9, region=INNER, count=15, time=2.0),  # 256-511 B
        dict(rank=2, func=0, bucket=10, region=INNER, count=7, time=1.0),
        *[dict(rank=r, func=2, bucket=4, region=0, count=5, time=1.0) for r in range(4)],
        dict(rank=3, func=3, bucket=0, region=0, count=1, time=0.0),
    ])
    peers = testing.records(fmt.PEER, [dict(rank=s, peer=d, msgs=m, bytes=b)
                                       for s, d, m, b in PEERS])
    regions = testing.records(fmt.REGION, [
        *[dict(rank=r, depth=1, region=OUTER, parent=0, entries=2, wall=w)
          for r, w in enumerate([5.0, 6.0, 7.0, 8.0])],
        *[dict(rank=r, depth=2, region=INNER, parent=OUTER, entries=3, wall=w)
          for r, w in enumerate([1.0, 3.0, 2.0])],
    ])
    nodes = testing.records(fmt.NODE, [dict(node=0, nranks=2, hostname=b"n0"),
                                       dict(node=2, nranks=2, hostname=b"n1")])
    return ranks, funcs, hist, peers, regions, nodes


def write_full(path):
    ranks, funcs, hist, peers, regions, nodes = arrays()
    return testing.write_profile(path, nranks=4, functions=FUNCS, function_kinds=KINDS,
                                 region_names=["outer", "inner"], ranks=ranks, funcs=funcs,
                                 hist=hist, peers=peers, regions=regions, nodes=nodes)


def write_summary(path):
    ranks, funcs, hist, *_ = arrays()
    summary, hsum = testing.summarize(ranks, funcs, hist)
    return testing.write_profile(path, nranks=4, functions=FUNCS, function_kinds=KINDS,
                                 region_names=["outer", "inner"], mode="summary",
                                 summary=summary, hist=hsum)


@pytest.fixture
def full(tmp_path):
    return write_full(tmp_path / "full.mpiscope")


@pytest.fixture
def rep(full):
    return build_report(read(full))


def by(rows, key, value):
    return next(r for r in rows if r[key] == value)


def test_summary_rows(rep):
    mpi = by(rep["summary"], "metric", "mpi")
    assert (mpi["min"], mpi["max"], mpi["avg"], mpi["sum"]) == (1.0, 6.0, 3.0, 12.0)
    assert (mpi["min_pe"], mpi["max_pe"]) == (0, 3)
    assert mpi["imbalance_pct"] == pytest.approx(100 * (6 - 3) / 6 * 4 / 3)
    compute = by(rep["summary"], "metric", "compute")  # wall - mpi = 9, 8, 7, 4
    assert (compute["min"], compute["max"], compute["avg"]) == (4.0, 9.0, 7.0)
    assert (compute["min_pe"], compute["max_pe"]) == (3, 0)
    wait = by(rep["summary"], "metric", "wait")  # ranks 1 and 3 tie at the max: lowest wins
    assert (wait["max"], wait["max_pe"], wait["min_pe"]) == (4.0, 1, 0)
    wall = by(rep["summary"], "metric", "wall")
    assert wall["imbalance_pct"] == 0.0 and wall["min_pe"] == 0 and wall["max_pe"] == 0


def test_function_rows(rep):
    assert [f["name"] for f in rep["functions"]] == ["MPI_Recv", "MPI_Allreduce", "MPI_Send"]
    send = by(rep["functions"], "name", "MPI_Send")
    assert (send["calls"], send["bytes_sent"], send["bytes_recv"]) == (32, 10200, 0)
    assert send["time"] == 3.75 and send["pct_mpi"] == pytest.approx(100 * 3.75 / 12)
    s = send["time_per_rank"]  # per rank 0.75, 2.0, 1.0, 0 (rank 3 never sent)
    assert (s["min"], s["max"], s["avg"], s["min_pe"], s["max_pe"]) == (0.0, 2.0, 0.9375, 3, 1)
    assert s["imbalance_pct"] == pytest.approx(100 * (2.0 - 0.9375) / 2.0 * 4 / 3)
    assert (send["call_time_min"], send["call_time_max"]) == (0.01, 0.5)
    recv = by(rep["functions"], "name", "MPI_Recv")
    r = recv["time_per_rank"]
    assert (r["min"], r["min_pe"], r["max"], r["max_pe"]) == (0.0, 1, 4.0, 3)
    allr = by(rep["functions"], "name", "MPI_Allreduce")["time_per_rank"]
    assert (allr["imbalance_pct"], allr["min_pe"], allr["max_pe"]) == (0.0, 0, 0)


def test_histogram(rep):
    h = {row["bucket"]: row for row in rep["histogram"]}
    assert sorted(h) == [0, 4, 7, 9, 10]
    assert (h[7]["lo"], h[7]["hi"], h[7]["count"]) == (64, 127, 10)
    assert h[4]["by_function"] == {"MPI_Allreduce": 20} and h[4]["time"] == 4.0
    assert (h[0]["lo"], h[0]["hi"], h[0]["by_function"]) == (0, 0, {"MPI_Barrier": 1})
    assert (h[10]["lo"], h[10]["hi"]) == (512, 1023)


def test_on_off_node_as_run(rep):
    p = rep["p2p"]
    assert p["source"] == "ranks"
    assert (p["on_node_msgs"], p["on_node_bytes"]) == (22, 2200)   # 0<->1, 2->3
    assert (p["off_node_msgs"], p["off_node_bytes"]) == (11, 8050)  # 1->2, 2->1, 3->0
    assert rep["profile"]["nnodes"] == 2 and rep["warnings"] == []


@pytest.mark.parametrize("ppn,on_msgs,on_bytes", [(1, 0, 0), (2, 22, 2200), (3, 30, 10000),
                                                   (4, 33, 10250)])
def test_on_off_node_with_ppn(full, ppn, on_msgs, on_bytes):
    p = build_report(read(full), ppn=ppn)["p2p"]
    assert p["source"] == "peers" and p["ppn_model"] == ppn
    assert (p["on_node_msgs"], p["on_node_bytes"]) == (on_msgs, on_bytes)
    assert (p["off_node_msgs"], p["off_node_bytes"]) == (33 - on_msgs, 10250 - on_bytes)


def test_top_pairs(full):
    pairs = build_report(read(full), top=3, ppn=2)["top_pairs"]
    # 1<->2: 8000 B; 0<->1: 2000 B; then 2<->3: 200 B beats 0<->3: 50 B.
    assert [(p["a"], p["b"], p["bytes"], p["msgs"]) for p in pairs] == \
        [(1, 2, 8000, 10), (0, 1, 2000, 20), (2, 3, 200, 2)]
    assert (pairs[0]["bytes_ab"], pairs[0]["bytes_ba"]) == (4000, 4000)
    assert [p["on_node"] for p in pairs] == [False, True, True]
    assert build_report(read(full), top=0)["top_pairs"] == []


def test_top_pairs_ties_go_to_lowest_pair(tmp_path):
    peers = testing.records(fmt.PEER, [dict(rank=s, peer=d, msgs=1, bytes=10)
                                       for s, d in [(5, 4), (3, 2), (1, 0), (7, 6)]])
    path = testing.write_profile(tmp_path / "t.mpiscope", nranks=8, functions=[], peers=peers)
    pairs = build_report(read(path), top=2)["top_pairs"]
    assert [(p["a"], p["b"]) for p in pairs] == [(0, 1), (2, 3)]


def test_regions(rep):
    regs = {r["name"]: r for r in rep["regions"]}
    outer, inner = regs["outer"], regs["inner"]
    assert (outer["depth"], outer["parent"], outer["entries"], outer["ranks"]) == (1, None, 8, 4)
    assert (inner["depth"], inner["parent"], inner["entries"], inner["ranks"]) == (2, "outer", 9, 3)
    assert (outer["wall"]["min"], outer["wall"]["max"], outer["wall"]["sum"]) == (5.0, 8.0, 26.0)
    assert (inner["wall"]["min"], inner["wall"]["min_pe"]) == (0.0, 3)  # rank 3 never entered
    # MPI time inclusive of nested regions: outer = Recv + inner's Send.
    assert outer["mpi"]["sum"] == 5.25 + 3.5 and inner["mpi"]["sum"] == 3.5
    assert [f["name"] for f in outer["functions"]] == ["MPI_Recv"]
    assert [f["name"] for f in inner["functions"]] == ["MPI_Send"]
    assert by(inner["functions"], "name", "MPI_Send")["calls"] == 28


def test_region_filter(full):
    rep = build_report(read(full), region="inner")
    assert rep["region_filter"] == "inner"
    assert [f["name"] for f in rep["functions"]] == ["MPI_Send"]
    assert rep["functions"][0]["calls"] == 28 and rep["functions"][0]["time"] == 3.5
    assert {h["bucket"] for h in rep["histogram"]} == {7, 9, 10}
    assert [r["name"] for r in rep["regions"]] == ["inner"]
    outside = build_report(read(full), region="(outside regions)")
    assert {f["name"]: f["calls"] for f in outside["functions"]} == \
        {"MPI_Send": 4, "MPI_Allreduce": 20}
    with pytest.raises(UserError, match="no region named 'nope'"):
        build_report(read(full), region="nope")


def test_summary_mode_agrees_with_full(tmp_path, rep):
    srep = build_report(read(write_summary(tmp_path / "s.mpiscope")))
    assert srep["summary"] == rep["summary"]
    full_f = {f["name"]: f for f in rep["functions"]}
    for f in srep["functions"]:
        g = full_f[f["name"]]
        for key in ("calls", "bytes_sent", "bytes_recv", "time", "pct_mpi"):
            assert f[key] == g[key], (f["name"], key)
        if f["name"] == "MPI_Send":  # in two regions: only totals survive the reduction
            assert f["time_per_rank"]["max"] is None
            assert f["time_per_rank"]["avg"] == g["time_per_rank"]["avg"]
        else:
            assert f["time_per_rank"] == g["time_per_rank"]
    assert srep["histogram"] == rep["histogram"]
    for key in ("on_node_msgs", "on_node_bytes", "off_node_msgs", "off_node_bytes"):
        assert srep["p2p"][key] == rep["p2p"][key]
    assert {r["name"] for r in srep["regions"]} == {"outer", "inner"}
    assert srep["top_pairs"] == []
    with pytest.raises(UserError, match="--ppn"):
        build_report(read(tmp_path / "s.mpiscope"), ppn=2)


def test_warnings(tmp_path):
    ranks, funcs, hist, peers, regions, nodes = arrays()
    ranks["node"] = 0
    ranks["overflow"][2] = 1  # peers table full on rank 2
    path = testing.write_profile(tmp_path / "w.mpiscope", nranks=4, functions=FUNCS,
                                 ranks=ranks, peers=peers,
                                 flags=fmt.FLAG_PARTIAL | fmt.FLAG_OVERFLOW)
    w = build_report(read(path))["warnings"]
    assert w[0].startswith("partial profile")
    assert "1 rank(s) filled their peers table" in w[1] and "rank 2" in w[1]
    assert "all ranks ran on one node" in w[2]
    ranks["overflow"] = 0
    ranks["threads"] = [1, 2, 1, 1]
    ranks["mpi"][1] = 11.0  # two threads in MPI for longer than the wall time
    path = testing.write_profile(tmp_path / "t.mpiscope", nranks=4, functions=FUNCS,
                                 ranks=ranks)
    rep = build_report(read(path))
    assert rep["warnings"] == ["1 rank(s) spent more time in MPI than their wall time (MPI time "
                               "is summed over the 2 threads that called MPI), so their compute "
                               "time is negative (first: rank 1)"]
    assert by(rep["summary"], "metric", "compute")["min"] == -1.0


def _cells_line(text: str, first: str, cells: list[str]) -> bool:
    """Does a line of `text` start with `first` and contain `cells` in order, space-separated?"""
    for line in text.splitlines():
        words = line.split()
        if not words or words[0] != first:
            continue
        joined = " ".join(words)
        if joined.startswith(" ".join([first, *cells]).strip()):
            return True
    return False


def test_cli_json_equals_tables(full):
    proc = mpitest.run(mpitest.mpiscope_cmd("report", "--json", "--ppn", "2", str(full)),
                       timeout=60)
    rep = json.loads(proc.stdout)
    assert rep == json.loads(json.dumps(build_report(read(full), ppn=2)))
    text = mpitest.run(mpitest.mpiscope_cmd("report", "--ppn", "2", str(full)), timeout=60).stdout
    for row in rep["summary"]:
        cells = [T.fmt_time(row[k]) for k in ("min", "max", "avg")] + \
            [str(row["min_pe"]), str(row["max_pe"]), T.fmt_pct(row["imbalance_pct"])]
        assert " ".join([row["label"], *cells]) in " ".join(text.split()), row["label"]
    for f in rep["functions"]:
        s = f["time_per_rank"]
        cells = [T.fmt_pct(f["pct_mpi"]), T.fmt_time(f["time"]), T.fmt_count(f["calls"]),
                 T.fmt_bytes(f["bytes_sent"]), T.fmt_bytes(f["bytes_recv"]),
                 T.fmt_time(s["avg"]), T.fmt_time(s["min"]), T.fmt_time(s["max"]),
                 str(s["min_pe"]), str(s["max_pe"]), T.fmt_pct(s["imbalance_pct"])]
        assert _cells_line(text, f["name"], cells), f["name"]
    for p in rep["top_pairs"]:
        assert _cells_line(text, str(p["a"]), ["<->", str(p["b"]), T.fmt_count(p["msgs"]),
                                                T.fmt_bytes(p["bytes"])])
    p2p = rep["p2p"]
    assert _cells_line(text, "off-node", [T.fmt_count(p2p["off_node_msgs"]),
                                          T.fmt_bytes(p2p["off_node_bytes"])])
    for h in rep["histogram"]:
        assert T.fmt_count(h["count"]) in text
    for reg in rep["regions"]:
        assert f"Region '{reg['name']}'" in text


def test_cli_bad_options(full):
    for args, msg in ((["--ppn", "0"], "--ppn must be at least 1"),
                      (["--region", "nope"], "no region named 'nope'"),
                      (["--top", "-1"], "--top must be 0 or more")):
        proc = mpitest.run(mpitest.mpiscope_cmd("report", *args, str(full)), check=False,
                           timeout=60)
        assert proc.returncode == 2 and proc.stderr.strip().splitlines() == \
            [f"mpiscope: error: {proc.stderr.strip()[len('mpiscope: error: '):]}"]
        assert msg in proc.stderr and "Traceback" not in proc.stderr


def test_number_formats():
    assert T.fmt_count(999_999) == "999,999" and T.fmt_count(1_234_567) == "1.23M"
    assert T.fmt_count(419_430_400_000) == "419G"
    assert T.fmt_bytes(1023) == "1023 B" and T.fmt_bytes(1536) == "1.50 KiB"
    assert T.fmt_bytes(3 * 2**40) == "3.00 TiB"
    assert T.fmt_time(0) == "0" and T.fmt_time(0.005) == "5.00e-03"
    assert T.fmt_time(1234.5678) == "1,234.568"
