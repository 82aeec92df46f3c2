"""The wrapper generator and its one list (runtime/wrappers/functions.py, runtime/wrappers/gen_wrappers.py).

Every role names a real argument, every listed function yields exactly one
wrapper (or is hand-written in lifecycle.c), every role has its C macros in
roles.h, and the names/kinds table that goes into META is the list's. Also:
the built library exports a wrapper for every function and the generated
table inside the library agrees with the list.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mpiscope import native

RUNTIME = Path(__file__).resolve().parents[3] / "runtime"


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


FUNCS = _load("mpiscope_functions_under_test", RUNTIME / "wrappers" / "functions.py")
GEN = _load("mpiscope_gen_under_test", RUNTIME / "wrappers" / "gen_wrappers.py")
FUNCTIONS = FUNCS.load()


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gen")
    subprocess.run([sys.executable, str(RUNTIME / "wrappers" / "gen_wrappers.py"), "--outdir", str(out)],
                   check=True, timeout=60)
    return out


def test_every_role_names_a_real_argument():
    for f in FUNCTIONS:
        names = {a.name for a in f.args}
        for r in f.roles:
            assert r.name in FUNCS.ROLES, f"{f.name}: unknown role {r.name}"
            assert not r.qualifier or r.qualifier in FUNCS.QUALIFIERS, f"{f.name}: {r}"
            for a in r.args:
                assert a in names or a.isdigit(), f"{f.name}: role {r.name} names {a!r}"


def test_generator_rejects_a_role_on_a_missing_argument():
    bad = FUNCS.load("p2p | int MPI_Send(const void *buf, int count, MPI_Datatype datatype, "
                     "int dest, int tag, MPI_Comm comm) | send(cnt,datatype)")
    with pytest.raises(SystemExit, match="names 'cnt'"):
        GEN.check(FUNCS, bad)


def test_flags_derive_entries_and_unknown_flags_are_refused():
    line = ("coll _c _init | int MPI_Scan(const void *sendbuf, void *recvbuf, int count, "
            "MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) | inplace(sendbuf) "
            "send(count,datatype) recv(count,datatype) sync(comm)")
    got = FUNCS.load(line)
    assert [f.name for f in got] == ["MPI_Scan", "MPI_Scan_c", "MPI_Scan_init", "MPI_Scan_init_c"]
    assert [f.mpi4 for f in got] == [False, True, True, True]
    assert got[3].prototype == ("int MPI_Scan_init_c(const void *sendbuf, void *recvbuf, "
                                "MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, "
                                "MPI_Info info, MPI_Request *request)")
    GEN.check(FUNCS, got)          # the _init forms drop sync, so the generator accepts them
    assert [f.name for f in FUNCS.load(line, declared={"MPI_Scan_c"})] == ["MPI_Scan", "MPI_Scan_c"]
    with pytest.raises(ValueError, match="unknown flag '_x'"):
        FUNCS.load(line.replace("_init", "_x"))


def test_inplace_comes_before_the_roles_it_guards():
    # MPI_IN_PLACE makes the send arguments garbage: roles.h skips them only
    # if the inplace role ran first.
    for f in FUNCTIONS:
        names = [r.name for r in f.roles]
        for guard, prefix in (("inplace", "send"), ("inplace_recv", "recv")):
            if guard in names:
                first = min(i for i, n in enumerate(names) if n == prefix or n.startswith(prefix + "_"))
                assert names.index(guard) < first, f"{f.name}: {names}"


def test_every_entry_yields_one_wrapper(generated):
    text = (generated / "mpiscope_wrappers.c").read_text()
    defined = re.findall(r"^int (MPI_\w+)\(", text, re.M)
    assert len(defined) == len(set(defined))
    expect = {f.name for f in FUNCTIONS if not f.hand}
    assert set(defined) == expect
    hand = {f.name for f in FUNCTIONS if f.hand}
    assert hand == {"MPI_Init", "MPI_Init_thread", "MPI_Finalize", "MPI_Abort", "MPI_Pcontrol"}
    lifecycle = (RUNTIME / "lifecycle.c").read_text()
    for name in hand:
        assert re.search(rf"^int {name}\(", lifecycle, re.M), name


def test_every_role_has_its_macros():
    roles_h = (RUNTIME / "wrappers" / "roles.h").read_text()
    for name, (phase, _doc) in FUNCS.ROLES.items():
        if phase in ("pre", "both"):
            assert f"#define MPISCOPE_PRE_{name}(" in roles_h, name
        if phase in ("post", "both"):
            assert f"#define MPISCOPE_POST_{name}(" in roles_h, name
    for q in FUNCS.QUALIFIERS:
        assert f"#define MPISCOPE_QUAL_{q}(" in roles_h, q


def test_kinds_table_matches_the_list(generated):
    table = (generated / "mpiscope_table.c").read_text()
    names = re.findall(r'^    "([^"]+)",$', table.split("mpiscope_func_kinds")[0], re.M)
    kinds_block = table.split("mpiscope_func_kinds[MPISCOPE_NIDS] = {")[1].split("};")[0]
    kinds = re.findall(r'"(\w+)"', kinds_block)
    rows = FUNCS.table(FUNCTIONS)
    assert list(zip(names, kinds)) == rows
    colls = [f.name for f in FUNCTIONS if f.kind == "coll"]
    assert [n for n, k in rows if k == "sync"] == [c + ":sync" for c in colls]
    assert set(k for _, k in rows) <= set(FUNCS.KINDS)
    # functions.KINDS is the kind list the format documents
    assert set(FUNCS.KINDS) == {"p2p", "wait", "coll", "sync", "rma", "io", "comm", "other"}


def test_the_surface_issue_3_lists_is_covered():
    names = {f.name for f in FUNCTIONS}
    must = """Send Bsend Ssend Rsend Recv Sendrecv Sendrecv_replace Isend Ibsend Issend Irsend Irecv
    Send_init Recv_init Start Startall Probe Iprobe Mprobe Improbe Mrecv Imrecv Wait Waitall Waitany
    Waitsome Test Testall Testany Testsome Request_free Barrier Bcast Gather Gatherv Scatter Scatterv
    Allgather Allgatherv Alltoall Alltoallv Alltoallw Reduce Allreduce Reduce_scatter
    Reduce_scatter_block Scan Exscan Ibarrier Ibcast Iallreduce Ialltoallw Neighbor_allgather
    Neighbor_alltoallw Ineighbor_alltoall Put Get Accumulate Get_accumulate Fetch_and_op
    Compare_and_swap Win_fence Win_lock Win_unlock Win_post Win_start Win_complete Win_wait
    File_open File_close File_set_view File_sync File_read File_write File_read_all File_write_all
    File_read_at_all File_write_at_all File_iread File_iwrite File_read_shared File_write_ordered
    Comm_split Comm_dup Comm_create Comm_free Intercomm_create Cart_create Group_incl
    Init Init_thread Finalize Abort Pcontrol""".split()
    assert {"MPI_" + m for m in must} <= names
    kinds = {f.name: f.kind for f in FUNCTIONS}
    assert kinds["MPI_Wait"] == kinds["MPI_Iprobe"] == "wait"
    assert kinds["MPI_Send"] == "p2p" and kinds["MPI_Put"] == "rma" and kinds["MPI_File_read"] == "io"


def test_the_fortran_generator_reads_the_same_list():
    fgen = _load("mpiscope_gen_fortran_under_test", RUNTIME / "fortran" / "gen_fortran.py")
    parsed = fgen.load_functions(RUNTIME / "wrappers" / "functions.py")
    # without --mpicc, no MPI-4 entry (they exist only where mpi.h declares them)
    assert [f.name for f in parsed] == [f.name for f in FUNCTIONS if not f.mpi4]


def test_library_exports_every_wrapper(impl):
    lib = native.runtime_library(impl)
    out = subprocess.run(["nm", "-D", "--defined-only", str(lib)], capture_output=True,
                         text=True, check=True, timeout=60).stdout
    exported = set(re.findall(r" T (MPI_\w+)$", out, re.M))
    # (the MPI-4 entries where mpi.h declares them: tests/runtime/counting/test_runtime_mpi4.py)
    assert {f.name for f in FUNCTIONS if not f.mpi4} <= exported
    # internals are hidden: nothing of the hot path is interposable
    assert not re.search(r" [TBD] mpiscope_(record|stat_add|peer_add|tls)\b", out)
