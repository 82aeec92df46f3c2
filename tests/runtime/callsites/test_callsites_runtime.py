"""Call sites recorded by the runtime (docs/runtime.md "Call sites"): programs that call
one MPI function from several lines with known counts, in C, a C shared library loaded
at different addresses on different ranks, C++, Fortran through mpif.h, use mpi and
use mpi_f08, Python (mpi4py), and from two threads; a stripped binary; a deeper stack
(MPISCOPE_CALLSITE_DEPTH); summary mode and snapshots. Each asserts the exact calls of
every site on every rank and its exact file:line (tests/programs/callsites/, the lines
found by their site:NAME markers).
"""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest

import mpitest
from mpiscope import format as fmt
from sitebuild import (SRC, assert_sites_cover_functions, compile_program, innermost,
                       marker_lines, mpi4py_env, python, run_profile, site_calls)

N = 2   # ranks (MPICH busy-polls: 2 on this machine's 2 cores)


def _per_rank(counts: dict, key) -> list[int]:
    assert key in counts, (key, sorted(counts, key=str))
    return counts[key].tolist()


@pytest.fixture(scope="module")
def c_sites(tmp_path_factory):
    """sites.c built with -O2 -g for each MPI (one binary per MPI, shared by the tests)."""
    d = tmp_path_factory.mktemp("c_sites")
    return {impl: compile_program(impl, "c", [SRC / "sites.c"], d / f"sites_{impl}", "-O2")
            for impl in mpitest.impls()}


def test_c_sites_exact(impl, c_sites, tmp_path):
    lines = marker_lines(SRC / "sites.c")
    prof, out = run_profile(impl, [str(c_sites[impl]), "2"], tmp_path)
    assert "sites: 2 ranks" in out
    assert prof.callsite_depth == 1
    counts = innermost(site_calls(prof))
    want = {("MPI_Allreduce", "allreduce_a"): 6, ("MPI_Allreduce", "allreduce_b"): 10,
            ("MPI_Bcast", "bcast"): 14, ("MPI_Allreduce", "helper"): 12,
            ("MPI_Barrier", "barrier"): 1}
    for (func, name), calls in want.items():
        assert _per_rank(counts, (func, "sites.c", lines[name])) == [calls] * N, name
    assert ("MPI_Allreduce", None) not in counts      # nothing lost
    assert_sites_cover_functions(prof)
    # the bytes and the size histogram of a site: 64 doubles per Bcast on each rank
    bcast = prof.func_id("MPI_Bcast")
    recs = prof.callsites[prof.callsites["func"] == bcast]
    tot = recs[recs["bucket"] == fmt.SITE_TOTAL]
    assert tot["bytes_sent"][tot["rank"] == 0].tolist() == [14 * 512]
    assert tot["bytes_recv"][tot["rank"] == 1].tolist() == [14 * 512]
    hist = recs[recs["bucket"] != fmt.SITE_TOTAL]
    assert sorted(zip(hist["rank"].tolist(), hist["bucket"].tolist(), hist["calls"].tolist())) == \
        [(0, fmt.size_bucket(512), 14), (1, fmt.size_bucket(512), 14)]
    # every site is one (module, offset) merged over the ranks: the program's module
    [mod] = [m for m in prof.modules if bytes(m["path"]).rstrip(b"\0").endswith(b"/sites_" + impl.encode())]
    assert int(mod["build_id_len"]) == 20 and int(mod["kind"]) == fmt.MODULE_ELF


