"""MPI-4 where the library has it (issue 20; docs/runtime.md "MPI-4").

The large-count MPI_X_c functions, MPI_Isendrecv(_replace), partitioned
communication, persistent collectives and MPI_Comm_idup_with_info are
generated from runtime/wrappers/functions.py only where the MPI's mpi.h declares them:
MPICH 4.0.2 here declares all of them, Open MPI 4.1 none. On MPICH,
tests/programs/mpi4_families.c uses every family once with known sizes and
the profile must hold exactly its calls, bytes, size buckets and messages,
each counted once (MPI_Isendrecv is 1 MPI_Isendrecv, no MPI_Isend or
MPI_Irecv; a persistent collective is 1 MPI_X_init of 0 bytes and one
MPI_Start per start, carrying the bytes); tests/programs/big_message_c.c
sends 2^31 + 8 elements with MPI_Send_c. MPICH runs at 2 ranks (it
busy-polls).
"""

from __future__ import annotations

import re
import subprocess
import sys

import mpitest
from mpiscope import native, read
from profile_expect import Expect, assert_profile, bucket, by_comm, check_program, fn, program_path, \
    run_killable, runner  # noqa: F401  (fixture)

RUNTIME = mpitest.REPO / "runtime" / "wrappers"
MPICC = {"openmpi": "mpicc.openmpi", "mpich": "mpicc.mpich"}


sys.path.insert(0, str(RUNTIME))
import gen_wrappers as GEN  # noqa: E402  (runtime/wrappers is not a package)

FUNCS = GEN.load_list(RUNTIME / "functions.py")
MPI4 = [f for f in FUNCS.load() if f.mpi4]


def exported(impl: str) -> set[str]:
    out = subprocess.run(["nm", "-D", "--defined-only", str(native.runtime_library(impl))],
                         capture_output=True, text=True, check=True, timeout=60).stdout
    return set(re.findall(r" T (MPI_\w+)$", out, re.M))


def test_the_list_derives_every_mpi4_family():
    names = {f.name for f in MPI4}
    for must in ("MPI_Send_c", "MPI_Recv_c", "MPI_Alltoallw_c", "MPI_Ineighbor_alltoallv_c",
                 "MPI_Put_c", "MPI_Win_create_c", "MPI_File_write_at_all_c",
                 "MPI_File_read_ordered_begin_c", "MPI_Isendrecv", "MPI_Isendrecv_replace_c",
                 "MPI_Psend_init", "MPI_Precv_init", "MPI_Pready", "MPI_Pready_range",
                 "MPI_Pready_list", "MPI_Parrived", "MPI_Allreduce_init", "MPI_Barrier_init",
                 "MPI_Neighbor_alltoallw_init_c", "MPI_Comm_idup_with_info"):
        assert must in names, must
    assert "MPI_Barrier_init_c" not in names and "MPI_File_read_all_end_c" not in names
    by = {f.name: f for f in FUNCS.load()}
    # a derived entry reads its base's arguments with its base's roles...
    assert by["MPI_Alltoallv_c"].roles == by["MPI_Alltoallv"].roles
    assert by["MPI_Alltoallv_c"].base == "MPI_Alltoallv"
    # ...a persistent collective without the blocking sync barrier, and with persist
    init = [r.name for r in by["MPI_Reduce_init_c"].roles]
    assert "sync" not in init and init[-1] == "persist" and "send" in init
    assert not by["MPI_Reduce_init_c"].moves_data and by["MPI_Reduce_c"].moves_data
    # MPI-3.1 functions are never dropped, whatever mpi.h declares
    assert {f.name for f in FUNCS.load(declared=set())} == {f.name for f in FUNCS.load()
                                                             if not f.mpi4}


def declared_args(text: str, name: str) -> str:
    """The argument list of the first declaration of name in preprocessed C."""
    m = re.search(rf"\bint\s+{name}\s*\(", text)
    assert m, f"mpi.h does not declare {name}"
    depth, i = 1, m.end()
    while depth:
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
    return " ".join(text[m.end():i - 1].split())


def test_derived_prototypes_are_those_mpich_declares():
    """The derivation rule (functions.py) against MPICH's own mpi.h, type by type."""
    text = GEN.mpi_h_text(MPICC["mpich"])
    wrong = []
    for f in MPI4:
        want = [a.type for a in FUNCS.parse_args(declared_args(text, f.name))]
        if want != [a.type for a in f.args]:
            wrong.append(f"{f.name}: mpi.h {want}, list {[a.type for a in f.args]}")
    assert not wrong, "\n".join(wrong)


def test_generated_only_where_mpi_h_declares_them(impl):
    declared = GEN.mpi_declared(FUNCS, MPICC[impl])
    lib = exported(impl)
    mpi4 = {f.name for f in MPI4}
    if impl == "openmpi":
        # Open MPI 4.1 declares none: none is generated, everything else is
        assert not (mpi4 & declared) and not (mpi4 & lib), sorted(mpi4 & lib)[:5]
    else:
        assert mpi4 <= declared and mpi4 <= lib, sorted(mpi4 - lib)[:5]
        assert len(mpi4) == 154
    assert {f.name for f in FUNCS.load() if not f.mpi4} <= lib


