"""Derived datatypes, sub-communicators, Pcontrol regions and threads under the runtime.

Peers are always WORLD ranks, whatever communicator a message went through;
bytes are count x MPI_Type_size (not the extent); every call is charged to the
innermost open MPI_Pcontrol region.
"""

from __future__ import annotations

import numpy as np
import pytest

from mpiscope import format as fmt
from profile_expect import (OUTSIDE, Expect, assert_profile, assert_rank_sanity, check_program,
                            regions, ring, run_both, runner)  # noqa: F401  (fixture)


def datatypes(P: int, polls: dict) -> Expect:
    e = Expect(P)
    for r in range(P):
        left, right = ring(P, r)
        # contiguous x4, vector x2, struct x3, indexed x1; then contiguous(k) x1, k = 1..4
        for n in (48, 160, 63, 16, 4, 8, 12, 16):
            e.call(r, "MPI_Sendrecv", n, n).msg(r, right, n)
        e.call(r, "MPI_Bcast", 80 if r == 0 else 0, 0 if r == 0 else 80)
        e.call(r, "MPI_Allgather", 12, 12 * P)
    return e


def dims_create(n: int) -> tuple[int, int]:
    """MPI_Dims_create(n, 2): the most balanced factors, larger first."""
    a = int(n ** 0.5)
    while n % a:
        a -= 1
    return n // a, a


def subcomm(P: int, polls: dict) -> Expect:
    assert P % 2 == 0, "subcomm pairs the even and odd halves"
    e = Expect(P)
    d0, d1 = dims_create(P)
    for r in range(P):
        # half: same parity, decreasing world rank; half rank k is world rank top - 2k
        top = P - 1 if (P - 1) % 2 == r % 2 else P - 2
        other_top = P - 1 if top == P - 2 else P - 2
        h, size = (top - r) // 2, P // 2
        x, y = divmod(r, d1)
        for n, peer in ((24, top - 2 * ((h + 1) % size)),      # split
                        (20, (r + 1) % P),                      # dup
                        (16, x * d1 + (y + 1) % d1),            # cart, dimension 1
                        (12, ((x + 1) % d0) * d1 + y),          # cart, dimension 0
                        (8, other_top - 2 * h)):                # intercommunicator
            e.call(r, "MPI_Sendrecv", n, n).msg(r, peer, n)
        e.call(r, "MPI_Allreduce", 4, 4).call(r, "MPI_Barrier")
    return e


def comm_churn(P: int, polls: dict) -> Expect:
    e = Expect(P)
    d0, d1 = dims_create(P)
    for r in range(P):
        left, right = ring(P, r)
        x, y = divmod(r, d1)
        for k in range(6):  # split, alternately in world order and reversed, then freed
            e.call(r, "MPI_Sendrecv", 4 * (k + 1), 4 * (k + 1)).msg(r, left if k % 2 else right,
                                                                    4 * (k + 1))
        for n, peer in ((28, left),                  # create_group over the reversed group
                        (12, x * d1 + (y + 1) % d1),  # cart_sub: along the row
                        (20, right)):                # idup
            e.call(r, "MPI_Sendrecv", n, n).msg(r, peer, n)
        e.call(r, "MPI_Wait")
    return e



def threads(P: int, polls: dict) -> Expect:
    e = Expect(P)
    for r in range(P):
        left, right = ring(P, r)
        e.call(r, "MPI_Sendrecv", 24, 24, calls=30).msg(r, left, 24, msgs=30)
        e.call(r, "MPI_Sendrecv", 32, 32, calls=20).msg(r, right, 32, msgs=20)
    return e


PROGRAMS = {f.__name__: f for f in (datatypes, subcomm, comm_churn, regions, threads)}


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_exact_traffic(runner, impl, program):  # noqa: F811
    check_program(runner, impl, program, PROGRAMS[program],
                  threads=2 if program == "threads" else 1)