def test_c_sites_depth(impl, c_sites, tmp_path):
    """MPISCOPE_CALLSITE_DEPTH=4: the helper's two callers are two sites, as mpiP's -k."""
    lines = marker_lines(SRC / "sites.c")
    prof, _ = run_profile(impl, [str(c_sites[impl]), "2"], tmp_path,
                          env={"MPISCOPE_CALLSITE_DEPTH": "4"})
    assert prof.callsite_depth == 4
    calls = site_calls(prof)
    helper = {where[1][:2]: per_rank.tolist() for (func, where), per_rank in calls.items()
              if func == "MPI_Allreduce" and where and where[0][:2] == ("sites.c", lines["helper"])}
    assert helper == {("sites.c", lines["helper_from_1"]): [4] * N,
                      ("sites.c", lines["helper_from_2"]): [8] * N}
    assert all(len(where) >= 3 for _, where in calls if where)   # main, libc's start...
    counts = innermost(calls)
    assert _per_rank(counts, ("MPI_Allreduce", "sites.c", lines["allreduce_a"])) == [6] * N
    assert_sites_cover_functions(prof)


def test_stripped_binary_same_sites(impl, c_sites, tmp_path):
    """A stripped copy of the binary records the same (module, offset) sites with the same
    counts (it has no symbols to resolve them with: docs/report.md shows module+offset)."""
    stripped = tmp_path / "sites_stripped"
    shutil.copy(c_sites[impl], stripped)
    subprocess.run(["strip", "--strip-all", str(stripped)], check=True)
    (tmp_path / "full").mkdir()
    full, _ = run_profile(impl, [str(c_sites[impl])], tmp_path / "full")
    bare, _ = run_profile(impl, [str(stripped)], tmp_path)

    def by_offset(prof):
        tot = prof.callsites[prof.callsites["bucket"] == fmt.SITE_TOTAL]
        defs = prof.callsite_defs
        out = {}
        for r in tot:
            f, frames = defs[int(r["site"])]
            key = (prof.functions[f], tuple(o for _, o in frames), int(r["rank"]))
            out[key] = out.get(key, 0) + int(r["calls"])
        return out
    assert by_offset(bare) == by_offset(full)
    [mod] = [m for m in bare.modules if bytes(m["path"]).rstrip(b"\0").endswith(b"/sites_stripped")]
    assert int(mod["build_id_len"]) == 20      # strip keeps the build ID note


@pytest.mark.parametrize("binding", ["mpifh", "usempi", "f08"])
def test_fortran_sites(impl, binding, tmp_path):
    """Through every Fortran binding, the site is the user's line, not the binding's
    code (mpiscope's own Fortran wrappers on Open MPI, MPICH's libmpifort)."""
    main = SRC / f"sites_{binding}.f90"
    # mpif.h and use mpi share their calls (sites_body.inc): the sites are its lines
    src = main if binding == "f08" else SRC / "sites_body.inc"
    exe = compile_program(impl, "fortran", [main], tmp_path / f"sites_{binding}", "-O0",
                          f"-I{SRC}")
    prof, out = run_profile(impl, [str(exe)], tmp_path)
    assert f"sites_{binding}: y =" in out
    lines = marker_lines(src)
    calls = site_calls(prof)
    counts = innermost(calls)
    assert _per_rank(counts, ("MPI_Allreduce", src.name, lines["allreduce_a"])) == [3] * N
    assert _per_rank(counts, ("MPI_Allreduce", src.name, lines["allreduce_b"])) == [5] * N
    assert _per_rank(counts, ("MPI_Barrier", src.name, lines["barrier"])) == [1] * N
    # every site is in the program, none in an MPI library or in mpiscope
    paths = {bytes(m["path"]).rstrip(b"\0").decode() for m in prof.modules}
    assert paths == {str(exe)}, paths
    assert_sites_cover_functions(prof)


