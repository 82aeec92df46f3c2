"""Sampled compute in summary mode (MPISCOPE_MODE=summary, docs/sampling.md "Summary mode"),
both MPIs: the known-cost program cost.c (light_kernel and heavy_kernel of 3:1 cost; rank 1
runs heavy_kernel FACTOR times as long) once in summary mode and once in full mode, every
assertion sharing those two runs:
- the summary's per-function shares of the compute samples agree with the full run's
  within their stated sampling error, and its totals with its own rows;
- heavy_kernel's maxPE is the slow rank and its max/avg reflects FACTOR (9 / 6 = 1.5);
- the section is bounded: at most MPISCOPE_SAMPLE_MAX function rows (set to its least, 16)
  plus one row per sampled MPI function and four fixed rows, whatever the rank count;
- report (terminal, JSON), diagnose, html and compare take the summary profile.
many.c (24 functions of planted cost, summary mode only): every rank's own top 16 differ and
their union holds 20; the profile keeps exactly the 16 of most samples over ranks, a rank
without a kept function counts 0 there, and the rest is the "other" row at its planted share.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import mpitest
from mpiscope import format as fmt
from mpiscope.report.build import build_report
from mpiscope.symbols import Symbolizer

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "callsites"))
from sitebuild import compile_program, run_profile  # noqa: E402

PROGRAMS = Path(__file__).resolve().parent / "programs"
HZ = 250
STEPS, N, SLOW, FACTOR = 20, 3_000_000, 1, 3
SAMPLE_MAX = 16          # the setting's least: the cap the summary's function rows obey
SIGMAS = 4.0


@pytest.fixture(scope="module", params=mpitest.impls())
def runs(request, tmp_path_factory):
    """{"summary": (prof, rep), "full": (prof, rep)} of cost.c on 2 ranks of one MPI."""
    impl = request.param
    tmp = tmp_path_factory.mktemp(f"cost-summary-{impl}")
    exe = compile_program(impl, "c", [PROGRAMS / "cost.c"], tmp / "cost", "-O1")
    out = {}
    for mode in ("summary", "full"):
        d = tmp / mode
        d.mkdir()
        prof, stdout = run_profile(impl, [str(exe), str(N), str(STEPS), str(SLOW), str(FACTOR)], d,
                                   env={"MPISCOPE_SAMPLE": str(HZ), "MPISCOPE_MODE": mode,
                                        "MPISCOPE_SAMPLE_MAX": str(SAMPLE_MAX)})
        assert f"steps {STEPS} sum 2" in stdout
        out[mode] = (prof, build_report(prof, symbolizer=Symbolizer(use_cache=False)))
    return out


def _rows(rep: dict) -> dict[str, dict]:
    return {r["function"]: r for r in rep["samples"]["functions"]}


def test_shares_agree_with_full_mode(runs):
    (ps, rs), (pf, rf) = runs["summary"], runs["full"]
    assert ps.is_summary and not pf.is_summary
    ss, sf = rs["samples"], rf["samples"]
    assert ss["recorded"] and ss["hz"] == HZ
    a, b = _rows(rs), _rows(rf)
    assert {"heavy_kernel", "light_kernel"} <= set(a), list(a)
    for name in ("heavy_kernel", "light_kernel"):
        x, y = a[name], b[name]
        assert Path(x["file"]).name == "cost.c" and x["line"] is None, x
        # two independent runs: their difference has the error of both
        se = np.hypot(x["share_se"], y["share_se"])
        assert abs(x["share"] - y["share"]) < SIGMAS * se + 0.02, (name, x["share"], y["share"], se)
    # expected whole-job shares: rank 0 light 1 + heavy 3, rank 1 light 1 + heavy 9
    assert abs(a["heavy_kernel"]["share"] - 12 / 14) < SIGMAS * a["heavy_kernel"]["share_se"] + 0.03
    # the rows add up to the compute samples, the compute and MPI samples to all
    assert sum(r["samples"] for r in ss["functions"]) == ss["compute_samples"]
    assert ss["compute_samples"] + ss["mpi_samples"] == ss["samples"] > 0
    assert ss["mpi"][0]["function"] == "MPI_Allreduce"


def test_imbalance_of_the_slow_rank(runs):
    (ps, rs) = runs["summary"]
    hv = _rows(rs)["heavy_kernel"]
    st = hv["time_per_rank"]
    assert st["max_pe"] == SLOW and st["min_pe"] == 0
    # rank 1: FACTOR x 3 units, rank 0: 3 units -> max / avg = 9 / 6
    assert st["max"] / st["avg"] == pytest.approx(2 * FACTOR / (FACTOR + 1), abs=0.25), st
    assert st["sum"] == pytest.approx(hv["samples"] / HZ)
    assert hv["imbalance_time"] == pytest.approx(st["max"] - st["avg"])
    lt = _rows(rs)["light_kernel"]["time_per_rank"]
    assert hv["imbalance_time"] > 3 * abs(lt["max"] - lt["avg"])
    # the full run's per-rank seconds carry the same maxPE (times across two runs on a
    # shared VM are not compared: its guest CPU time is not always the work)
    assert _rows(runs["full"][1])["heavy_kernel"]["time_per_rank"]["max_pe"] == SLOW


def test_section_is_bounded(runs):
    ps, _ = runs["summary"]
    s = ps.samples
    assert s.dtype == fmt.SAMPLE_SUMMARY
    func = s["func"]
    nfn = int((func == fmt.SAMPLE_COMPUTE).sum())
    assert 2 <= nfn <= SAMPLE_MAX == int(ps.meta["samples"]["max_records"])
    mpi = int((func < fmt.SAMPLE_COMPUTE_ALL).sum())
    assert len(s) <= SAMPLE_MAX + mpi + 4          # + other, MPI layer, compute, all
    assert mpi <= len(ps.functions)
    # one record per key: nothing per rank
    keys = {(int(f), int(m), int(o)) for f, m, o in zip(func, s["module"], s["offset"])}
    assert len(keys) == len(s)
    (alls,) = s[func == fmt.SAMPLE_ALL]
    (comp,) = s[func == fmt.SAMPLE_COMPUTE_ALL]
    assert alls["nonzero"] == ps.nranks and comp["sum"] <= alls["sum"]
    # the compute total per rank: rank 1 ran the longer compute
    assert comp["max_rank"] == SLOW and comp["max"] > 1.5 * comp["min"]
    # the functions' modules are in MODULES (symbolized offline)
    mods = {int(k) for k in ps.modules["key"]}
    assert all(int(m) in mods for m in s["module"][func == fmt.SAMPLE_COMPUTE] if m)


def test_summary_reports_and_diagnoses(runs, tmp_path):
    from mpiscope.compare.build import compare
    from mpiscope.diagnose import diagnose
    from mpiscope.html.profile_page import profile_page
    from mpiscope.report.tables import samples_lines, samples_table
    from mpiscope.textout import json_safe
    (ps, rs), (pf, rf) = runs["summary"], runs["full"]
    doc = json.loads(json.dumps(json_safe(rs)))
    sm = doc["samples"]
    assert sm["functions"][0]["function"] == "heavy_kernel"
    # the JSON keys of full mode's rows, where they apply
    assert set(rf["samples"]["functions"][0]) <= set(sm["functions"][0])
    assert samples_table(rs["samples"]).row_count >= 2
    assert any("summary mode" in line for line in samples_lines(rs["samples"]))
    diag = diagnose(ps, rs)
    found = [f for f in diag["findings"] if f["rule"] == "compute-imbalance"]
    assert len(found) == 1, [f["rule"] for f in diag["findings"]]
    assert "heavy_kernel (cost.c)" in found[0]["title"] and "light_kernel" not in found[0]["title"]
    html = profile_page(ps, rs, diag)
    assert "Compute by function (sampled)" in html and "heavy_kernel" in html
    from mpiscope.export import json_doc
    assert "callsites" in ps.meta                # call sites (on by default): no per-rank view
    json_doc.write(ps, tmp_path / "s.json")
    assert {"summary", "hist"} <= set(json.loads((tmp_path / "s.json").read_text()))
    c = compare(pf, rf, ps, rs)
    both = {r["function"]: r for r in c["samples"]}
    assert both["heavy_kernel"]["in"] == "both"
    # the command line: report and diagnose of the summary file exit 0
    for cmd in ("report", "diagnose"):
        proc = mpitest.run(mpitest.mpiscope_cmd(cmd, ps.path), timeout=120)
        assert "heavy_kernel" in proc.stdout, proc.stdout[-2000:]


@pytest.fixture(scope="module", params=mpitest.impls())
def many(request, tmp_path_factory):
    impl = request.param
    tmp = tmp_path_factory.mktemp(f"many-{impl}")
    exe = compile_program(impl, "c", [PROGRAMS / "many.c"], tmp / "many", "-O1", "-fno-ipa-icf")
    prof, stdout = run_profile(impl, [str(exe), "150000", "20"], tmp,
                               env={"MPISCOPE_SAMPLE": str(HZ), "MPISCOPE_MODE": "summary",
                                    "MPISCOPE_SAMPLE_MAX": str(SAMPLE_MAX)})
    assert "steps 20 sum 2" in stdout
    return prof, build_report(prof, symbolizer=Symbolizer(use_cache=False))


def test_capped_union_keeps_the_heaviest(many):
    prof, rep = many
    rows = _rows(rep)
    from mpiscope.report.samples import OTHER
    # units per rank (many.c): rank 0 f00..f15 10, f16..f23 1; rank 1 f00..f11 10,
    # f16..f19 4, f20..f23 1: rank 1's own top 16 holds f16..f19, the cap drops them
    kept = {f for f in rows if f != OTHER}
    assert kept == {f"f{k:02d}" for k in range(16)}, sorted(rows)
    for k in range(12, 16):        # rank 1 never calls f12..f15: its 0 is their min
        st = rows[f"f{k:02d}"]["time_per_rank"]
        assert st["min"] == 0 and st["min_pe"] == 1 and st["max_pe"] == 0, (k, st)
        assert rows[f"f{k:02d}"]["ranks_sampled"] == 1
    sm = rep["samples"]
    assert sum(r["samples"] for r in sm["functions"]) == sm["compute_samples"]
    other = rows[OTHER]
    want = (8 * 1 + 4 * 4 + 4 * 1) / (16 * 10 + 8 + 12 * 10 + 4 * 4 + 4 * 1)
    assert abs(other["share"] - want) < SIGMAS * other["share_se"] + 0.02, (other["share"], want)
    s = prof.samples
    assert int((s["func"] == fmt.SAMPLE_COMPUTE).sum()) == SAMPLE_MAX
