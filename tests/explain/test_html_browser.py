"""`mpiscope html` pages opened in a real browser (system Chromium via playwright).

Every page must load with no console error and no network request, draw
every figure (plotly's SVG holds the marks, and a screenshot of each figure
shows its data colours), and show hostile profile strings as text.

Set MPISCOPE_HTML_SCREENSHOTS=DIR to keep a full-page PNG of each mini-app
page in DIR (docs/img/html/ holds the committed ones).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

import browser
import mpitest
from exampleapps import profiled
from mpiscope import format as fmt
from mpiscope import testing
from mpiscope.report import build_report

# The mini-apps, small problems with regions (args as in tests/examples/test_examples_*.py).
APPS = {
    "stencil": ("--grid", "64x48", "--steps", "30", "--hot-rank", "1", "--hot-factor", "3"),
    "pcg": ("--grid", "32x24", "--tol", "0", "--maxiter", "40"),
    "zonal": ("--grid", "32x{nlat}x4", "--steps", "3", "--procs", "1x{n}"),
}
RANK_COLOURS = {"compute": (0x4c, 0x78, 0xa8)}


def _html(profile: Path, out: Path, *extra: str) -> Path:
    mpitest.run(mpitest.mpiscope_cmd("html", str(profile), "-o", str(out), *extra))
    return out


def _check_page(loaded: browser.Loaded) -> list[dict]:
    assert loaded.console_errors == []
    assert loaded.requests == []
    plots = loaded.plots()
    assert plots, "no figure on the page"
    images = loaded.figure_images()
    for p in plots:
        assert p["drawn"] and p["width"] > 100 and p["height"] > 100, p
        assert p["bars"] + p["points"] + p["lines"] + p["heat"] > 0, f"figure {p['id']} drew no mark"
        # The screenshot of the figure is not blank: many colours, not 1-2.
        assert browser.colours(images[p["id"]]) > 8, p
        p["image"] = images[p["id"]]
    return plots


# A page is drawn from the profile alone: every mini-app on Open MPI (16 ranks), one on
# MPICH (2 ranks), which shows the other MPI's profile is drawn alike.
PAGES = [("openmpi", app) for app in sorted(APPS)] + [("mpich", "stencil")]


@pytest.mark.parametrize("impl_app", [p for p in PAGES if p[0] in mpitest.impls()],
                         ids="-".join)
def test_miniapp_page_draws_every_view(impl_app, tmp_path, chromium):
    impl, app = impl_app
    n = mpitest.NRANKS[impl]
    args = [a.format(n=n, nlat=6 * n) for a in APPS[app]]
    prof, _ = profiled(impl, n, app, *args, outdir=tmp_path)
    rep = build_report(prof)
    page_path = _html(Path(prof.path), tmp_path / f"{app}.html")
    assert page_path.stat().st_size < 20e6
    loaded = browser.open_page(chromium, page_path)
    plots = _check_page(loaded)
    pg = loaded.page
    text = pg.inner_text("body")
    # Every function and every region of the report is on the page.
    for row in rep["functions"]:
        assert row["name"] in text
    assert rep["regions"], f"{app} has MPI_Pcontrol regions"
    for reg in rep["regions"]:
        assert pg.locator("h3", has_text=f"Region {reg['name']}").count() == 1
    # The diagnosis dict's headline (mpiscope.diagnose is on main).
    from mpiscope.diagnose import diagnose
    assert diagnose(prof, rep)["headline"] in pg.locator("section#diagnosis").inner_text()
    # POP metrics of the report dict, whole run and per region.
    assert rep["pop"]["available"]
    pop_text = pg.locator("section#pop").inner_text()
    assert f"{100.0 * rep['pop']['whole']['load_balance']:.1f}%" in pop_text
    for reg in rep["pop"]["regions"]:
        assert reg["name"] in pop_text
    # The report's Environment block and per-communicator table (report --by-comm).
    env_text = pg.locator("section#environment").inner_text()
    assert "MPI_Init (entry to exit)" in env_text and "CPU affinity per node" in env_text
    comm_text = pg.locator("section#comms").inner_text()
    assert rep["communicators"] and all(c["name"] in comm_text for c in rep["communicators"])
    # The timeline: the ranks x time heat map, the kinds stacked over time (one area per
    # kind and one outside MPI) and the least / average / most MPI share (three lines).
    assert rep["timeline"]["available"]
    timeline = [p for p in plots if p["section"] == "timeline"]
    assert [p["heat"] for p in timeline] == [1, 0, 0]
    assert timeline[1]["lines"] >= len(rep["timeline"]["kinds"]) + 1 and timeline[2]["lines"] == 3
    # Per-rank stack (compute in blue, wait in red) with minPE/maxPE of compute marked.
    stack = pg.locator(f"#{plots[0]['id']}")
    assert browser.has_colour(plots[0]["image"], RANK_COLOURS["compute"])
    compute = next(r for r in rep["summary"] if r["metric"] == "compute")
    notes = stack.locator("g.annotation text").all_text_contents()
    assert f"maxPE {compute['max_pe']} (compute)" in notes
    assert f"minPE {compute['min_pe']} (compute)" in notes
    # n ranks, one bar per rank per part (no downsampling at this size).
    assert plots[0]["bars"] == 4 * n
    # The communication matrix drew when there is point-to-point traffic.
    if len(prof.peers):
        assert any(p["heat"] == 1 for p in plots)
    # The function table sorts: click "calls" twice -> ascending by calls.
    table = pg.locator("section#functions table")
    header = table.locator("th", has_text="calls")
    header.click()
    header.click()
    cells = table.locator("tbody tr td:nth-child(4)")
    sorted_calls = [int(c.get_attribute("data-sort")) for c in cells.all()]
    assert sorted_calls == sorted(r["calls"] for r in rep["functions"])
    shots = os.environ.get("MPISCOPE_HTML_SCREENSHOTS")
    if shots and impl == "openmpi":
        pg.reload()
        pg.wait_for_function("() => Array.from(document.querySelectorAll('div.plot'))"
                             ".every(d => d.querySelector('.main-svg'))")
        Path(shots).mkdir(parents=True, exist_ok=True)
        pg.screenshot(path=str(Path(shots) / f"{app}.png"), full_page=True)
    loaded.close()


HOSTILE = "<script>alert(1)</script>"
HOSTILE_REGION = "<img src=x onerror=alert(2)>"


def test_hostile_strings_render_as_text_real_run(impl, tmp_path, chromium):
    """A real run of a program whose name and arguments are markup and non-UTF-8 bytes."""
    import shutil
    # A copy, not a link: the runtime names the program by /proc/self/exe. A file
    # name may not hold '/', this one has none.
    link = tmp_path / HOSTILE_REGION
    shutil.copy2(mpitest.native.program(impl, "tests/hello"), link)
    outdir = tmp_path / "out"
    outdir.mkdir()
    cmd = mpitest.mpiscope_cmd("run", "--dir", str(outdir), "--mpi", impl, "--",
                               *mpitest.launcher(impl, 2), str(link), HOSTILE)
    env = mpitest.mpi_env()
    # One argument of bytes that are not UTF-8: the runtime writes them as U+FFFD.
    subprocess.run([*cmd, os.fsdecode(b"\xff\xfe-arg")], env=env, check=True,
                   capture_output=True, timeout=120)
    prof_path = next(outdir.glob("*.mpiscope"))
    page_path = _html(prof_path, tmp_path / "hostile.html")
    _check_hostile(chromium, page_path, [HOSTILE_REGION, HOSTILE, "\ufffd\ufffd-arg"])


def test_hostile_strings_render_as_text_everywhere(tmp_path, chromium):
    """Program, arguments, host, region names, MPI-IO hints and lone surrogates."""
    s = testing.synthetic(64, ppn=16)
    meta = dict(s["meta"])
    meta["program"] = HOSTILE
    meta["argv"] = [HOSTILE, "\udcff\ud800", "a\x00b"]
    meta["hostname"] = "<b>host</b>"
    meta["regions"] = {k: (HOSTILE_REGION if v == "halo" else v)
                       for k, v in meta["regions"].items()}
    meta["io_files"] = [{"name": "<iframe src=x>", "cb_nodes": "<i>4</i>"}]
    path = testing.write_profile(tmp_path / "h.mpiscope", nranks=64, meta=meta,
                                 ranks=s["ranks"], funcs=s["funcs"], hist=s["hist"],
                                 peers=s["peers"], regions=s["regions"], nodes=s["nodes"])
    page_path = _html(path, tmp_path / "h.html")
    _check_hostile(chromium, page_path, [HOSTILE, HOSTILE_REGION, "<b>host</b>",
                                         "<iframe src=x>", "<i>4</i>", "\ufffd\ufffd", "a\\x00b"])


def _check_hostile(b, page_path: Path, literal: list[str]) -> None:
    raw = page_path.read_text(encoding="utf-8")  # strict: the page is valid UTF-8
    for s in literal:
        assert s.startswith("\ufffd") or s.startswith("a\\") or s not in raw, \
            f"{s!r} reached the page unescaped"
    loaded = browser.open_page(b, page_path)
    _check_page(loaded)
    pg = loaded.page
    text = pg.inner_text("body")
    for s in literal:
        assert s in text, f"{s!r} is not shown as text"
    assert loaded.dialogs == []
    # Only mpiscope's own elements: 2 fixed scripts + one per figure, no injected ones.
    counts = pg.evaluate("""() => ({scripts: document.scripts.length,
        plots: document.querySelectorAll('div.plot').length,
        img: document.querySelectorAll('img').length,
        iframe: document.querySelectorAll('iframe').length,
        bold: document.querySelectorAll('body > section b, dd b').length})""")
    assert counts["scripts"] == 2 + counts["plots"]
    assert counts["img"] == counts["iframe"] == counts["bold"] == 0
    loaded.close()


def test_million_rank_page_is_downsampled_and_draws(tmp_path, chromium):
    """The synthetic 1,048,576-rank profile: every view drawn from buckets, the hot
    rank (the maxPE of compute) kept and marked, the matrix in blocks."""
    n = 1 << 20
    path = testing.write_synthetic(tmp_path / "big.mpiscope", n, ppn=64)
    page_path = _html(path, tmp_path / "big.html")
    assert page_path.stat().st_size < 20e6
    path.unlink()  # 0.9 GB: free the disk before the browser runs
    loaded = browser.open_page(chromium, page_path)
    plots = _check_page(loaded)
    pg = loaded.page
    hot = n // 3  # testing.synthetic's hot rank computes 3x longer
    stack = pg.locator(f"#{plots[0]['id']}")
    notes = stack.locator("g.annotation text").all_text_contents()
    assert f"maxPE {hot} (compute)" in notes
    # 500 bars (4 parts each) and the min/max lines, not a million bars.
    assert plots[0]["bars"] == 4 * 500
    assert stack.locator("g.trace.scatter").count() == 2
    assert "average of 2,098 ranks per bar" in stack.locator("g.g-gtitle").text_content()
    heat = next(p for p in plots if p["heat"])
    assert "in blocks of 4,096 ranks" in pg.locator(f"#{heat['id']}").text_content()
    loaded.close()


def test_compare_page_side_by_side(impl, nranks, tmp_path, chromium):
    """`mpiscope compare A B --html` on zonal gather -> distributed: A and B drawn side by
    side, the compare dict's "worse" list shown, changes coloured."""
    from mpiscope.compare import compare

    n = min(nranks, 4)
    args = ("--grid", f"32x{6 * n}x4", "--steps", "3", "--procs", f"1x{n}")
    pa, _ = profiled(impl, n, "zonal", *args, "--variant", "gather", outdir=tmp_path / "a")
    pb, _ = profiled(impl, n, "zonal", *args, "--variant", "distributed", outdir=tmp_path / "b")
    out = tmp_path / "cmp.html"
    mpitest.run(mpitest.mpiscope_cmd("compare", pa.path, pb.path, "--html", "-o", str(out)))
    ra, rb = build_report(pa), build_report(pb)
    c = compare(pa, ra, pb, rb)
    loaded = browser.open_page(chromium, out)
    plots = _check_page(loaded)
    pg = loaded.page
    # The timelines: A and B overlaid on one axis (one line each), then each run's kinds
    # stacked over time, A beside B.
    timeline = [p for p in plots if p["section"] == "timeline"]
    assert c["timeline"]["available"] and len(timeline) == 3
    # one line per run; a run that ended within one column (B under load in CI) is a marker
    long = sum(sum(v is not None for v in c["timeline"][side]["mpi"]) > 1 for side in "ab")
    assert timeline[0]["lines"] == long and timeline[0]["points"] == 2 - long, timeline[0]
    assert timeline[1]["y"] == timeline[2]["y"] and timeline[1]["x"] < timeline[2]["x"]
    plots = [p for p in plots if p["section"] != "timeline"]
    # Rank stacks (2 x 2), histograms and (with point-to-point traffic) matrices:
    # each A beside its B, same y range.
    with_peers = [len(p.peers) > 0 for p in (pa, pb)]
    assert len(plots) == 6 + sum(with_peers)
    pairs = [(plots[i], plots[i + 1]) for i in (0, 2)] + [(plots[-2], plots[-1])]
    for left, right in pairs:
        assert left["y"] == right["y"] and left["x"] < right["x"]
    yr = pg.evaluate(f"""() => [document.getElementById('{plots[0]["id"]}').layout.yaxis.range,
                               document.getElementById('{plots[1]["id"]}').layout.yaxis.range]""")
    assert yr[0] == yr[1]
    worse = pg.locator("section#worse li").all_text_contents()
    assert worse == c["worse"]
    # The gather's MPI_Gatherv bytes fall: its bytes change is "better" (green).
    row = pg.locator("section#functions tr", has_text="MPI_Gatherv")
    gatherv = next(f for f in c["functions"] if f["name"] == "MPI_Gatherv")
    assert gatherv["bytes"]["change_pct"] < -5
    assert row.locator("td").nth(8).get_attribute("class") == "better"
    shots = os.environ.get("MPISCOPE_HTML_SCREENSHOTS")
    if shots and impl == "openmpi":
        Path(shots).mkdir(parents=True, exist_ok=True)
        pg.screenshot(path=str(Path(shots) / "compare.png"), full_page=True)
    loaded.close()
    # Never overwrite without --force.
    proc = mpitest.run(mpitest.mpiscope_cmd("compare", pa.path, pb.path, "--html", "-o",
                                            str(out)), check=False)
    assert proc.returncode == 2 and "exists" in proc.stderr