def test_shared_library_sites_two_load_addresses(impl, tmp_path):
    """Sites in a library that each rank loads at a different address are one site each,
    named by the library and the line."""
    lib = compile_program(impl, "c", [SRC / "sites_lib.c"], tmp_path / "libsites_lib.so",
                          "-O2", "-shared", "-fPIC")
    exe = compile_program(impl, "c", [SRC / "sites_libmain.c"], tmp_path / "sites_libmain", "-O2",
                          "-ldl")
    prof, out = run_profile(impl, [str(exe), str(lib), "2"], tmp_path)
    bases = dict(re.findall(r"base (\d+) (0x[0-9a-f]+)", out))
    assert len(bases) == N and len(set(bases.values())) == N, out
    libl, mainl = marker_lines(SRC / "sites_lib.c"), marker_lines(SRC / "sites_libmain.c")
    counts = innermost(site_calls(prof))
    assert _per_rank(counts, ("MPI_Allreduce", "sites_lib.c", libl["lib_a"])) == [4] * N
    assert _per_rank(counts, ("MPI_Allreduce", "sites_lib.c", libl["lib_b"])) == [6] * N
    assert _per_rank(counts, ("MPI_Barrier", "sites_libmain.c", mainl["main_barrier"])) == [1] * N
    allreduce = prof.callsites[(prof.callsites["func"] == prof.func_id("MPI_Allreduce")) &
                               (prof.callsites["bucket"] == fmt.SITE_TOTAL)]
    assert len(np.unique(allreduce["site"])) == 2          # merged over the two ranks
    [mod] = [m for m in prof.modules if bytes(m["path"]).rstrip(b"\0") == str(lib).encode()]
    frames = {m for site, (f, fr) in prof.callsite_defs.items() for m, _ in fr}
    assert int(mod["key"]) in frames


def test_cxx_sites(impl, tmp_path):
    src = SRC / "sites_cxx.cpp"
    exe = compile_program(impl, "cxx", [src], tmp_path / "sites_cxx", "-O1")
    prof, out = run_profile(impl, [str(exe)], tmp_path)
    assert "sites_cxx: y = 2" in out
    lines = marker_lines(src)
    calls = site_calls(prof)
    counts = innermost(calls)
    assert _per_rank(counts, ("MPI_Allreduce", src.name, lines["member"])) == [3] * N
    assert _per_rank(counts, ("MPI_Barrier", src.name, lines["lambda"])) == [5] * N
    [member] = [where[0][2] for (f, where), _ in calls.items()
                if where and where[0][:2] == (src.name, lines["member"])]
    assert member.startswith("sites::Reducer<double>::run("), member


def test_thread_sites(impl, tmp_path):
    """Two threads calling from two lines: each line its site, summed over the threads' tables."""
    src = SRC / "sites_threads.c"
    exe = compile_program(impl, "c", [src], tmp_path / "sites_threads", "-O2", "-pthread")
    prof, _ = run_profile(impl, [str(exe)], tmp_path)
    assert prof.ranks["threads"].tolist() == [3] * N
    lines = marker_lines(src)
    counts = innermost(site_calls(prof))
    assert _per_rank(counts, ("MPI_Allreduce", src.name, lines["thread_a"])) == [3] * N
    assert _per_rank(counts, ("MPI_Allreduce", src.name, lines["thread_b"])) == [5] * N
    assert _per_rank(counts, ("MPI_Barrier", src.name, lines["main_barrier"])) == [1] * N
    assert_sites_cover_functions(prof)


