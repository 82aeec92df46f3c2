"""Offline symbolization of call sites (mpiscope.symbols, docs/callsites.md
"Symbolization"): inlined calls resolve to the line written and where it was inlined,
Fortran and C++ names read as written, a stripped binary shows module+offset and never
a wrong name, a binary rebuilt after the run is detected by its build ID (and what was
resolved before still resolves from the cache), an edited Python source is said.
"""

from __future__ import annotations

import shutil
import subprocess

import numpy as np

from mpiscope.report import build_report
from mpiscope.symbols import Module, Symbolizer
from sitebuild import SRC, compile_program, innermost, marker_lines, mpi4py_env, python, \
    run_profile, site_calls

N = 2


def test_inlined_call_resolves_to_the_line_written(tmp_path):
    src = SRC / "sites_inline.c"
    exe = compile_program("openmpi", "c", [src], tmp_path / "sites_inline", "-O2")
    prof, _ = run_profile("openmpi", [str(exe)], tmp_path)
    lines = marker_lines(src)
    calls = {where: r.tolist() for (f, where), r in site_calls(prof).items() if f == "MPI_Allreduce"}
    assert calls == {
        (("sites_inline.c", lines["inlined"], "exchange"),
         ("inlined in", "sites_inline.c", lines["inline_from_1"], "main")): [3] * N,
        (("sites_inline.c", lines["inlined"], "exchange"),
         ("inlined in", "sites_inline.c", lines["inline_from_2"], "main")): [5] * N}
    rep = build_report(prof, callsites=None, symbolizer=Symbolizer(use_cache=False))
    rows = [r for r in rep["callsites"]["rows"] if r["function"] == "MPI_Allreduce"]
    assert {(r["location"], r["parent"]) for r in rows} == \
        {(f"sites_inline.c:{lines['inlined']}", "exchange")}
    assert sorted((r["calls"], r["frames"][0]["inlined_in"][0]["line"]) for r in rows) == \
        [(3 * N, lines["inline_from_1"]), (5 * N, lines["inline_from_2"])]


def test_stripped_binary_module_offset_never_a_wrong_name(tmp_path):
    exe = compile_program("openmpi", "c", [SRC / "sites.c"], tmp_path / "sites_stripped", "-O2")
    subprocess.run(["strip", "--strip-all", str(exe)], check=True)
    prof, _ = run_profile("openmpi", [str(exe)], tmp_path)
    rep = build_report(prof, callsites=None, symbolizer=Symbolizer(use_cache=False))
    cs = rep["callsites"]
    allreduce = sorted(r["calls"] for r in cs["rows"] if r["function"] == "MPI_Allreduce")
    assert allreduce == [3 * 2, 5 * 2, (2 + 4) * 2]     # a 3, b 5, helper 2+4 per rank x 2 ranks
    for r in cs["rows"]:
        assert r["location"].startswith("sites_stripped+0x") and r["parent"] is None, r
        assert r["file"] is None and r["line"] is None
    [mod] = cs["modules"]
    # no symbol table either: the note says module+offset, not "functions only"
    assert mod["status"] == "no-debug" and "no debug information" in mod["note"]
    assert "no symbol table" in mod["note"] and "sites_stripped+offset" in mod["note"]
    assert "functions only" not in mod["note"]
    # stripped of DWARF only (-g build): functions, no file:line
    exe = compile_program("openmpi", "c", [SRC / "sites.c"], tmp_path / "sites_nodebug", "-O2")
    subprocess.run(["strip", "--strip-debug", str(exe)], check=True)
    (tmp_path / "nodebug").mkdir()
    prof, _ = run_profile("openmpi", [str(exe)], tmp_path / "nodebug")
    cs = build_report(prof, callsites=None, symbolizer=Symbolizer(use_cache=False))["callsites"]
    assert all(r["file"] is None and r["parent"] for r in cs["rows"]), cs["rows"]
    [mod] = cs["modules"]
    assert mod["status"] == "no-debug" and "functions only, no file:line" in mod["note"]


