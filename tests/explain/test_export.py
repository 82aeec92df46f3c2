"""`mpiscope export` (csv, hatchet, json) and `Profile.to_pandas` on real runs.

The regions program (tests/programs/regions.c) has nested MPI_Pcontrol
regions and known traffic; every exported number is checked against the
profile it came from, and the Hatchet file is loaded by Hatchet itself.
"""

from __future__ import annotations

import json

import hatchet as ht
import numpy as np
import pandas as pd
import pytest

import mpitest
from mpiscope import read, testing
from mpiscope.errors import UserError
from mpiscope.report import build_report
from profile_expect import runner  # noqa: F401  (fixture)


@pytest.fixture
def regions_profile(runner, impl):  # noqa: F811
    run = runner.run(impl, "regions")
    run.assert_ok()
    (path,) = run.profiles
    return path


def _export(path, fmt, out, *extra):
    return mpitest.run(mpitest.mpiscope_cmd("export", str(path), "--format", fmt, "-o", str(out),
                                            *extra))


def _per_rank_function(prof):
    """(rank, function) -> (calls, time, bytes_sent, bytes_recv) summed over regions."""
    f = prof.funcs
    out = {}
    for r, fn, c, t, s, rv in zip(f["rank"].tolist(), f["func"].tolist(), f["calls"].tolist(),
                                  f["time"].tolist(), f["bytes_sent"].tolist(),
                                  f["bytes_recv"].tolist()):
        k = (r, prof.functions[fn])
        a = out.get(k, (0, 0.0, 0, 0))
        out[k] = (a[0] + c, a[1] + t, a[2] + s, a[3] + rv)
    return out


def test_csv_rows_and_peers_load_with_pandas(regions_profile, tmp_path):
    prof = read(str(regions_profile))
    _export(regions_profile, "csv", tmp_path / "r.csv")
    rows = pd.read_csv(tmp_path / "r.csv")  # the one line a user writes
    peers = pd.read_csv(tmp_path / "r.peers.csv")
    assert list(rows.columns) == ["rank", "region", "function", "calls", "time", "bytes_sent",
                                  "bytes_recv"]
    assert len(rows) == len(prof.funcs)
    got = rows.groupby(["rank", "function"])[["calls", "time", "bytes_sent",
                                              "bytes_recv"]].sum()
    for (r, fn), (calls, t, sent, recv) in _per_rank_function(prof).items():
        row = got.loc[(r, fn)]
        assert (row["calls"], row["bytes_sent"], row["bytes_recv"]) == (calls, sent, recv)
        assert row["time"] == pytest.approx(t, rel=1e-9, abs=1e-12)
    # Regions by name: the program's Sendrecv calls are in "inner" only.
    assert set(rows.loc[rows["function"] == "MPI_Sendrecv", "region"]) == {"inner"}
    assert list(peers.columns) == ["rank", "peer", "messages", "bytes"]
    assert peers["bytes"].sum() == int(prof.peers["bytes"].sum())
    assert peers["messages"].sum() == int(prof.peers["msgs"].sum())