def mpi4_families(P: int, polls: dict) -> Expect:
    e = Expect(P)
    for r in range(P):
        left, right = (r - 1) % P, (r + 1) % P
        # A: 1 call each, never an MPI_Isend / MPI_Irecv
        e.call(r, "MPI_Isendrecv", 40, 40).msg(r, right, 40)
        e.call(r, "MPI_Isendrecv_replace", 56, 56).msg(r, left, 56)
        e.call(r, "MPI_Isendrecv_c", 20, 20).msg(r, right, 20)
        # B
        e.call(r, "MPI_Isend_c", 48).msg(r, right, 48).call(r, "MPI_Recv_c", recv=48)
        e.call(r, "MPI_Sendrecv_c", 24, 24).msg(r, right, 24)
        e.call(r, "MPI_Recv_init_c").call(r, "MPI_Send_init_c")
        e.call(r, "MPI_Startall", 36, 36).msg(r, right, 36).call(r, "MPI_Waitall")
        # C
        e.call(r, "MPI_Allreduce_c", 16, 16)
        e.call(r, "MPI_Bcast_c", *((8, 0) if r == 0 else (0, 8)))
        e.call(r, "MPI_Alltoallv_c", 8 * P, 8 * P)
        e.call(r, "MPI_Iallgather_c", 12, 12 * P)
        # D: the _init moves nothing, each start of it what the collective moves
        e.call(r, "MPI_Allreduce_init").call(r, "MPI_Start", 40, 40, calls=3)
        e.call(r, "MPI_Bcast_init_c").call(r, "MPI_Start", *((24, 0) if r == P - 1 else (0, 24)))
        e.call(r, "MPI_Barrier_init").call(r, "MPI_Start")
        # E: every start of a partitioned send is one message of all its partitions
        e.call(r, "MPI_Precv_init").call(r, "MPI_Psend_init")
        e.call(r, "MPI_Startall", 128, 128, calls=2).msg(r, right, 128, msgs=2)
        e.call(r, "MPI_Pready", calls=2).call(r, "MPI_Pready_range").call(r, "MPI_Pready_list")
        e.poll(r, "MPI_Parrived", polls).call(r, "MPI_Waitall", calls=2)
        # F
        e.call(r, "MPI_Comm_idup_with_info").call(r, "MPI_Allreduce_c", 4, 4)
        # G
        e.call(r, "MPI_Win_create_c").call(r, "MPI_Win_fence", calls=3).call(r, "MPI_Win_free")
        e.call(r, "MPI_Put_c", 12).call(r, "MPI_Get_c", recv=8)
        # H
        e.call(r, "MPI_File_open").call(r, "MPI_File_close")
        e.call(r, "MPI_File_write_at_all_c", 40).call(r, "MPI_File_read_at_c", recv=40)
        # every completion: A 3, B 1, C 1, D 5, F 1
        e.call(r, "MPI_Wait", calls=11)
    return e


def test_mpi4_families_counted_once_exactly(runner):  # noqa: F811
    impl = "mpich"
    prof = check_program(runner, impl, "mpi4_families", mpi4_families)
    # counted once: never again through what the library calls inside
    called = {prof.functions[int(r["func"])] for r in prof.funcs}
    assert not called & {"MPI_Isend", "MPI_Irecv", "MPI_Send", "MPI_Recv", "MPI_Allreduce",
                         "MPI_Bcast", "MPI_Barrier"}, called
    # MPI_Comm_idup_with_info names its communicator as MPI_Comm_idup does
    rows = by_comm(str(runner.run(impl, "mpi4_families").profiles[0]))
    assert fn(rows["idup of world"], "MPI_Allreduce_c")["calls"] == prof.nranks, sorted(rows)


def fortran_mpi4_f08(P: int, polls: dict) -> Expect:
    e = Expect(P)
    for r in range(P):
        e.call(r, "MPI_Barrier_init").call(r, "MPI_Start").call(r, "MPI_Wait", calls=2)
        e.call(r, "MPI_Precv_init").call(r, "MPI_Psend_init")
        e.call(r, "MPI_Startall", 128, 128, calls=2).msg(r, (r + 1) % P, 128, msgs=2)
        e.call(r, "MPI_Pready").call(r, "MPI_Pready_range").call(r, "MPI_Pready_list")
        e.poll(r, "MPI_Parrived", polls).call(r, "MPI_Waitall", calls=2)
        e.call(r, "MPI_Comm_idup_with_info").call(r, "MPI_Allreduce", 4, 4)
    return e


def test_mpi_f08_mpi4_routines_counted_once(runner):  # noqa: F811
    """use mpi_f08 on MPICH: the buffer-less MPI-4 routines (MPI_Barrier_init,
    MPI_Pready*, MPI_Parrived, MPI_Comm_idup_with_info) call PMPI_ directly and
    are counted by generated Fortran wrappers; the others (MPI_Psend_init...)
    reach the C wrappers. Each once."""
    check_program(runner, "mpich", "fortran_mpi4_f08", fortran_mpi4_f08)


BIG = 2**31 + 8


def test_large_count_message_of_more_than_2_31_elements(tmp_path, user_lock):
    impl, n = "mpich", 2
    cmd = mpitest.mpiscope_cmd("run", "--dir", str(tmp_path), "--mpi", impl, "--",
                               *mpitest.launcher(impl, n), program_path(impl, "big_message_c"))
    # one 2 GiB job at a time, whatever runs beside it (test_runtime_big_messages takes it too)
    with user_lock("big-message"):
        rc, out, err = run_killable(cmd, tmp_path, mpitest.mpi_env(), timeout=600)
    assert rc == 0, err[-3000:]
    lines = sorted(line for line in out.splitlines() if " checksum " in line)
    assert lines == ["big_message_c rank 0 checksum 0 ok",
                     f"big_message_c rank 1 checksum {BIG} ok"], out
    [path] = sorted(tmp_path.glob("*.mpiscope"))
    e = Expect(n)
    e.call(0, "MPI_Send_c", BIG).msg(0, 1, BIG).call(1, "MPI_Recv_c", recv=BIG)
    prof = read(path)
    assert_profile(prof, e)
    assert bucket(BIG) == 32 and prof.ranks["on_node_bytes"][0] == BIG
