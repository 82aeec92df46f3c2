"""More threads than the runtime has tables of one thread each (issue 27 item 2).

tests/programs/many_threads.c: 600 short-lived threads, four alive at a
time, then 300 threads alive at once, each calling MPI_Comm_rank 2,000
times. Tables of threads that exited serve the next threads, so the first
phase needs no more than five tables; in the second, the threads beyond 256
at once share one table under a lock, and the profile says so (overflow bit
"threads"). Every call is counted exactly either way.
"""

from __future__ import annotations

import json
import re

import numpy as np

import mpitest
from mpiscope import format as fmt
from mpiscope import native, read
from profile_expect import calls_by_rank

SERIAL, CALLS, CONCURRENT = 600, 2000, 300
THREADS_BIT = 1 << 5
NRANKS = 2


def run(impl: str, tmp_path, *args: str):
    proc = mpitest.run(mpitest.mpiscope_cmd("run", "--mpi", impl, "--dir", str(tmp_path), "--",
                                            *mpitest.launcher(impl, NRANKS),
                                            str(native.program(impl, "tests/many_threads")), *args),
                       cwd=tmp_path, timeout=300)
    assert f"many_threads: ok on {NRANKS} ranks" in proc.stdout, proc.stdout
    [path] = re.findall(r"mpiscope: profile: (\S+)", proc.stderr)
    return path, read(path)


def test_every_call_of_every_thread_counted(impl, tmp_path):
    path, prof = run(impl, tmp_path, str(SERIAL), str(CALLS), str(CONCURRENT))
    calls = calls_by_rank(prof)
    want = (SERIAL + CONCURRENT) * CALLS + 1
    assert calls["MPI_Comm_rank"].tolist() == [want] * NRANKS
    assert calls["MPI_Allreduce"].tolist() == [1] * NRANKS
    # the per-communicator table holds the same calls, on world
    world = prof.comms[(prof.comms["comm"] == 1)
                       & (prof.comms["func"] == prof.func_id("MPI_Comm_rank"))]
    assert np.bincount(world["rank"], weights=world["calls"]).astype(int).tolist() == [want] * NRANKS
    assert prof.ranks["threads"].tolist() == [SERIAL + CONCURRENT + 1] * NRANKS
    # more than 256 threads were alive at once: said, per rank and in the report
    assert all(int(o) & THREADS_BIT for o in prof.ranks["overflow"]), prof.ranks["overflow"]
    assert prof.flags & fmt.FLAG_OVERFLOW
    rep = json.loads(mpitest.run(mpitest.mpiscope_cmd("report", "--json", path)).stdout)
    assert any("more than 256 threads" in w for w in rep["warnings"]), rep["warnings"]


def test_short_lived_threads_reuse_tables(impl, tmp_path):
    """Only the first phase: never more than five threads alive, so no table is
    shared and nothing overflows."""
    _, prof = run(impl, tmp_path, str(SERIAL), str(CALLS), "1")
    assert calls_by_rank(prof)["MPI_Comm_rank"].tolist() == [(SERIAL + 1) * CALLS + 1] * NRANKS
    assert prof.ranks["threads"].tolist() == [SERIAL + 2] * NRANKS
    assert not prof.ranks["overflow"].any() and not prof.flags & fmt.FLAG_OVERFLOW
