"""The HTML page's data reductions (downsampling, matrix blocks) and the html command,
without a browser."""

from __future__ import annotations

import numpy as np

import mpitest
from mpiscope import format as fmt
from mpiscope import read, testing
from mpiscope.html import matrix, ranks
from mpiscope.html.escape import clean, plot_text, script_json, text


def test_buckets_keep_the_extreme_ranks():
    rng = np.random.default_rng(3)
    n = 100_003
    compute = rng.random(n)
    compute[77_777] = 50.0      # the slowest rank
    compute[12_345] = -1.0      # the fastest (a negative value stays visible too)
    parts = {"compute": compute, "mpi": np.full(n, 0.5)}
    b = ranks.bucketize(parts, nbuckets=500)
    assert len(b.start) == 500 and b.size.sum() == n and not b.exact
    assert b.hi.max() == 50.5 and b.hi_rank[np.argmax(b.hi)] == 77_777
    assert b.lo.min() == -0.5 and b.lo_rank[np.argmin(b.lo)] == 12_345
    # averages are exact per bucket
    i = int(np.searchsorted(b.start, 77_777, side="right") - 1)
    lo, hi = b.start[i], b.start[i] + b.size[i]
    assert np.isclose(b.avg["compute"][i], compute[lo:hi].mean())
    # sorted: the slowest rank first, the fastest last
    order = ranks.sort_order(compute)
    s = ranks.bucketize(parts, order, nbuckets=500)
    assert s.first_rank[0] == 77_777 and s.last_rank[-1] == 12_345
    assert ranks.position_of(order, 77_777) == 0


def test_small_jobs_are_not_downsampled():
    parts = {"compute": np.arange(7.0)}
    b = ranks.bucketize(parts, nbuckets=500)
    assert b.exact and b.first_rank.tolist() == list(range(7))
    assert b.avg["compute"].tolist() == list(range(7))


def test_block_matrix_sums_every_byte_and_outlines_nodes():
    peers = testing.records(fmt.PEER, [dict(rank=s, peer=d, msgs=m, bytes=by) for s, d, m, by in
                                       [(0, 1, 2, 10), (1, 0, 1, 5), (5, 9, 3, 7), (9, 5, 1, 1)]])
    node = np.repeat(np.arange(5), 2)  # 2 ranks per node, 10 ranks
    exact = matrix.block_matrix(peers, 10, node, max_blocks=16)
    assert exact.block == 1 and exact.nbytes[0, 1] == 10 and exact.nbytes[9, 5] == 1
    assert exact.outlines == [(0, 2), (2, 4), (4, 6), (6, 8), (8, 10)]
    agg = matrix.block_matrix(peers, 10, node, max_blocks=2)
    assert agg.block == 5 and agg.nbytes.shape == (2, 2)
    assert agg.nbytes.tolist() == [[15, 0], [0, 8]] and agg.msgs.sum() == 7
    assert agg.outlines == [] and "spans several nodes" in agg.outline_why


def test_escaping_of_profile_strings():
    assert text("<script>") == "&lt;script&gt;"
    assert text('a"b') == "a&quot;b"
    assert plot_text("<b>x</b>") == "&lt;b&gt;x&lt;/b&gt;"
    assert clean("\ud800x\x01") == "\ufffdx\\x01"
    assert clean(b"\xff") == "\ufffd"
    js = script_json({"s": "</script><script>alert(1)</script>"})
    assert "<" not in js and ">" not in js


def test_html_command_refuses_to_overwrite_and_bad_profiles(tmp_path):
    path = testing.write_synthetic(tmp_path / "s.mpiscope", 16, ppn=4)
    out = tmp_path / "s.html"
    out.write_text("keep")
    proc = mpitest.run(mpitest.mpiscope_cmd("html", str(path)), check=False)
    assert proc.returncode == 2 and "exists" in proc.stderr and out.read_text() == "keep"
    mpitest.run(mpitest.mpiscope_cmd("html", str(path), "--force"))
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and "Plotly.newPlot" in page
    assert "https://" not in page.split("<script>", 2)[0]  # nothing loaded from the network
    bad = tmp_path / "bad.mpiscope"
    bad.write_bytes(b"MPISCOPE" + b"\0" * 10)
    proc = mpitest.run(mpitest.mpiscope_cmd("html", str(bad)), check=False)
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1
    assert not (tmp_path / "bad.html").exists()


def test_summary_profile_page_says_what_is_missing(tmp_path):
    path = testing.write_synthetic(tmp_path / "s.mpiscope", 64, mode="summary", ppn=8)
    out = tmp_path / "s.html"
    mpitest.run(mpitest.mpiscope_cmd("html", str(path), "-o", str(out)))
    page = out.read_text()
    assert "summary-mode profile has no per-rank rows" in page
    assert read(str(path)).is_summary