def test_hatchet_loads_the_tree_and_totals(regions_profile, tmp_path):
    prof = read(str(regions_profile))
    out = tmp_path / "r.hatchet.json"
    _export(regions_profile, "hatchet", out)
    gf = ht.GraphFrame.from_json(out.read_text())
    df = gf.dataframe
    assert list(df.index.names) == ["node", "rank"]
    (root,) = gf.graph.roots
    assert root.frame["type"] == "program"
    # Regions as the call tree: inner nested in outer; MPI functions as leaves.
    by_name = {}
    for node in gf.graph.traverse():
        by_name.setdefault((node.frame["name"], node.frame["type"]), []).append(node)
    (outer,) = by_name[("outer", "region")]
    (inner,) = by_name[("inner", "region")]
    assert inner in outer.children and outer in root.children
    # (MPI_Pcontrol itself is profiled: the call that leaves a region is charged to it.)
    assert {c.frame["name"] for c in inner.children} - {"MPI_Pcontrol"} == {"MPI_Sendrecv"}
    for node in gf.graph.traverse():
        # leaves: call sites, and functions without any (MPI_Pcontrol); under a function
        # only its call sites
        assert (node.frame["type"] in ("function", "callsite")) == \
            all(c.frame["type"] == "callsite" for c in node.children) or node.frame["type"] == "region"
        assert node.frame["type"] != "callsite" or not node.children
        if node.frame["type"] == "function":
            assert node.frame["name"].startswith("MPI_")
    # One row per node per rank.
    assert len(df) == len(list(gf.graph.traverse())) * prof.nranks
    # Totals: per rank, the leaves' time and calls are the profile's; the root's
    # inclusive time is the rank's wall time.
    leaves = df[df["name"].str.startswith("MPI_")]
    per_rank = leaves.groupby(level="rank")[["time (inc)", "calls", "bytes_sent"]].sum()
    per_rank = per_rank.rename(columns={"time (inc)": "time"})
    f = prof.funcs
    for r in range(prof.nranks):
        mine = f[f["rank"] == r]
        assert per_rank.loc[r, "calls"] == int(mine["calls"].sum())
        assert per_rank.loc[r, "bytes_sent"] == int(mine["bytes_sent"].sum())
        assert per_rank.loc[r, "time"] == pytest.approx(float(mine["time"].sum()), rel=1e-9)
        assert df.loc[(root, r), "time (inc)"] == pytest.approx(float(prof.ranks["wall"][r]))
    # Per function, the calls equal the report's function table.
    rep = build_report(prof)
    calls = leaves.groupby("name")["calls"].sum()
    for row in rep["functions"]:
        assert calls[row["name"]] == row["calls"]
    # Exclusive + children's inclusive = inclusive, on every node and rank.
    for node in gf.graph.traverse():
        if node.children:
            kids = sum(df.xs(c, level="node")["time (inc)"] for c in node.children)
            mine = df.xs(node, level="node")
            assert np.allclose(mine["time"] + kids, mine["time (inc)"])


def test_json_export_and_to_pandas_views(regions_profile, tmp_path):
    prof = read(str(regions_profile))
    _export(regions_profile, "json", tmp_path / "r.json")
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["schema"] == "mpiscope-export/1"
    assert doc["profile"]["nranks"] == prof.nranks
    for view in ("ranks", "functions", "peers", "regions", "hist"):
        frame = prof.to_pandas(view)
        again = pd.DataFrame(doc[view])
        assert list(again.columns) == list(frame.columns)
        pd.testing.assert_frame_equal(again, frame, check_dtype=False)
    ranks = prof.to_pandas("ranks")
    assert len(ranks) == prof.nranks
    assert np.allclose(ranks["compute"], prof.ranks["wall"] - prof.ranks["mpi"])
    regs = prof.to_pandas("regions")
    assert set(regs.loc[regs["region"] == "inner", "parent"]) == {"outer"}
    with pytest.raises(UserError, match="unknown view"):
        prof.to_pandas("nope")


def test_summary_profile_has_summary_view_only(tmp_path):
    path = testing.write_synthetic(tmp_path / "s.mpiscope", 32, mode="summary", ppn=8)
    prof = read(str(path))
    summ = prof.to_pandas("summary")
    wall = summ[(summ["function"] == "(rank level)") & (summ["metric"] == "wall")]
    assert len(wall) == 1 and wall["max"].iloc[0] >= wall["min"].iloc[0]
    with pytest.raises(UserError, match="summary-mode"):
        prof.to_pandas("functions")
    proc = mpitest.run(mpitest.mpiscope_cmd("export", str(path), "--format", "hatchet"),
                       check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("mpiscope: error:") and len(proc.stderr.splitlines()) == 1
    # The JSON export still works: the summary and the histogram.
    _export(path, "json", tmp_path / "s.json")
    doc = json.loads((tmp_path / "s.json").read_text())
    assert set(doc) == {"schema", "profile", "summary", "hist"}


def test_export_never_overwrites_and_rejects_bad_input(tmp_path):
    path = testing.write_synthetic(tmp_path / "s.mpiscope", 16, ppn=4)
    peers = tmp_path / "out.peers.csv"
    peers.write_text("keep me")
    proc = mpitest.run(mpitest.mpiscope_cmd("export", str(path), "--format", "csv", "-o",
                                            str(tmp_path / "out.csv")), check=False)
    assert proc.returncode == 2 and "out.peers.csv exists" in proc.stderr
    assert peers.read_text() == "keep me" and not (tmp_path / "out.csv").exists()
    proc = mpitest.run(mpitest.mpiscope_cmd("export", str(path), "--format", "xml"), check=False)
    assert proc.returncode == 2 and "unknown --format" in proc.stderr
    bad = tmp_path / "bad.mpiscope"
    bad.write_bytes(b"not a profile")
    proc = mpitest.run(mpitest.mpiscope_cmd("export", str(bad), "--format", "csv"), check=False)
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1
    assert "Traceback" not in proc.stderr
