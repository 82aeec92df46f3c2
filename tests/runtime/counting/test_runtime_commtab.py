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
    # the intercommunicator is one communicator (one row), named as its lowest member sees it
    assert set(rows) == {"world", "halo", "split(color 0) of world", "split(color 1) of world",
                         f"cart {n}x1 of world", "intercomm of split(color 0) of world"}

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

    inter = rows["intercomm of split(color 0) of world"]
    assert inter["inter"] and inter["ranks"] == n
    assert inter["world_ranks"] == evens and inter["remote_world_ranks"] == odds
    assert (inter["size"], inter["remote_size"]) == (half, half)
    assert fn(inter, "MPI_Send") == {**fn(inter, "MPI_Send"), "calls": half, "bytes_sent": 20 * half}
    assert fn(inter, "MPI_Recv") == {**fn(inter, "MPI_Recv"), "calls": half, "bytes_recv": 20 * half}

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


def test_one_row_per_communicator_object(impl, tmp_path):
    """Issue 27 items 8-11 (tests/programs/comm_cases.c): disjoint communicators made by one
    call get a row each, one communicator gets one row whatever made it, persistent and
    partitioned traffic reaches its communicator's row, a cancelled receive takes its bytes
    back there too (twenty of them completed by one MPI_Waitall as well; of seventy, the
    ones beyond what the runtime follows are flagged and nothing stays pending), an idup'ed
    communicator lists its members, MPI_PROC_NULL neighbours move nothing, and a name with a
    newline and rich markup prints literally."""
    n = ranks(impl)
    h = n // 2
    proc = mpitest.run(mpitest.mpiscope_cmd("run", "--mpi", impl, "--dir", str(tmp_path), "--",
                                            *mpitest.launcher(impl, n),
                                            str(native.program(impl, "tests/comm_cases"))),
                       cwd=tmp_path, timeout=240)
    assert f"comm_cases: ok on {n} ranks" in proc.stdout, proc.stdout + proc.stderr[-2000:]
    [path] = re.findall(r"mpiscope: profile: (\S+)", proc.stderr)
    rep = json.loads(mpitest.run(mpitest.mpiscope_cmd("report", "--json", path)).stdout)
    rows = defaultdict(list)
    for r in rep["communicators"]:
        rows[r["name"]].append(r)
    assert len({r["id"] for r in rep["communicators"]}) == len(rep["communicators"])
    lo, hi = list(range(h)), list(range(h, n))

    def calls(name, func):
        return {tuple(r["world_ranks"]): fn(r, func)["calls"] for r in rows[name]}

    # A, B: one call, two disjoint communicators, two rows
    assert calls("create of world", "MPI_Allreduce") == {tuple(lo): h, tuple(hi): 3 * h}
    assert calls(f"cart_sub of cart 2x{h} of world", "MPI_Barrier") == {tuple(lo): 2 * h,
                                                                       tuple(hi): 5 * h}
    # C: one intercommunicator per pair of MPI_COMM_SELFs, both sides in one row
    pairs = rows["intercomm of self"]
    assert sorted((r["world_ranks"], r["remote_world_ranks"]) for r in pairs) == \
        [([2 * k], [2 * k + 1]) for k in range(h)]
    for r in pairs:
        assert r["inter"] and r["ranks"] == 2
        assert (fn(r, "MPI_Send")["calls"], fn(r, "MPI_Send")["bytes_sent"]) == (1, 4)
        assert (fn(r, "MPI_Recv")["calls"], fn(r, "MPI_Recv")["bytes_recv"]) == (1, 4)
    # D: create_group by two ranks leaves every later child of world in step
    [group] = rows["create_group(tag 5) of world"]
    assert group["world_ranks"] == [0, 1] and fn(group, "MPI_Barrier")["calls"] == 2
    [after] = rows["dup of world"]
    assert after["world_ranks"] == list(range(n)) and fn(after, "MPI_Allreduce")["calls"] == n
    # E: the merge of one intercommunicator is one communicator
    [merged] = rows["merge of intercomm of split(color 0) of world"]
    assert merged["size"] == n and fn(merged, "MPI_Allreduce")["calls"] == n
    # F: persistent point-to-point, persistent collective and partitioned starts
    [persist] = rows["persist"]
    mpi4 = impl == "mpich"
    startall = fn(persist, "MPI_Startall")
    assert startall["calls"] == (3 + mpi4) * n
    assert startall["bytes_sent"] == startall["bytes_recv"] == (3 * 32 + 32 * mpi4) * n
    if mpi4:
        start = fn(persist, "MPI_Start")
        assert (start["calls"], start["bytes_sent"], start["bytes_recv"]) == (2 * n, 8 * n, 8 * n)
    prof = read(path)
    per_comm, per_func = defaultdict(int), defaultdict(int)
    for rec in prof.comms:
        per_comm[prof.functions[rec["func"]]] += int(rec["bytes_sent"]) + int(rec["bytes_recv"])
    for rec in prof.funcs:
        per_func[prof.functions[rec["func"]]] += int(rec["bytes_sent"]) + int(rec["bytes_recv"])
    for name in ("MPI_Start", "MPI_Startall", "MPI_Irecv", "MPI_Neighbor_alltoall"):
        assert per_comm[name] == per_func[name], name
    # G: 21 cancelled receives per rank moved nothing, in the row as in the function table
    [cancel] = rows["cancel"]
    assert (fn(cancel, "MPI_Irecv")["calls"], fn(cancel, "MPI_Irecv")["bytes_recv"]) == (21 * n, 0)
    # K: of 70 cancellations pending at once 64 are followed; the 6 others stay counted
    # (4,000 B each), flagged (overflow bit 6, a warning); the Waitall left nothing pending:
    # 64 more cancelled receives are all followed again
    [many] = rows["cancel_many"]
    assert (fn(many, "MPI_Irecv")["calls"], fn(many, "MPI_Irecv")["bytes_recv"]) == (134 * n, 6 * 4000 * n)
    assert per_func["MPI_Irecv"] == 6 * 4000 * n
    assert prof.ranks["overflow"].tolist() == [1 << 6] * n
    assert any("more than 64 cancelled receives" in w for w in rep["warnings"]), rep["warnings"]
    # H: an idup'ed communicator has its members
    [idup] = rows["idup of world"]
    assert idup["world_ranks"] == list(range(n)) and idup["size"] == n
    # J: MPI_PROC_NULL neighbours move nothing: 4 B to each real neighbour
    [line] = rows[f"cart {n} of world"]
    for func in ("MPI_Neighbor_alltoall", "MPI_Neighbor_alltoallv"):
        assert fn(line, func)["bytes_sent"] == fn(line, func)["bytes_recv"] == 4 * (2 * n - 2)
    # I: the name prints literally, on one line of its table
    odd = "halo\n[bold]x\x1b[31m"
    assert len(rows[odd]) == 1
    text = mpitest.run(mpitest.mpiscope_cmd("report", "--by-comm", path)).stdout
    assert "halo\\n[bold]x\\x1b[31m" in text and "\x1b" not in text
    assert not any(line.lstrip().startswith("[bold]x") for line in text.splitlines())