def test_python_sites(impl, tmp_path):
    """mpi4py: the site is the .py line that called mpi4py (MPI.*.so is never a site);
    with depth 2 the helper's two callers are told apart."""
    script = SRC / "sites_mpi4py.py"
    lines = marker_lines(script)
    prof, out = run_profile(impl, [python(), str(script), "2"], tmp_path, env=mpi4py_env(impl))
    assert "sites_mpi4py: 2 ranks" in out
    # mpi4py on an MPI-4 library (MPICH) calls the large-count MPI_X_c: the same function
    counts = {(f.removesuffix("_c"), *rest): v for (f, *rest), v in innermost(site_calls(prof)).items()}
    for func, name, calls in (("MPI_Allreduce", "allreduce_a", 6), ("MPI_Allreduce", "allreduce_b", 10),
                              ("MPI_Bcast", "bcast", 14), ("MPI_Allreduce", "helper", 12),
                              ("MPI_Barrier", "barrier", 1)):
        assert _per_rank(counts, (func, script.name, lines[name])) == [calls] * N, name
    py = [m for m in prof.modules if int(m["kind"]) == fmt.MODULE_PYTHON]
    assert str(script) in {bytes(m["path"]).rstrip(b"\0").decode() for m in py}
    assert not any(b"/mpi4py/" in bytes(m["path"]) for m in prof.modules)   # MPI.*.so is no site
    assert_sites_cover_functions(prof)
    deep, _ = run_profile(impl, [python(), str(script), "1"], tmp_path,
                          env={**mpi4py_env(impl), "MPISCOPE_CALLSITE_DEPTH": "2"})
    helper = {where[1][:2]: r.tolist() for (f, where), r in site_calls(deep).items()
              if where and where[0][:2] == (script.name, lines["helper"])}
    assert helper == {(script.name, lines["helper_from_1"]): [2] * N,
                      (script.name, lines["helper_from_2"]): [4] * N}


def test_sites_off(tmp_path, c_sites):
    prof, _ = run_profile("openmpi", [str(c_sites["openmpi"])], tmp_path,
                          env={"MPISCOPE_CALLSITES": "0"})
    assert len(prof.callsites) == 0 and len(prof.modules) == 0 and "callsites" not in prof.meta
    assert prof.meta["settings"]["MPISCOPE_CALLSITES"] == 0


def test_summary_mode_sites(tmp_path, c_sites):
    """Summary mode reduces the sites in the job: the same sums as full mode, min/max
    over ranks with their ranks, and a file whose size does not depend on the ranks."""
    from mpiscope.testing import summarize_callsites
    n = 4
    (tmp_path / "full").mkdir()
    full, _ = run_profile("openmpi", [str(c_sites["openmpi"]), "2"], tmp_path / "full", n=n)
    summ, _ = run_profile("openmpi", [str(c_sites["openmpi"]), "2"], tmp_path, n=n,
                          env={"MPISCOPE_MODE": "summary"})
    assert summ.is_summary and summ.callsite_defs.keys() == full.callsite_defs.keys()
    want = summarize_callsites(full.callsites, n)
    got = summ.callsites

    def key(a):
        return {(int(r["func"]), int(r["metric"]), int(r["region"])): r for r in a}
    w, g = key(want), key(got)
    assert w.keys() == g.keys()
    for k, r in w.items():
        if k[1] in (fmt.SITE_METRICS.index("calls"), fmt.SITE_METRICS.index("bytes_sent"),
                    fmt.SITE_METRICS.index("bytes_recv")) or k[1] >= fmt.SITE_BUCKET_CALLS and \
                k[1] < fmt.SITE_BUCKET_TIME:
            assert (g[k]["sum"], g[k]["min"], g[k]["max"], g[k]["nonzero"]) == \
                (r["sum"], r["min"], r["max"], r["nonzero"]), k
    assert {bytes(m["path"]) for m in summ.modules} == {bytes(m["path"]) for m in full.modules}


def test_snapshot_sites(tmp_path, c_sites):
    """A snapshot carries the sites so far: the spool reads with the same sites and calls."""
    from mpiscope import read
    env = {"MPISCOPE_SPOOL": "rank"}
    prof, _ = run_profile("openmpi", [str(c_sites["openmpi"]), "1", "snap"], tmp_path, env=env)
    [spool] = tmp_path.glob("*.spool")
    snap = read(spool)
    assert snap.is_partial and snap.callsite_defs == prof.callsite_defs
    assert innermost(site_calls(snap)).keys() == innermost(site_calls(prof)).keys()
    for key, per_rank in innermost(site_calls(snap)).items():
        assert per_rank.tolist() == innermost(site_calls(prof))[key].tolist(), key
