"""`mpiscope report --json` on profiles of real MPI runs agrees with the raw profile arrays."""

from __future__ import annotations

import html
import json
import re

import numpy as np

import mpitest
from mpiscope import native, read


def _profile(tmp_path, impl, nranks, program, *extra):
    exe = native.program(impl, f"tests/{program}")
    mpitest.run(mpitest.mpiscope_cmd("run", *extra, "--dir", str(tmp_path), "--",
                                     *mpitest.launcher(impl, nranks), str(exe)),
                env={"MPISCOPE_QUIET": "1"}, timeout=180)
    (path,) = tmp_path.glob(f"{program}.*.mpiscope")
    return path


def _report(path, *args):
    return json.loads(mpitest.run(mpitest.mpiscope_cmd("report", "--json", *args, str(path)),
                                  timeout=120).stdout)


def test_report_of_real_run_matches_profile_arrays(tmp_path, impl, nranks):
    path = _profile(tmp_path, impl, nranks, "p2p_blocking", "--sync")
    prof = read(path)
    rep = _report(path)
    assert rep["profile"]["nranks"] == nranks and rep["profile"]["sync"] is True
    for f in rep["functions"]:
        sel = prof.funcs[prof.funcs["func"] == prof.func_id(f["name"])]
        assert f["calls"] == int(sel["calls"].sum())
        assert f["bytes_sent"] == int(sel["bytes_sent"].sum())
        per_rank = np.bincount(sel["rank"], weights=sel["time"], minlength=nranks)
        assert f["time_per_rank"]["max_pe"] == int(np.argmax(per_rank))
    mpi = next(r for r in rep["summary"] if r["metric"] == "mpi")
    assert mpi["max"] == float(prof.ranks["mpi"].max())
    total_msgs, total_bytes = int(prof.peers["msgs"].sum()), int(prof.peers["bytes"].sum())
    assert total_msgs > 0
    assert rep["p2p"]["total_msgs"] == total_msgs and rep["p2p"]["total_bytes"] == total_bytes
    apart = _report(path, "--ppn", "1")["p2p"]
    assert (apart["off_node_msgs"], apart["on_node_msgs"]) == (total_msgs, 0)
    together = _report(path, "--ppn", str(nranks))["p2p"]
    assert (together["on_node_msgs"], together["off_node_bytes"]) == (total_msgs, 0)
    sync = [f for f in rep["functions"] if f["kind"] == "sync"]
    assert sync and all(f["name"].endswith(":sync") for f in sync)
    # The MPI library: its version line in the terminal and on the page alike; MPICH's text
    # goes on with its configure options, which only --json carries.
    lib = prof.meta["mpi_library"]
    line = " ".join(lib.strip().splitlines()[0].split())
    assert rep["profile"]["mpi_library"] == lib and rep["profile"]["mpi_library_line"] == line
    if impl == "mpich":
        assert line.startswith("MPICH Version: ") and len(lib.strip().splitlines()) > 3, lib
    text = mpitest.run(mpitest.mpiscope_cmd("report", str(path)), timeout=120).stdout
    assert f"\nMPI library {line}\n" in text
    page = tmp_path / "p.html"
    mpitest.run(mpitest.mpiscope_cmd("html", str(path), "-o", str(page)), timeout=120)
    shown = re.findall(r"<dt>MPI library</dt><dd>(.*?)</dd>", page.read_text(), re.S)
    assert [html.unescape(s) for s in shown] == [line], shown


def test_summary_run_reports_without_per_rank_rows(tmp_path, impl, nranks):
    path = _profile(tmp_path, impl, nranks, "hello", "--mode", "summary")
    rep = _report(path)
    assert rep["profile"]["mode"] == "summary" and rep["top_pairs"] == []
    barrier = next(f for f in rep["functions"] if f["name"] == "MPI_Barrier")
    assert barrier["calls"] == nranks
    assert 0 <= barrier["time_per_rank"]["max_pe"] < nranks
