"""The timeline's views on planted and synthetic profiles: the report section (terminal,
--json), the HTML section (heat map downsampled with the extreme ranks kept), the CSV and
pandas view, compare's aligned timelines."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

import mpitest
import timelineruns
from mpiscope import read, testing
from mpiscope.compare import compare
from mpiscope.html import timeline as html_timeline
from mpiscope.report import build_report
from timelineruns import NB, P, W


def test_report_section_terminal_and_json_agree(tmp_path):
    prof, rep, _ = timelineruns.planted_profile(tmp_path, "start")
    tl = rep["timeline"]
    assert tl["available"] and tl["bins"] == NB and tl["kinds"] == ["coll"]
    assert len(tl["share"]["coll"]) == NB and tl["rank_groups"][0]["ranks"] == [0, 0]
    assert [p["label"] for p in tl["phases"]] == ["start", "main"]
    assert tl["phases"][0]["least_mpi_rank"] == 0
    # shares: the kinds and the time outside MPI fill each bin
    total = np.asarray(tl["share"]["coll"]) + np.asarray(tl["share"]["compute"])
    assert np.allclose(total, 1.0)
    assert np.isclose(tl["totals"]["coll"], prof.funcs["time"].sum())
    text = mpitest.run(mpitest.mpiscope_cmd("report", prof.path)).stdout
    assert f"Timeline: {NB} bins of" in text
    assert "phase 1 (start): 0-0.400 s (20 % of the run)" in text
    assert "  ranks 0     |" in text and "  coll        |" in text
    doc = json.loads(mpitest.run(mpitest.mpiscope_cmd("report", "--json", prof.path)).stdout)
    assert doc["timeline"]["phases"] == json.loads(json.dumps(tl["phases"]))


def test_summary_profile_report_has_no_rank_groups(tmp_path):
    _, rep, _ = timelineruns.planted_profile(tmp_path, "bursts", "summary")
    full = timelineruns.planted_profile(tmp_path, "bursts")[1]["timeline"]
    tl = rep["timeline"]
    assert tl["rank_groups"] == [] and tl["mode"] == "summary"
    for key in ("mpi_min", "mpi_max", "min_pe", "max_pe"):
        assert np.allclose(tl[key], full[key]), key
    assert tl["bursts"]["period"] == full["bursts"]["period"]


def test_no_timeline_says_why(tmp_path):
    path = testing.write_profile(tmp_path / "p.mpiscope", nranks=2, functions=["MPI_Send"])
    tl = build_report(read(path))["timeline"]
    assert tl == {"available": False, "why": "no timeline in this profile "
                                             "(MPISCOPE_TIMELINE_BINS=0, or an older runtime)"}


def test_heat_map_keeps_extreme_ranks_and_stays_small(tmp_path):
    """1,000 ranks, 600 bins: at most 256 x 256 cells, the least and most MPI ranks of the
    run as rows of their own, columns averaging bins exactly."""
    s = testing.synthetic(1000, hot_rank=777)
    values, meta = testing.synthetic_timeline(s, 600)
    values[123, 2, :] *= 3.0                       # rank 123: the most collective time
    s["meta"]["timeline"] = meta
    path = testing.write_profile(tmp_path / "s.mpiscope", nranks=1000, meta=s["meta"],
                                 ranks=s["ranks"], funcs=s["funcs"], timeline=values)
    prof = read(path)
    rt = html_timeline.rank_time(prof)
    assert rt.z.shape[0] <= 256 and rt.z.shape[1] <= 256
    mpi = prof.timeline_bins.row("mpi").sum(axis=1)
    assert rt.labels[0] == f"rank {int(np.argmin(mpi))} (least MPI)"
    assert rt.labels[1] == "rank 123 (most MPI)"
    assert rt.labels[2] == "ranks 0-3" and rt.block == 4
    # a column's share is its bins' MPI time over their seconds
    tl = prof.timeline_bins
    cols = html_timeline._columns(tl.bins, 256)
    a, b = cols[5], cols[6]
    want = tl.row("mpi")[0:4, a:b].sum() / 4 / (tl.bin_seconds * (b - a))
    assert np.isclose(rt.z[2, 5], want)
    html = mpitest.run(mpitest.mpiscope_cmd("html", str(path), "-o", str(tmp_path / "s.html")))
    page = (tmp_path / "s.html").read_text()
    assert 'id="timeline"' in page and "Share of the time in MPI, ranks averaged in blocks of 4" in page
    assert html.returncode == 0


def test_csv_timeline_rows(tmp_path):
    prof, _, _ = timelineruns.planted_profile(tmp_path, "bursts")
    out = tmp_path / "x.csv"
    proc = mpitest.run(mpitest.mpiscope_cmd("export", prof.path, "--format", "csv", "-o", str(out)))
    assert f"wrote {tmp_path / 'x.timeline.csv'}" in proc.stdout
    df = pd.read_csv(tmp_path / "x.timeline.csv")
    assert list(df.columns) == ["rank", "t_start", "t_end", "class", "seconds"]
    assert set(df["class"]) == {"coll", "compute"} and len(df) == P * NB * 2
    tl = prof.timeline_bins
    got = df[df["class"] == "coll"].groupby("rank")["seconds"].sum().to_numpy()
    assert np.allclose(got, tl.row("coll").sum(axis=1))
    assert np.allclose(df["t_end"] - df["t_start"], W)
    again = mpitest.run(mpitest.mpiscope_cmd("export", prof.path, "--format", "csv", "-o",
                                             str(out)), check=False)
    assert again.returncode == 2 and "exists" in again.stderr
    summ, _, _ = timelineruns.planted_profile(tmp_path, "bursts", "summary")
    s = summ.to_pandas("timeline")
    assert set(s["class"]) == {"coll", "mpi", "compute"} and len(s) == 3 * NB
    assert np.allclose(s[s["class"] == "coll"]["avg"], tl.row("coll").mean(axis=0))


def test_compare_aligns_two_timelines(tmp_path):
    a, rep_a, _ = timelineruns.planted_profile(tmp_path, "steady")
    b, rep_b, _ = timelineruns.planted_profile(tmp_path, "bursts")
    c = compare(a, rep_a, b, rep_b)
    t = c["timeline"]
    assert t["available"] and t["columns"] == 64 and t["kinds"] == ["coll"]
    assert np.isclose(t["column_seconds"], NB * W / 64)
    # a column is the overlap-weighted mean of the bins it covers: the first, 3.125 bins
    share = rep_a["timeline"]["share"]["coll"]
    assert np.isclose(t["a"]["coll"][0], (sum(share[:3]) + 0.125 * share[3]) / 3.125)
    assert t["bursts"]["a"] is None and t["bursts"]["b"]["period"] == 0.2
    assert any(w.startswith("periodic bursts appeared: every 0.2 s") for w in c["worse"])
    text = mpitest.run(mpitest.mpiscope_cmd("compare", a.path, b.path)).stdout
    assert "Timeline, A over B" in text and "  coll     B |" in text
