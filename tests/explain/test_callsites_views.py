"""Call sites in every view (docs/callsites.md "Reading them"): report tables and JSON
(full and summary mode agree), export (CSV callsites file, Hatchet nodes under their
function, JSON), HTML (sortable table, per-site per-rank bars), compare per site, and
diagnose quoting the dominant site. Synthetic profiles (mpiscope.testing) with known
numbers; the symbolizer sees a module that is not on disk (module+offset).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import mpitest
from mpiscope import format as fmt
from mpiscope import read
from mpiscope.diagnose import diagnose
from mpiscope.errors import UserError
from mpiscope.report import build_report
from mpiscope.symbols import Symbolizer
from mpiscope.testing import (SYNTHETIC_EXE_KEY, callsites_meta, default_meta, module_records,
                              records, synthetic, write_profile, write_synthetic)

N = 16
SYM = Symbolizer(use_cache=False)


@pytest.fixture(scope="module")
def profiles(tmp_path_factory):
    d = tmp_path_factory.mktemp("sites")
    return {mode: read(write_synthetic(d / f"s.{mode}.mpiscope", N, mode=mode, with_sites=True))
            for mode in ("full", "summary")}


def _rows(prof, **kw):
    return build_report(prof, callsites=None, symbolizer=SYM, **kw)["callsites"]


def test_report_rows_full_and_summary_agree(profiles):
    full, summ = _rows(profiles["full"]), _rows(profiles["summary"])
    s = synthetic(N, with_sites=True)
    assert len(full["rows"]) == len(summ["rows"]) == len(s["sites"]) == 9
    for a, b in zip(full["rows"], summ["rows"]):
        assert (a["function"], a["location"], a["calls"], a["bytes_sent"]) == \
            (b["function"], b["location"], b["calls"], b["bytes_sent"])
        assert a["time"] == pytest.approx(b["time"])
        for k in ("min_pe", "max_pe"):
            assert a["time_per_rank"][k] == b["time_per_rank"][k], k
        assert a["time_per_rank"]["max"] == pytest.approx(b["time_per_rank"]["max"])
    # each site's numbers are the synthetic's own
    by_loc = {r["location"]: r for r in full["rows"]}
    for sid, f, off, bucket, calls, sent, recv, t in s["sites"]:
        r = by_loc[f"stencil2d+0x{off:x}"]
        assert r["function"] == profiles["full"].functions[f]
        assert r["calls"] == int(calls.sum()) and r["time"] == pytest.approx(float(t.sum()))
        per = t
        assert r["time_per_rank"]["max_pe"] == int(np.argmax(per))
        assert [b["bucket"] for b in r["sizes"]] == ([] if bucket is None else [bucket])
    assert full["modules"] == [{"path": "/synthetic/stencil2d", "build_id": bytes(range(20)).hex(),
                                "status": "missing", "note": full["modules"][0]["note"]}]
    assert "not found" in full["notes"][0]


def _text(rep: dict) -> str:
    from rich.console import Console

    from mpiscope.report import render
    con = Console(record=True, width=200)
    render(rep, con)
    return con.export_text()


def test_report_terminal_and_options(profiles, tmp_path):
    prof = profiles["full"]
    out = _text(build_report(prof, callsites=3, symbolizer=SYM))
    assert "Call sites (time per rank in seconds, top 3 of 9" in out
    assert "stencil2d+0x1c04" in out and "stencil2d+0x20a4" not in out
    out = _text(build_report(prof, callsites=None, symbolizer=SYM))
    assert "stencil2d+0x20a4" in out and "top 3" not in out
    js = json.loads(mpitest.run(mpitest.mpiscope_cmd("report", prof.path, "--json",
                                                     "--callsites", "3")).stdout)
    assert len(js["callsites"]["rows"]) == 9 and js["callsites"]["top"] == 3
    bad = mpitest.run(mpitest.mpiscope_cmd("report", prof.path, "--callsites", "many"), check=False)
    assert bad.returncode == 2 and bad.stderr.strip().splitlines() == \
        ["mpiscope: error: --callsites takes a number or 'all', not 'many'"]
    none = read(write_profile(tmp_path / "old.mpiscope", nranks=2, functions=["MPI_Send"]))
    assert "Call sites: not recorded" in _text(build_report(none, symbolizer=SYM))


def test_export_csv_hatchet_json(profiles, tmp_path):
    import pandas as pd
    prof = profiles["full"]
    from mpiscope.export import csv_files, hatchet, json_doc
    written = csv_files.write(prof, tmp_path / "s.csv")
    assert written[-1] == tmp_path / "s.callsites.csv"
    sites = pd.read_csv(tmp_path / "s.callsites.csv")
    tot = prof.callsites[prof.callsites["bucket"] == fmt.SITE_TOTAL]
    assert len(sites) == len(tot) and sites["calls"].sum() == int(tot["calls"].sum())
    assert set(sites["location"]) == {f"stencil2d+0x{o:x}" for _, _, o, *_ in
                                      synthetic(N, with_sites=True)["sites"]}
    hj = tmp_path / "s.hatchet.json"
    hatchet.write(prof, hj)
    doc = json.loads(hj.read_text())
    graph = doc["graph"][0]
    df = pd.DataFrame(doc["dataframe"])
    types = {int(k): v["data"]["type"] for k, v in graph.items()}
    for k, v in graph.items():
        if v["data"]["type"] != "function":
            continue
        kids = v["children"]
        assert kids and all(types[c] == "callsite" for c in kids), v["data"]["name"]
        f_inc = df[df["node"] == int(k)].set_index("rank")["time (inc)"]
        s_inc = df[df["node"].isin(kids)].groupby("rank")["time (inc)"].sum()
        assert np.allclose(f_inc.values, s_inc.reindex(f_inc.index).values), v["data"]["name"]
    js = tmp_path / "s.json"
    json_doc.write(prof, js)
    assert len(json.loads(js.read_text())["callsites"]["calls"]) == len(tot)


def _html(prof) -> str:
    from mpiscope.html.profile_page import profile_page
    return profile_page(prof, build_report(prof, symbolizer=SYM), None)


def test_html_table_and_bars(profiles):
    text = _html(profiles["full"])
    assert 'id="callsites"' in text and "Call sites, most time first" in text
    assert text.count("its time per rank") >= 3          # the top 3 sites' bars (and sorted)
    assert "MPI_Waitall at stencil2d+0x1c04: its time per rank" in text
    assert "stencil2d+0x1c04" in _html(profiles["summary"])


def test_compare_per_site(tmp_path):
    s = synthetic(N, with_sites=True)
    paths = []
    for name, factor in (("a", 1.0), ("b", 2.0)):
        sites = [list(x) for x in s["sites"]]
        for x in sites:
            if x[2] == 0x1D30:          # the dot product's Allreduce doubles in B
                x[7] = x[7] * factor
        from mpiscope.testing import site_records
        paths.append(write_profile(tmp_path / f"{name}.mpiscope", nranks=N, meta=s["meta"],
                                   ranks=s["ranks"], funcs=s["funcs"], hist=s["hist"],
                                   modules=s["modules"],
                                   callsites=site_records(N, [tuple(x) for x in sites])))
    from mpiscope.compare.build import compare
    pa, pb = read(paths[0]), read(paths[1])
    c = compare(pa, build_report(pa, symbolizer=SYM), pb, build_report(pb, symbolizer=SYM))
    first = c["callsites"][0]
    assert (first["function"], first["location"], first["in"]) == \
        ("MPI_Allreduce", "stencil2d+0x1d30", "both")
    assert first["time"]["change_pct"] == pytest.approx(100.0)
    assert all(r["time"]["delta"] == pytest.approx(0.0) for r in c["callsites"][1:])
    from rich.console import Console
    from mpiscope.compare.render import render
    con = Console(record=True, width=200)
    render(c, con)
    assert "Call sites, per rank, biggest growth first" in con.export_text()


def test_diagnose_quotes_the_dominant_site(profiles):
    prof = profiles["full"]
    found = diagnose(prof, build_report(prof, symbolizer=SYM))["findings"]
    imb = next(f for f in found if f["rule"] == "compute-imbalance")
    quote = [e for e in imb["evidence"] if "holds this share" in e["label"]]
    assert [(e["label"], round(e["value"])) for e in quote] == \
        [("MPI_Waitall at stencil2d+0x1c04 holds this share of the wait and collective time", 90)]


def test_no_site_dominates_no_quote():
    from mpiscope.diagnose.sites import site_evidence
    rep = {"functions": [{"name": "MPI_Allreduce", "time": 10.0}],
           "callsites": {"rows": [{"function": "MPI_Allreduce", "location": f"a.c:{i}",
                                   "parent": "f", "time": t, "lost": False}
                                  for i, t in ((1, 3.4), (2, 3.3), (3, 3.3))]}}
    assert site_evidence(rep, "MPI_Allreduce") == []          # 34 % at most
    rep["callsites"]["rows"][1]["time"] = 6.0
    [e] = site_evidence(rep, "MPI_Allreduce")
    assert e["label"] == "MPI_Allreduce at a.c:2 (f) holds this share of the MPI_Allreduce time"


def test_bad_callsite_records_are_refused_or_shown_unknown(tmp_path):
    funcs = ["MPI_Send"]
    cs = records(fmt.CALLSITE, [dict(rank=0, func=0, bucket=fmt.SITE_TOTAL, site=77, calls=3,
                                     time=1.0)])
    meta = default_meta(funcs, callsites=callsites_meta({}))
    p = write_profile(tmp_path / "unknown.mpiscope", nranks=1, meta=meta, callsites=cs,
                      modules=module_records([]))
    rows = _rows(read(p))["rows"]
    assert [(r["location"], r["calls"]) for r in rows] == [("?", 3)]
    cs["func"] = 5
    bad = write_profile(tmp_path / "bad.mpiscope", nranks=1, meta=meta, callsites=cs,
                        modules=module_records([]))
    with pytest.raises(UserError, match="CALLSITES names function 5"):
        read(bad)
    meta["callsites"]["sites"] = {"zz": {"function": "x"}, "0000000000000001": 5}
    p = write_profile(tmp_path / "meta.mpiscope", nranks=1, meta=meta, callsites=cs[:0],
                      modules=module_records([{"key": SYNTHETIC_EXE_KEY, "path": "/x"}]))
    assert read(p).callsite_defs == {}
