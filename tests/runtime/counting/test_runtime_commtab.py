"""Per-communicator tables (docs/runtime.md "Per-communicator tables").

tests/programs/comm_tables.c makes known traffic on world, a named dup, a
split, a cart and an intercommunicator; every count, byte and member list is
checked per communicator, and a table bounded by MPISCOPE_MAX_COMM_TABLES
keeps every call (in an "other" row) and says it overflowed.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict

import mpitest
from mpiscope import native, read
from profile_expect import by_comm, fn


def ranks(impl: str) -> int:
    return min(4, mpitest.NRANKS[impl])


def run(impl: str, tmp_path, env: dict | None = None):
    n = ranks(impl)
    cmd = mpitest.mpiscope_cmd("run", "--mpi", impl, "--dir", str(tmp_path), "--",
                               *mpitest.launcher(impl, n),
                               str(native.program(impl, "tests/comm_tables")))
    proc = mpitest.run(cmd, cwd=tmp_path, env=env, timeout=240)
    assert f"comm_tables: done on {n} ranks" in proc.stdout
    [path] = re.findall(r"mpiscope: profile: (\S+)", proc.stderr)
    return n, path



def test_counts_per_communicator_are_exact(impl, tmp_path):
    n, path = run(impl, tmp_path)
    rows = by_comm(path)
    half = n // 2
    evens, odds = list(range(0, n, 2)), list(range(1, n, 2))
    assert set(rows) == {"world", "halo", "split(color 0) of world", "split(color 1) of world",
                         f"cart {n}x1 of world", "intercomm of split(color 0) of world",
                         "intercomm of split(color 1) of world"}

    world = rows["world"]
    assert world["world_ranks"] == list(range(n)) and world["size"] == n
    assert fn(world, "MPI_Allreduce") == {**fn(world, "MPI_Allreduce"), "calls": n,
                                          "bytes_sent": 4 * n, "bytes_recv": 4 * n}
    for creator in ("MPI_Comm_dup", "MPI_Comm_split", "MPI_Cart_create"):
        assert fn(world, creator)["calls"] == n, creator

    halo = rows["halo"]                     # named by MPI_Comm_set_name
    assert halo["named"] and halo["size"] == n and halo["world_ranks"] == list(range(n))
    assert fn(halo, "MPI_Allreduce")["calls"] == 2 * n
    assert fn(halo, "MPI_Allreduce")["bytes_sent"] == 8 * n
    assert fn(halo, "MPI_Comm_set_name")["calls"] == n

    for color, members in ((0, evens), (1, odds)):
        row = rows[f"split(color {color}) of world"]
        assert row["size"] == half and row["world_ranks"] == members and row["ranks"] == half
        assert fn(row, "MPI_Allreduce")["calls"] == 3 * half
        assert fn(row, "MPI_Allreduce")["bytes_sent"] == 3 * 16 * half
        assert fn(row, "MPI_Barrier")["calls"] == half
        assert fn(row, "MPI_Intercomm_create")["calls"] == half

    cart = rows[f"cart {n}x1 of world"]
    assert cart["size"] == n
    assert fn(cart, "MPI_Barrier")["calls"] == 4 * n
    sr = fn(cart, "MPI_Sendrecv")
    assert (sr["calls"], sr["bytes_sent"], sr["bytes_recv"]) == (n, 12 * n, 12 * n)

    send = rows["intercomm of split(color 0) of world"]
    recv = rows["intercomm of split(color 1) of world"]
    assert send["inter"] and recv["inter"]
    assert send["world_ranks"] == evens and recv["world_ranks"] == odds
    assert fn(send, "MPI_Send") == {**fn(send, "MPI_Send"), "calls": half, "bytes_sent": 20 * half}
    assert fn(recv, "MPI_Recv") == {**fn(recv, "MPI_Recv"), "calls": half, "bytes_recv": 20 * half}

    # every call with a communicator is in exactly one communicator's row
    prof = read(path)
    per_func = defaultdict(int)
    for rec in prof.comms:
        per_func[prof.functions[rec["func"]]] += int(rec["calls"])
    totals = defaultdict(int)
    for rec in prof.funcs:
        totals[prof.functions[rec["func"]]] += int(rec["calls"])
    for name in ("MPI_Allreduce", "MPI_Barrier", "MPI_Send", "MPI_Recv", "MPI_Sendrecv"):
        assert per_func[name] == totals[name], name

    text = mpitest.run(mpitest.mpiscope_cmd("report", "--by-comm", path)).stdout
    assert "MPI per communicator" in text and "split(color 0) of world" in text


def test_table_is_bounded_and_flags_overflow(impl, tmp_path):
    n, path = run(impl, tmp_path, {"MPISCOPE_MAX_COMM_TABLES": "3"})
    rows = by_comm(path)
    # world, self and the first communicator made; the rest share one row
    assert "(other communicators)" in rows and "world" in rows and "halo" in rows
    assert len(rows) == 3
    allreduce = sum(fn(r, "MPI_Allreduce")["calls"] for r in rows.values())
    assert allreduce == (1 + 2 + 3) * n
    rep = json.loads(mpitest.run(mpitest.mpiscope_cmd("report", "--json", path)).stdout)
    assert any("per-communicator" in w for w in rep["warnings"]) and rep["profile"]["overflow"]
