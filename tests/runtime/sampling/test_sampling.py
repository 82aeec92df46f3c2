"""Sampled compute (MPISCOPE_SAMPLE, docs/sampling.md) on real runs, both MPIs.

One run per program and MPI, shared by every assertion (module-scoped fixtures):
- cost.c: light_kernel and heavy_kernel of known 3:1 cost (the same loop, 3x the trips);
  rank 1 runs heavy_kernel three times as long (diagnose names it). Rank 0's shares must be 1/4 and 3/4 within
  their stated standard error (4 sigma), rank 1 carries heavy_kernel's imbalance, the
  samples taken in MPI_Allreduce are MPI, never MPI-library code counted as compute,
  and the MPI counts are exact.
- blocked.c: read, nanosleep and poll between bursts of compute: the same output and
  exit code with and without sampling, and the same MPI counts as the unsampled run.
- omp.c: one rank, two OpenMP threads calling MPI; the thread running 3x the work has
  about 3x the samples.
"""

from __future__ import annotations

import json
import re
import subprocess
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
HZ = 250          # above the default so that ~1 s of CPU gives enough samples
STEPS, N = 20, 3_000_000
SIGMAS = 4.0


@pytest.fixture(scope="module", params=mpitest.impls())
def mpi_impl(request):
    return request.param


@pytest.fixture(scope="module")
def cost(mpi_impl, tmp_path_factory):
    impl = mpi_impl
    tmp = tmp_path_factory.mktemp(f"cost-{impl}")
    exe = compile_program(impl, "c", [PROGRAMS / "cost.c"], tmp / "cost", "-O1")
    prof, out = run_profile(impl, [str(exe), str(N), str(STEPS), "1", "3"], tmp,
                            env={"MPISCOPE_SAMPLE": str(HZ)})
    rep = build_report(prof, symbolizer=Symbolizer(use_cache=False))
    return prof, out, rep


def _rank_samples(rep, rank: int) -> dict[str, float]:
    sm = rep["samples"]
    i = sm["per_rank"]["functions"]
    return {f: sm["per_rank"]["seconds"][k][rank] * sm["hz"] for k, f in enumerate(i)}


def test_shares_of_known_cost(cost):
    prof, out, rep = cost
    sm = rep["samples"]
    assert sm["recorded"] and sm["hz"] == HZ
    rows = {r["function"]: r for r in sm["functions"]}
    assert {"heavy_kernel", "light_kernel"} <= set(rows), list(rows)
    for name in ("heavy_kernel", "light_kernel"):
        r = rows[name]
        assert Path(r["file"]).name == "cost.c" and r["line"], r
        assert r["share_se"] > 0
    # rank 0: heavy / (heavy + light) is 3/4 within its standard error
    mine = _rank_samples(rep, 0)
    h, l = mine["heavy_kernel"], mine["light_kernel"]
    n = h + l
    p = h / n
    se = np.sqrt(0.75 * 0.25 / n)
    assert n >= 100, mine
    assert abs(p - 0.75) < SIGMAS * se + 0.02, (p, se, mine)
    # rank 1 ran heavy_kernel three times as long: 9:1
    r1 = _rank_samples(rep, 1)
    p1 = r1["heavy_kernel"] / (r1["heavy_kernel"] + r1["light_kernel"])
    se1 = np.sqrt(0.9 * 0.1 / (r1["heavy_kernel"] + r1["light_kernel"]))
    assert abs(p1 - 0.9) < SIGMAS * se1 + 0.02, (p1, r1)
    # the report's whole-job share and its stated error agree with the records
    total = sum(r["samples"] for r in sm["functions"])
    assert total == sm["compute_samples"]
    hv = rows["heavy_kernel"]
    assert hv["share"] == pytest.approx(hv["samples"] / total)
    assert hv["share_se"] == pytest.approx(np.sqrt(hv["share"] * (1 - hv["share"]) / total))