def test_region_tree(runner, impl):  # noqa: F811
    """Region records: depth, parent, entries per rank; ids are FNV-1a of the names."""
    prof = runner.run(impl, "regions").profile
    P = prof.nranks
    assert prof.region_names == {0: "(outside regions)", **{
        fmt.fnv1a64(n): n for n in ("outer", "inner", "solo", "evens")}}
    got = {(int(x["rank"]), prof.region_names[int(x["region"])]):
           (int(x["depth"]), prof.region_names[int(x["parent"])] if x["parent"] else OUTSIDE,
            int(x["entries"])) for x in prof.regions}
    want = {}
    for r in range(P):
        want[(r, "outer")] = (1, OUTSIDE, 1)
        want[(r, "inner")] = (2, "outer", 2)
        want[(r, "solo")] = (1, OUTSIDE, 3)
        if r % 2 == 0:
            want[(r, "evens")] = (1, OUTSIDE, 1)
    assert got == want
    assert len(prof.regions) == len(want)
    # Inclusive wall time: a region holds its children, and all lie within the run.
    wall = {k: float(x["wall"]) for k, x in zip(got, prof.regions)}
    for r in range(P):
        assert 0 < wall[(r, "inner")] <= wall[(r, "outer")] <= prof.ranks["wall"][r]
    # MPI_Pcontrol is itself a call: twice per region entry on every rank.
    if "MPI_Pcontrol" in prof.functions:
        f = prof.funcs[prof.funcs["func"] == prof.func_id("MPI_Pcontrol")]
        per_rank = {r: int(f["calls"][f["rank"] == r].sum()) for r in range(P)}
        assert per_rank == {r: 2 * (1 + 2 + 3 + (r % 2 == 0)) for r in range(P)}


def region_records(prof) -> dict:
    """(rank, region name) -> (depth, parent name, entries)."""
    names = prof.region_names
    return {(int(x["rank"]), names[int(x["region"])]):
            (int(x["depth"]), names[int(x["parent"])] if x["parent"] else OUTSIDE,
             int(x["entries"])) for x in prof.regions}


def test_region_misuse_and_limits(runner, impl):  # noqa: F811
    """Pcontrol without a name, other levels, closing what is not open, closing an
    outer region, a 300-character and a UTF-8 name, more regions than slots, a
    region left open at MPI_Finalize (tests/programs/regions_misuse.c)."""
    run, plain = run_both(runner, impl, "regions_misuse")
    assert run.results == plain.results
    prof = run.profile
    P = prof.nranks
    # The long name may be shortened, but to a usable prefix.
    longname = next((n for n in prof.region_names.values() if n.startswith("L")), "L" * 300)
    assert len(longname) >= 64 and set(longname) == {"L"}
    utf8 = "r\u00e9gion"
    e = Expect(P)
    want = {}
    for r in range(P):
        e.call(r, "MPI_Barrier", calls=2)                       # before and after "a"
        e.call(r, "MPI_Allreduce", 4, 4, region=longname)
        e.call(r, "MPI_Barrier", region=utf8)
        e.call(r, "MPI_Barrier", region="b")
        for i in range(58):
            e.call(r, "MPI_Barrier", region=f"r{i:02d}")
            want[(r, f"r{i:02d}")] = (2, "left_open", 1)
        e.call(r, "MPI_Barrier", calls=12, region="left_open")  # r58..r69: no slot left
        e.call(r, "MPI_Allreduce", 4, 4, region="left_open")
        want.update({(r, longname): (1, OUTSIDE, 1), (r, utf8): (1, OUTSIDE, 1),
                     (r, "a"): (1, OUTSIDE, 1), (r, "b"): (2, "a", 1),
                     (r, "left_open"): (1, OUTSIDE, 1)})
    assert_profile(prof, e)
    assert region_records(prof) == want
    assert_rank_sanity(prof, overflow=2)  # bit 1: the region table was full
    pcontrol = prof.funcs[prof.funcs["func"] == prof.func_id("MPI_Pcontrol")]
    per_rank = np.bincount(pcontrol["rank"], weights=pcontrol["calls"], minlength=P)
    assert list(per_rank) == [5 + 2 + 2 + 3 + 1 + 2 * 70] * P


def test_region_names_from_every_kind_of_memory(runner, impl):  # noqa: F811
    """Region names in a string literal, the brk heap, an mmap'd block, the caller's stack
    and just before an unreadable page (runtime/safe_read.c reads the first four directly,
    the others through process_vm_readv); 64 bytes that run into the unreadable page with
    no terminator are no name (tests/programs/region_names.c)."""
    run, plain = run_both(runner, impl, "region_names")
    assert run.results == plain.results and all("ok" in line for line in run.results)
    prof = run.profile
    P = prof.nranks
    names = ("literal", "heap", "mapped", "stack", "edge")
    e = Expect(P)
    for r in range(P):
        for name in names:
            e.call(r, "MPI_Barrier", region=name)
        e.call(r, "MPI_Barrier")                        # the 'x' run: outside every region
    assert_profile(prof, e)
    assert region_records(prof) == {(r, n): (1, OUTSIDE, 1) for r in range(P) for n in names}