def test_rebuilt_binary_is_detected(tmp_path, monkeypatch):
    """Rebuilt at the same path after the run: its build ID differs, the report says so and
    shows module+offset; a cache of the run's build (an earlier report) still resolves."""
    monkeypatch.setenv("MPISCOPE_SYMBOL_CACHE", str(tmp_path / "cache"))
    src = SRC / "sites_inline.c"
    exe = tmp_path / "sites_inline"
    compile_program("openmpi", "c", [src], exe, "-O2")
    prof, _ = run_profile("openmpi", [str(exe)], tmp_path)
    (tmp_path / "first").mkdir()
    shutil.copy(exe, tmp_path / "first" / "sites_inline")
    compile_program("openmpi", "c", [src], exe, "-O2", "-DVARIANT")
    rep = build_report(prof, callsites=None, symbolizer=Symbolizer(use_cache=False))
    cs = rep["callsites"]
    assert [m["status"] for m in cs["modules"]] == ["rebuilt"]
    assert "rebuilt after the run" in cs["notes"][0] and "build ID differs" in cs["notes"][0]
    assert all(r["location"].startswith("sites_inline+0x") for r in cs["rows"])
    # the run's build, found in a directory of MPISCOPE_SYMBOL_PATH, resolves (and fills the cache)
    lines = marker_lines(src)
    moved = Symbolizer(search_path=(str(tmp_path / "first"),))
    rep = build_report(prof, callsites=None, symbolizer=moved)
    assert {r["location"] for r in rep["callsites"]["rows"] if r["function"] == "MPI_Allreduce"} == \
        {f"sites_inline.c:{lines['inlined']}"}
    shutil.rmtree(tmp_path / "first")
    rep = build_report(prof, callsites=None, symbolizer=Symbolizer())   # the cache alone
    assert {r["location"] for r in rep["callsites"]["rows"] if r["function"] == "MPI_Allreduce"} == \
        {f"sites_inline.c:{lines['inlined']}"}
    # and the note says where the lines came from, not "shown as module+offset"
    [mod] = rep["callsites"]["modules"]
    assert mod["status"] == "rebuilt" and "from the symbol cache" in mod["note"], mod
    assert "+offset" not in mod["note"] or "the other" in mod["note"]


def test_language_names(tmp_path):
    """Fortran module procedures and main programs, C++ members: the names as written."""
    f08 = compile_program("openmpi", "fortran", [SRC / "sites_f08.f90"], tmp_path / "f08", "-O0")
    prof, _ = run_profile("openmpi", [str(f08)], tmp_path)
    parents = {w[0][2] for (f, w) in site_calls(prof) if w and f in ("MPI_Allreduce", "MPI_Barrier")}
    assert parents == {"sites_f08_work::work"}
    parents = {w[0][2] for (f, w) in site_calls(prof) if w and f == "MPI_Comm_rank"}
    assert parents == {"main program"}


def test_python_source_changed_after_the_run(tmp_path):
    script = tmp_path / "sites_copy.py"
    shutil.copy(SRC / "sites_mpi4py.py", script)
    prof, _ = run_profile("openmpi", [python(), str(script)], tmp_path, env=mpi4py_env("openmpi"))
    lines = marker_lines(script)
    counts = innermost(site_calls(prof))
    assert counts[("MPI_Allreduce", script.name, lines["helper"])].tolist() == [6] * N
    rows = build_report(prof, callsites=None, symbolizer=Symbolizer())["callsites"]["rows"]
    helper = [r for r in rows if r["location"] == f"{script.name}:{lines['helper']}"]
    assert {r["parent"] for r in helper} == {"reduce_helper"}
    script.write_text("# edited after the run\n" + script.read_text())
    cs = build_report(prof, callsites=None, symbolizer=Symbolizer())["callsites"]
    assert [m["status"] for m in cs["modules"] if m["path"] == str(script)] == ["modified"]
    assert any("changed after the run" in n for n in cs["notes"])
    # file:line as recorded, no function guessed from the changed file
    helper = [r for r in cs["rows"] if r["location"] == f"{script.name}:{lines['helper']}"]
    assert helper and {r["parent"] for r in helper} == {None}


def test_module_lookups_are_cached_per_build_id(tmp_path, monkeypatch):
    """The cache file is named by the build ID and holds what was resolved."""
    monkeypatch.setenv("MPISCOPE_SYMBOL_CACHE", str(tmp_path))
    exe = compile_program("openmpi", "c", [SRC / "sites_inline.c"], tmp_path / "sites_inline", "-O2")
    from mpiscope.symbols.elf import inspect
    info = inspect(exe)
    m = Module(key=1, kind=1, path=str(exe), build_id=info.build_id)
    sym = Symbolizer()
    out = sym.resolve(m, [0x10, 0x20])
    assert set(out) == {0x10, 0x20}
    assert (tmp_path / f"{info.build_id.hex()}.json").is_file()
    assert np.all([isinstance(v, tuple) for v in out.values()])