def test_imbalance_names_the_rank_and_function(cost):
    prof, out, rep = cost
    rows = {r["function"]: r for r in rep["samples"]["functions"]}
    hv = rows["heavy_kernel"]["time_per_rank"]
    assert hv["max_pe"] == 1 and hv["min_pe"] == 0
    assert hv["max"] > 1.5 * hv["min"]
    lt = rows["light_kernel"]["time_per_rank"]
    assert rows["heavy_kernel"]["imbalance_time"] > 3 * abs(lt["max"] - lt["avg"])
    # time estimates: samples / Hz of CPU time, near what the loop took
    assert hv["max"] == pytest.approx(_rank_samples(rep, 1)["heavy_kernel"] / HZ)


def test_diagnose_names_the_function(cost):
    from mpiscope.diagnose import diagnose
    prof, out, rep = cost
    found = [f for f in diagnose(prof, rep)["findings"] if f["rule"] == "compute-imbalance"]
    assert len(found) == 1, [f["rule"] for f in diagnose(prof, rep)["findings"]]
    assert "rank 1 spends" in found[0]["title"] and "heavy_kernel (cost.c)" in found[0]["title"]
    assert "light_kernel" not in found[0]["title"]
    assert any("heavy_kernel" in e["label"] for e in found[0]["evidence"])


def test_samples_in_mpi_are_mpi(cost):
    prof, out, rep = cost
    s = prof.samples
    names = prof.functions
    in_mpi = s[s["func"] < fmt.SAMPLE_MPI_LAYER]
    # rank 0 waits in MPI_Allreduce for rank 1 (busy-polling): samples there, as MPI
    r0 = in_mpi[in_mpi["rank"] == 0]
    assert {names[f] for f in r0["func"].tolist()} <= {"MPI_Allreduce", "MPI_Finalize",
                                                        "MPI_Comm_rank", "MPI_Init"}
    assert int(r0["samples"][np.array([names[f] == "MPI_Allreduce" for f in r0["func"]])].sum()) > 10
    assert rep["samples"]["mpi"][0]["function"] == "MPI_Allreduce"
    # no compute row is in the MPI library or mpiscope's own code
    for r in rep["samples"]["functions"]:
        mod = Path(r["module"] or "").name
        assert not mod.startswith(("libmpi", "libmpiscope", "libopen-", "libucp", "libuct",
                                   "libucs", "libpmix", "libfabric")), r
    # MPI counts exact: sampling changed nothing the program did
    f = prof.funcs
    calls = {names[k]: int(f["calls"][f["func"] == k].sum()) for k in np.unique(f["func"])}
    assert calls["MPI_Allreduce"] == STEPS * prof.nranks
    assert "steps 20 sum 2" in out
    # bounded: one record per (rank, thread, address) kept, 32 bytes each
    assert len(s) <= prof.nranks * (int(prof.meta["samples"]["max_records"]) + 1)