def test_environment_section_full_summary_and_absent(tmp_path):
    """The report's Environment block is on the page: times per rank, the facts lines and
    the affinity table (full mode), the CPU lists (summary mode), or why there is none."""
    from mpiscope.report import build_report

    pages = {}
    for name, mode, env in (("full", "full", True), ("summ", "summary", True),
                            ("none", "full", False)):
        path = testing.write_synthetic(tmp_path / f"{name}.mpiscope", 8, mode=mode, ppn=4,
                                       with_env=env)
        out = tmp_path / f"{name}.html"
        mpitest.run(mpitest.mpiscope_cmd("html", str(path), "-o", str(out)))
        pages[name] = (out.read_text(), build_report(read(str(path)))["environment"])
    page, env = pages["full"]
    assert '<section id="environment">' in page and 'href="#environment"' in page
    assert "MPI_Init (entry to exit)" in page and "CPU affinity per node" in page
    assert f"<td>{env['nodes'][0]['hostname']}</td>" in page
    assert page.count("<tr><td>") >= len(env["nodes"])
    page, env = pages["summ"]
    assert env["source"] == "summary" and "Summary mode: CPU lists seen" in page
    assert "CPU affinity per node" not in page
    page, env = pages["none"]
    assert not env["available"] and env["why_not"] in page


def test_diagnosis_and_pop_dicts_render_what_is_there():
    from mpiscope.html.explain import diagnosis_section, pop_section

    diag = {"schema": "mpiscope-diagnosis/1", "clean": False, "headline": "rank <2> is slow",
            "findings": [{"rule": "compute-imbalance", "title": "Compute <b>imbalance</b>",
                          "cost_s": 1.25, "cost_pct": 12.5,
                          "ranks": {"count": 1, "min_pe": 0, "max_pe": 2, "list": [2]},
                          "evidence": [{"label": "imbalance", "value": 63.3, "unit": "%"},
                                       {"label": "slowest", "value": "rank 2", "unit": ""}],
                          "fix": "balance the work", "command": "mpiscope place auto"}],
            "limits": ["one run only"]}
    html = diagnosis_section(diag)
    assert "rank &lt;2&gt; is slow" in html and "Compute &lt;b&gt;imbalance&lt;/b&gt;" in html
    assert "~1.250 s (12.5% of the run)" in html and "maxPE 2" in html
    # a cost of the job (MPI_Init), a bound, an ambiguous case: the page says which
    f = diag["findings"][0]
    more = [{**f, "pct_of": "job"}, {**f, "bound": "upper"},
            {**f, "cost_max_s": 5.0, "cost_max_pct": 50.0, "settle": "rerun with --sync",
             "method": "half the calls x the fastest call"}]
    html = diagnosis_section({**diag, "findings": more})
    assert "~1.250 s (12.5% of the job)" in html and "up to ~1.250 s (12.5% of the run)" in html
    assert "up to 5.000 s (50.0%)" in html and "rerun with --sync" in html
    assert "half the calls x the fastest call" in html
    assert "<code>mpiscope place auto</code>" in html and "one run only" in html
    assert diagnosis_section(None) is None
    pop = {"available": True, "why_not": None,
           "whole": {"parallel_efficiency": 0.5, "load_balance": 0.8,
                     "communication_efficiency": 0.625, "serialisation": None,
                     "transfer": None},
           "regions": [{"name": "halo", "parallel_efficiency": 0.25, "load_balance": 1.0,
                        "communication_efficiency": 0.25, "serialisation": 0.5,
                        "transfer": 0.5}],
           "notes": ["from totals"]}
    html = pop_section(pop)
    assert "80.0%" in html and "62.5%" in html and "halo" in html and "from totals" in html
    assert 'data-sort=""' not in html  # a missing number shows "-" and sorts as text
    missing = pop_section({"available": False, "why_not": "summary mode without wall",
                           "whole": None, "regions": [], "notes": []})
    assert "Not available" in missing and "summary mode without wall" in missing


def test_page_details_issue_29(tmp_path):
    """The per-rank chart sorted by compute labels its bars with ranks, one rank's page has
    one minPE/maxPE arrow, "Arguments" leaves the program out, and the traffic matrix says it
    is point-to-point and gives the collectives' bytes."""
    from mpiscope.html.profile_page import rank_views

    parts = {"compute": np.array([1.0, 3.0, 2.0]), "mpi": np.zeros(3)}
    _, ordered = rank_views(parts, "compute", {"max_pe": 1, "min_pe": 0}, "t", "compute")
    assert '"title":{"text":"rank, sorted by compute, largest first"}' in ordered
    assert '"ticktext":["1","2","0"]' in ordered  # ranks by compute, largest first
    (one,) = rank_views({"compute": np.array([2.0]), "mpi": np.zeros(1)}, "compute",
                        {"max_pe": 0, "min_pe": 0}, "t", "compute", sort=False)
    assert one.count("PE 0 (compute)") == 1 and "maxPE and minPE 0 (compute)" in one
    path = testing.write_synthetic(tmp_path / "s.mpiscope", 8, ppn=4)
    out = tmp_path / "s.html"
    mpitest.run(mpitest.mpiscope_cmd("html", str(path), "-o", str(out)))
    page = out.read_text()
    assert "/synthetic/stencil2d 2x4" not in page and "2x4" in page  # the argument, once
    assert "Point-to-point bytes sent, sender x receiver" in page
    assert "point-to-point traffic only" in page and "MPI_Allreduce 6.25 KiB" in page