def test_run_option():
    from mpiscope.errors import UserError
    from mpiscope.run.launch import expand_bare_sample, sample_hz
    # a bare --sample among run's own options is 100 Hz; a number after it is its rate
    for argv, want in (
            (["run", "--sample", "--", "mpirun"], ["run", "--sample=100", "--", "mpirun"]),
            (["run", "--sample", "mpirun", "-n", "2"], ["run", "--sample=100", "mpirun", "-n", "2"]),
            (["run", "--dir", "d", "--sample"], ["run", "--dir", "d", "--sample=100"]),
            (["run", "--sample", "250", "--", "x"], ["run", "--sample", "250", "--", "x"]),
            (["run", "--sample=50", "--", "x"], ["run", "--sample=50", "--", "x"]),
            (["run", "--", "mpirun", "--sample"], ["run", "--", "mpirun", "--sample"]),   # the launcher's
            (["run", "mpirun", "--sample"], ["run", "mpirun", "--sample"]),
            (["report", "--sample"], ["report", "--sample"])):
        assert expand_bare_sample(argv) == want, argv
    assert sample_hz(None) is None and sample_hz("250") == 250
    for bad in ("0", "20000", "-5", "2.5", "abc", "--"):
        with pytest.raises(UserError):
            sample_hz(bad)
    # `--sample=abc`: one line, exit 2, nothing started (the command would print "ran")
    proc = subprocess.run(mpitest.mpiscope_cmd("run", "--sample=abc", "--", "echo", "ran"),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "ran" not in proc.stdout, proc
    assert proc.stderr.count("\n") == 1 and "'abc'" in proc.stderr, proc.stderr


def test_bare_sample_option_samples_at_100_hz(tmp_path):
    """`mpiscope run --sample -- LAUNCH`: the profile says 100 Hz (the default rate)."""
    impl = mpitest.impls()[0]
    exe = compile_program(impl, "c", [PROGRAMS / "cost.c"], tmp_path / "cost", "-O1")
    proc = subprocess.run(mpitest.mpiscope_cmd("run", "--sample", "--dir", str(tmp_path / "p"),
                                               "--mpi", impl, "--", *mpitest.launcher(impl, 1),
                                               str(exe), "1000000", "5", "1", "1"),
                          capture_output=True, text=True, timeout=300, env=mpitest.mpi_env())
    assert proc.returncode == 0, proc.stderr[-2000:]
    from mpiscope import read
    (path,) = (tmp_path / "p").glob("*.mpiscope")
    assert read(path).sample_hz == 100


def test_report_views(cost, tmp_path):
    prof, out, rep = cost
    from mpiscope.report.tables import samples_lines, samples_table
    from mpiscope.textout import json_safe
    doc = json.loads(json.dumps(json_safe(rep)))
    assert doc["samples"]["functions"][0]["function"] == "heavy_kernel"
    assert samples_table(rep["samples"]).row_count >= 2
    assert any("standard error" in line for line in samples_lines(rep["samples"]))
    import pandas as pd
    from mpiscope.export import csv_files
    written = csv_files.write(prof, tmp_path / "x.csv")
    assert tmp_path / "x.samples.csv" in written
    df = pd.read_csv(tmp_path / "x.samples.csv")
    heavy = df[df["function"] == "heavy_kernel"].set_index("rank")["samples"]
    assert heavy[1] > heavy[0] and (df["file"][df["function"] == "heavy_kernel"] == Path(
        rep["samples"]["functions"][0]["file"]).as_posix()).all()
    assert df[~df["in_mpi"]]["samples"].sum() == rep["samples"]["compute_samples"]
    assert df["samples"].sum() == rep["samples"]["samples"]


@pytest.fixture(scope="module")
def blocked(mpi_impl, tmp_path_factory):
    impl = mpi_impl
    tmp = tmp_path_factory.mktemp(f"blocked-{impl}")
    exe = compile_program(impl, "c", [PROGRAMS / "blocked.c"], tmp / "blocked", "-O1", "-pthread")
    runs = {}
    for hz in ("0", "1000"):
        d = tmp / f"hz{hz}"
        d.mkdir()
        runs[hz] = _run_rc(impl, [str(exe), "20000000"], d, {"MPISCOPE_SAMPLE": hz})
    return runs


def _run_rc(impl, argv, tmp, env):
    """Like run_profile, but the program's non-zero exit code is expected: (profile, stdout, rc)."""
    from mpiscope import native, read
    env = {"LD_PRELOAD": str(native.runtime_library(impl)), "MPISCOPE_DIR": str(tmp),
           "MPISCOPE_QUIET": "1", **env}
    if impl == "openmpi":
        cmd = ["mpirun.openmpi", "--oversubscribe", "--bind-to", "none",
               *[a for k in env for a in ("-x", k)], "-n", "2", *argv]
    else:
        cmd = ["mpirun.mpich", *[a for k, v in env.items() for a in ("-env", k, v)], "-n", "2", *argv]
    proc = mpitest.run(cmd, cwd=tmp, env=env, timeout=240, check=False)
    [path] = list(tmp.glob("*.mpiscope"))
    return read(path), proc.stdout, proc.returncode


def test_blocking_calls_unchanged(blocked):
    (p0, out0, rc0), (p1, out1, rc1) = blocked["0"], blocked["1000"]
    lines = sorted(line for line in out1.splitlines() if line.startswith("rank "))
    assert lines == sorted(line for line in out0.splitlines() if line.startswith("rank "))
    assert len(lines) == 4 and all("read 6 errno 0 sleep 0 errno 0 poll 0 errno 0" in x
                                   for x in lines), lines
    assert rc1 == rc0 != 0
    assert p1.sample_hz == 1000 and len(p1.samples) and p0.sample_hz is None
    assert not len(p0.samples)
    # the MPI counts of the sampled run equal the unsampled run's
    key = ["rank", "func", "region"]
    a = np.sort(p0.funcs[key + ["calls"]], order=key)
    b = np.sort(p1.funcs[key + ["calls"]], order=key)
    assert (a == b).all()


@pytest.fixture(scope="module", params=["mpi", "nompi"])
def omp(request, mpi_impl, tmp_path_factory):
    """omp.c with both threads calling MPI, or only the master ("nompi": the OpenMP worker
    has no tables; it is sampled through the runtime's pthread_create)."""
    impl = mpi_impl
    tmp = tmp_path_factory.mktemp(f"omp-{impl}-{request.param}")
    exe = compile_program(impl, "c", [PROGRAMS / "omp.c"], tmp / "omp", "-O1", "-fopenmp")
    prof, out = run_profile(impl, [str(exe), "150000000", request.param], tmp, n=1,
                            env={"MPISCOPE_SAMPLE": str(HZ), "OMP_NUM_THREADS": "2",
                                 "OMP_WAIT_POLICY": "passive"})
    return prof, out, build_report(prof, symbolizer=Symbolizer(use_cache=False))


def test_openmp_threads_sampled(omp):
    prof, out, rep = omp
    assert "provided 1" in out
    threads = rep["samples"]["threads"]
    # exactly the program's two threads: the MPI's own (progress, PMIx, started inside
    # MPI_Init) are not sampled
    assert len(threads) == 2, threads
    by = {t["thread"]: {f["function"]: f["seconds"] for f in t["functions"]} for t in threads}
    heavy = [t for t, fs in by.items() if "heavy_kernel" in fs]
    light = [t for t, fs in by.items() if "light_kernel" in fs]
    assert len(heavy) == 1 and len(light) == 1 and heavy != light, by
    h, l = by[heavy[0]]["heavy_kernel"] * HZ, by[light[0]]["light_kernel"] * HZ
    p = h / (h + l)
    assert abs(p - 0.75) < SIGMAS * np.sqrt(0.75 * 0.25 / (h + l)) + 0.03, (h, l)


def test_thread_imbalance_is_a_finding(omp):
    """The thread doing 3x the other's work is diagnose's thread-imbalance, naming
    heavy_kernel, priced from the report's thread rows (work: seconds outside the OpenMP
    runtime): the busiest thread's work - the average, "up to"."""
    from mpiscope.diagnose import diagnose
    prof, out, rep = omp
    found = {f["rule"]: f for f in diagnose(prof, rep)["findings"]}
    f = found["thread-imbalance"]
    work = [t["seconds"] - t["openmp_runtime_seconds"] for t in rep["samples"]["threads"]]
    assert f["cost_s"] == pytest.approx(max(work) - sum(work) / len(work))
    assert "heavy_kernel" in f["title"] and f["ranks"]["list"] == [0] and f["bound"] == "upper"


def test_short_threads_are_sampled(tmp_path):
    """1000 threads one after another, each about 0.8 ms of CPU in short_work: less than one
    period at 1000 Hz. A timer whose first expiry came after a whole period never fired in
    such a thread: short_work had 0 samples in 3 of 3 runs (of ~900 expected). The first
    expiry now falls at a random point of the period: 54-91 samples. The kernel checks
    CPU-time timers at its tick, so a thread shorter than a tick is sampled only when a
    tick lands in it (docs/sampling.md, "Limits")."""
    hz = 1000
    exe = compile_program("openmpi", "c", [PROGRAMS / "short_threads.c"], tmp_path / "short",
                          "-O1", "-pthread")
    prof, out = run_profile("openmpi", [str(exe), "1000", "250000"], tmp_path, n=1,
                            env={"MPISCOPE_SAMPLE": str(hz)})
    assert "short_threads threads 1000" in out
    rep = build_report(prof, symbolizer=Symbolizer(use_cache=False))
    got = {f: s * hz for f, s in _rank_samples(rep, 0).items()}
    expected = float(prof.env["cpu_time"][0]) * hz
    assert got.get("short_work", 0) >= 0.03 * expected, (got, expected)


@pytest.mark.alone
def test_even_threads_are_no_thread_imbalance(mpi_impl, tmp_path):
    """Both threads run light_kernel: silent in at least one of 3 runs. RATIONALE: under CI's
    load (run-queue wait 0.68 s in a 0.53 s run) the two threads' sampled CPU seconds for the
    same loop were 0.112 and 0.052 s once; the guest's CPU time there is not the work
    (tests/explainruns.py first_run_where says why a few runs)."""
    from mpiscope.diagnose import diagnose
    exe = compile_program(mpi_impl, "c", [PROGRAMS / "omp.c"], tmp_path / "omp", "-O1", "-fopenmp")
    seen = []
    for attempt in range(3):
        out_dir = tmp_path / str(attempt)
        out_dir.mkdir()
        prof, out = run_profile(mpi_impl, [str(exe), "150000000", "nompi", "even"], out_dir, n=1,
                                env={"MPISCOPE_SAMPLE": str(HZ), "OMP_NUM_THREADS": "2",
                                     "OMP_WAIT_POLICY": "passive"})
        rep = build_report(prof, symbolizer=Symbolizer(use_cache=False))
        assert len(rep["samples"]["threads"]) == 2      # both threads sampled, with light_kernel
        found = {f["rule"] for f in diagnose(prof, rep)["findings"]}
        if "thread-imbalance" not in found:
            return
        seen.append([t["seconds"] for t in rep["samples"]["threads"]])
    raise AssertionError(f"thread-imbalance in 3 runs of even threads: {seen}")


def test_html_page_shows_sampled_functions(cost, tmp_path):
    """`mpiscope html`: the sampled functions' table, the MPI share and each rank's
    estimated CPU seconds stacked by function, the same numbers as the report dict."""
    prof, out, rep = cost
    from mpiscope.html.profile_page import profile_page
    html = profile_page(prof, rep, None)
    assert 'id="samples"' in html and "Sampled compute" in html
    sm = rep["samples"]
    section = html[html.index('id="samples"'):]
    section = section[:section.index("</section>")] if "</section>" in section else section
    for r in sm["functions"]:
        assert f">{r['function']}<" in section, r["function"]
    assert "Samples in MPI" in section and "standard error" in section
    # the stacked chart: one trace per shown function (+ the rest), each rank's seconds
    dec, figs = json.JSONDecoder(), []
    for m in re.finditer(r'Plotly\.newPlot\("\w+",', section):
        figs.append({"data": dec.raw_decode(section, m.end())[0]})
    traces = {t["name"]: t["y"] for t in figs[0]["data"] if t.get("type") == "bar"}  # rank order
    assert len(figs) == 2  # and sorted by the top function
    heavy = sm["per_rank"]["functions"].index("heavy_kernel")
    np.testing.assert_allclose(traces["heavy_kernel"], sm["per_rank"]["seconds"][heavy],
                               atol=1e-6)
    # a run that was not sampled has no such section
    plain = rep | {"samples": {**sm, "hz": None, "recorded": False}}
    assert 'id="samples"' not in profile_page(prof, plain, None)


def test_compare_per_function(cost, mpi_impl, tmp_path):
    """`mpiscope compare` of the 3x slow rank (A) against balanced work (B): heavy_kernel's
    estimated seconds per rank fall by about half ((1 + 3) / 2 -> 1), light_kernel's stay,
    and heavy_kernel's imbalance falls."""
    prof_a, _, rep_a = cost
    exe = Path(prof_a.meta["argv"][0])
    prof_b, _ = run_profile(mpi_impl, [str(exe), str(N), str(STEPS), "1", "1"], tmp_path,
                            env={"MPISCOPE_SAMPLE": str(HZ)})
    rep_b = build_report(prof_b, symbolizer=Symbolizer(use_cache=False))
    from mpiscope.compare import compare
    rows = {r["function"]: r for r in compare(prof_a, rep_a, prof_b, rep_b)["samples"]}
    heavy, light = rows["heavy_kernel"], rows["light_kernel"]
    assert heavy["in"] == "both" and heavy["where"] == "cost.c"
    assert -65 < heavy["seconds"]["change_pct"] < -35, heavy
    # light_kernel has few samples (a quarter of rank 0's): its change is within the
    # sampling error of the two counts, SIGMAS wide
    na, nb = (next(r["samples"] for r in rep["samples"]["functions"]
                   if r["function"] == "light_kernel") for rep in (rep_a, rep_b))
    allowed = 100 * SIGMAS * np.sqrt(1 / na + 1 / nb) + 5
    assert abs(light["seconds"]["change_pct"]) < allowed, (light, na, nb)
    assert heavy["imbalance_pct"]["b"] < heavy["imbalance_pct"]["a"] / 2, heavy
    assert heavy["max_pe"]["a"] == 1
    # the terminal table, from the real command
    proc = subprocess.run(mpitest.mpiscope_cmd("compare", prof_a.path, prof_b.path),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "Compute by function (sampled" in proc.stdout and "heavy_kernel" in proc.stdout


def test_fortran_module_procedures(mpi_impl, tmp_path):
    """A Fortran program (programs/cost_f.f90, cost.c's twin as module procedures): the
    samples land in its subroutines, named as the debugger names them (module::procedure)
    with the loop's file:line, in cost.c's proportions: heavy is 3x light per call and rank
    1 calls it 3x, so heavy is 3 (1 + 3) = 12 of the 14 units."""
    exe = compile_program(mpi_impl, "fortran", [PROGRAMS / "cost_f.f90"], tmp_path / "cost_f",
                          "-O1")
    prof, out = run_profile(mpi_impl, [str(exe), str(N), str(STEPS), "1", "3"], tmp_path,
                            env={"MPISCOPE_SAMPLE": str(HZ)})
    assert f"steps {STEPS} sum 2" in out
    rep = build_report(prof, symbolizer=Symbolizer(use_cache=False))
    rows = {r["function"].rsplit("::", 1)[-1]: r for r in rep["samples"]["functions"]}
    heavy, light = rows["heavy_kernel"], rows["light_kernel"]
    for r in (heavy, light):
        assert Path(r["file"]).name == "cost_f.f90" and r["line"], r
    assert heavy["time_per_rank"]["max_pe"] == 1
    # heavy / (heavy + light) over the job: 12 / 14, within its standard error
    n = heavy["samples"] + light["samples"]
    p, want = heavy["samples"] / n, 12 / 14
    assert n >= 100 and abs(p - want) < SIGMAS * np.sqrt(want * (1 - want) / n) + 0.02, (p, n)


def test_bare_sample_rewrite_knows_runs_value_options():
    """expand_bare_sample skips the word after each of run's options that take a value: its
    list must be exactly those of the run command (a new one would otherwise be read as the
    start of the launch command)."""
    import typer

    from mpiscope.cli import app
    from mpiscope.run.launch import _VALUE_OPTIONS
    run = typer.main.get_command(app).commands["run"]
    taking = {o for p in run.params if p.param_type_name == "option" and not p.is_flag
              for o in p.opts}
    assert taking == set(_VALUE_OPTIONS)
