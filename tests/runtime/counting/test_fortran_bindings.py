"""Every Fortran binding counts each MPI call exactly once (docs/fortran.md).

tests/programs/fortran_{mpifh,usempi,f08}.f90 make the same known traffic
through mpif.h, `use mpi` and `use mpi_f08`; fortran_twin.c makes it in C.
Each runs under the runtime (Open MPI: 16 ranks, MPICH: 2). The Fortran
profiles must hold the exact calls and per-peer traffic computed below and be
equal, record for record, to the C twin's; and every program must print the
same results with and without the runtime.
"""

from __future__ import annotations

import re
import shutil
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pytest

import mpitest
from mpiscope import native, read
from mpiscope.format import fnv1a64
from profile_expect import FORTRAN_CALLS as CALLS, calls_by_rank

BINDINGS = ("mpifh", "usempi", "f08")

# CALLS (profile_expect.FORTRAN_CALLS): a function the runtime wraps must show exactly
# this count; one it does not wrap is absent. The lifecycle functions may be left out of
# the counts by the runtime's design, so they are only held equal to the C twin.
LIFECYCLE = {"MPI_Init", "MPI_Finalize", "MPI_Pcontrol"}
# These must be wrapped, or the test would prove nothing.
MUST_WRAP = {"MPI_Send", "MPI_Recv", "MPI_Irecv", "MPI_Isend", "MPI_Waitall", "MPI_Waitany",
             "MPI_Allreduce", "MPI_Bcast", "MPI_Sendrecv", "MPI_Gather", "MPI_Barrier"}

# Calls per rank inside each region (innermost region gets the call).
REGION_CALLS = {
    "ring": {"MPI_Send": 1, "MPI_Recv": 1},
    "halo": {"MPI_Irecv": 4, "MPI_Isend": 4, "MPI_Waitall": 2},
    "solve": {"MPI_Allreduce": 2},
}


def expected_bytes(nranks: int) -> dict[str, list[tuple[int, int]]]:
    """Function -> (bytes sent, bytes received) per rank, by the roles in runtime/wrappers/functions.py.

    Sends count count x type size; posted receives their size; blocking
    receives the size in the status (0 from MPI_PROC_NULL); MPI_IN_PLACE sends
    nothing; a Bcast root sends, the others receive; a Gather root receives
    one block per rank.
    """
    out: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for r in range(nranks):
        line_sent = 8 * 4 if r + 1 < nranks else 0
        line_recv = 8 * 4 if r > 0 else 0
        bottom = 3 * 4 + 2 * 8
        rows = {
            "MPI_Send": (400, 0), "MPI_Recv": (0, 400),
            "MPI_Isend": (4 * 400 + 2 * 16, 0), "MPI_Irecv": (0, 4 * 400 + 2 * 16),
            "MPI_Allreduce": (0 + 4 + 4, 80 + 4 + 4),
            "MPI_Bcast": (128, 0) if r == 0 else (0, 128),
            "MPI_Sendrecv": (line_sent + 64 + bottom, line_recv + 64 + bottom),
            "MPI_Gather": (8, 8 * nranks if r == 0 else 0),
        }
        for name, pair in rows.items():
            out[name].append(pair)
    return dict(out)


def expected_peers(nranks: int) -> dict[tuple[int, int], list[int]]:
    """(rank, world peer) -> [messages, bytes] of the programs' point-to-point sends."""
    peers: dict[tuple[int, int], list[int]] = defaultdict(lambda: [0, 0])

    def send(r, to, nbytes):
        peers[(r, to)][0] += 1
        peers[(r, to)][1] += nbytes

    for r in range(nranks):
        left, right = (r - 1) % nranks, (r + 1) % nranks
        send(r, right, 100 * 4)                    # ring Send
        for _ in range(2):                         # halo Isends
            send(r, right, 50 * 8)
            send(r, left, 50 * 8)
        if r + 1 < nranks:                         # line Sendrecv (PROC_NULL at the top)
            send(r, r + 1, 8 * 4)
        send(r, right, 4 * 4)                      # Waitany round
        send(r, left, 4 * 4)
        members = [q for q in range(nranks) if q % 2 == r % 2]
        send(r, members[(members.index(r) + 1) % len(members)], 16 * 4)  # sub-communicator ring
        send(r, right, 3 * 4 + 2 * 8)              # MPI_BOTTOM struct
    return dict(peers)


def program(impl: str, name: str) -> str:
    return str(native.program(impl, f"tests/{name}"))


def run_plain(impl: str, name: str, workdir: Path) -> str:
    n = mpitest.NRANKS[impl]
    return mpitest.run([*mpitest.launcher(impl, n), program(impl, name)], cwd=workdir,
                       timeout=240).stdout


def run_profiled(impl: str, name: str, outdir: Path):
    """Run in outdir (the programs may write scratch files there)."""
    n = mpitest.NRANKS[impl]
    proc = mpitest.run(mpitest.mpiscope_cmd("run", "--mpi", impl, "--dir", str(outdir), "--",
                                            *mpitest.launcher(impl, n), program(impl, name)),
                       cwd=outdir, timeout=240)
    paths = re.findall(r"mpiscope: profile: (\S+)", proc.stderr)
    assert len(paths) == 1, f"expected one profile, stderr:\n{proc.stderr}"
    return read(paths[0]), proc.stdout


_profiled: dict[tuple[str, str], tuple] = {}


def profiled(impl: str, name: str, tmp_path_factory):
    """(Profile, stdout) of one run of a program under the runtime, run once per session."""
    key = (impl, name)
    if key not in _profiled:
        _profiled[key] = run_profiled(impl, name, tmp_path_factory.mktemp(f"{name}_{impl}"))
    return _profiled[key]



def func_records(prof) -> Counter:
    """Every (rank, function, region) record's counts, keyed by names, as a multiset."""
    names = prof.functions
    return Counter((int(f["rank"]), names[f["func"]], int(f["region"]), int(f["calls"]),
                    int(f["bytes_sent"]), int(f["bytes_recv"])) for f in prof.funcs)


def hist_records(prof) -> Counter:
    names = prof.functions
    return Counter((int(h["rank"]), names[h["func"]], int(h["bucket"]), int(h["region"]),
                    int(h["count"])) for h in prof.hist)


def peer_table(prof) -> dict[tuple[int, int], list[int]]:
    return {(int(p["rank"]), int(p["peer"])): [int(p["msgs"]), int(p["bytes"])]
            for p in prof.peers}


def comparable(out: str) -> str:
    """A program's output without its name and without notes on the MPI's own quirks."""
    lines = [ln for ln in out.splitlines() if not ln.startswith("note:")]
    return re.sub(r"fortran_\w+:", "PROGRAM:", "\n".join(lines))


@pytest.mark.parametrize("binding", BINDINGS)
def test_binding_counts_exactly_once(impl, nranks, binding, tmp_path_factory):
    prof, out = profiled(impl, f"fortran_{binding}", tmp_path_factory)
    assert f"fortran_{binding}: all checks passed" in out
    assert prof.nranks == nranks
    calls = calls_by_rank(prof)
    assert MUST_WRAP <= set(calls), f"not wrapped: {sorted(MUST_WRAP - set(calls))}"
    for name, per_rank in calls.items():
        want = CALLS.get(name, 0)
        if name in LIFECYCLE:
            assert set(per_rank.tolist()) <= {0, want}, name
        else:
            assert per_rank.tolist() == [want] * nranks, f"{name}: {per_rank.tolist()}"
    assert peer_table(prof) == expected_peers(nranks)
    for fname, want in expected_bytes(nranks).items():
        rows = prof.funcs[prof.funcs["func"] == prof.func_id(fname)]
        sent = np.bincount(rows["rank"], weights=rows["bytes_sent"], minlength=nranks)
        recv = np.bincount(rows["rank"], weights=rows["bytes_recv"], minlength=nranks)
        assert list(zip(sent.astype(int).tolist(), recv.astype(int).tolist())) == want, fname

    names = prof.functions
    for region, want in REGION_CALLS.items():
        rid = fnv1a64(region)
        assert prof.region_names.get(rid) == region
        rows = prof.funcs[prof.funcs["region"] == rid]
        got = Counter()
        for f in rows:
            got[names[f["func"]]] += int(f["calls"])
        assert {k: v for k, v in got.items() if k not in LIFECYCLE} == \
            {k: v * nranks for k, v in want.items()}, region

    # Record for record what the same traffic from C gives.
    ref, ref_out = profiled(impl, "fortran_twin", tmp_path_factory)
    assert func_records(prof) == func_records(ref)
    assert hist_records(prof) == hist_records(ref)
    assert peer_table(prof) == peer_table(ref)
    assert comparable(out) == comparable(ref_out)


@pytest.mark.parametrize("binding", BINDINGS)
def test_binding_results_unchanged_by_runtime(impl, binding, tmp_path, tmp_path_factory):
    plain = run_plain(impl, f"fortran_{binding}", tmp_path)
    _, with_runtime = profiled(impl, f"fortran_{binding}", tmp_path_factory)
    assert f"fortran_{binding}: all checks passed" in plain
    assert with_runtime == plain


# --- one or a few calls of every family, through mpif.h and mpi_f08 ------------

def expected_family_calls(nranks: int) -> dict[str, list[int]]:
    """Calls per rank of fortran_families_*.f90 (and fortran_families_twin.c)."""
    once = ("MPI_Send_init MPI_Recv_init MPI_Iprobe MPI_Mprobe MPI_Mrecv MPI_Improbe MPI_Imrecv "
            "MPI_Test MPI_Testall MPI_Testany MPI_Testsome MPI_Issend MPI_Waitsome MPI_Ssend "
            "MPI_Sendrecv_replace MPI_Reduce MPI_Scatter MPI_Allgather MPI_Alltoall "
            "MPI_Alltoallv MPI_Alltoallw MPI_Gatherv MPI_Reduce_scatter_block MPI_Scan "
            "MPI_Exscan MPI_Ibarrier MPI_Iallreduce MPI_Ialltoallw MPI_Cart_create "
            "MPI_Neighbor_allgather MPI_Dist_graph_create_adjacent MPI_Neighbor_alltoall "
            "MPI_Neighbor_alltoallw MPI_Comm_dup MPI_Comm_group MPI_Group_incl MPI_Comm_create "
            "MPI_Comm_split_type MPI_Win_allocate MPI_Put MPI_Win_free MPI_File_set_view "
            "MPI_File_write_at_all MPI_File_read_at MPI_Barrier MPI_Gather MPI_Comm_rank "
            "MPI_Comm_size MPI_Init MPI_Finalize").split()
    calls = {name: [1] * nranks for name in once}
    more = {"MPI_Startall": 2, "MPI_Waitall": 2, "MPI_Start": 2, "MPI_Wait": 9,
            "MPI_Request_free": 2, "MPI_Isend": 3, "MPI_Probe": 2, "MPI_Recv": 3,
            "MPI_Group_free": 2, "MPI_Win_fence": 3, "MPI_Get": 2, "MPI_File_open": 2,
            "MPI_File_close": 2}
    calls.update({name: [k] * nranks for name, k in more.items()})
    calls["MPI_Comm_free"] = [5] + [4] * (nranks - 1)     # rank 0 also frees its Comm_create result
    calls["MPI_File_delete"] = [1] + [0] * (nranks - 1)
    return calls


@pytest.mark.parametrize("binding", ("mpifh", "f08"))
def test_every_family_counts_exactly_once(impl, nranks, binding, tmp_path, tmp_path_factory):
    name = f"fortran_families_{binding}"
    prof, out = profiled(impl, name, tmp_path_factory)
    assert f"{name}: all checks passed" in out
    calls = calls_by_rank(prof)
    want = expected_family_calls(nranks)
    unwrapped = sorted(set(want) - LIFECYCLE - set(calls))
    assert not unwrapped, f"called but not in the runtime's list: {unwrapped}"
    for fname, per_rank in calls.items():
        expect = want.get(fname, [0] * nranks)
        if fname in LIFECYCLE:
            assert all(g in (0, e) for g, e in zip(per_rank.tolist(), expect)), fname
        else:
            assert per_rank.tolist() == expect, f"{fname}: {per_rank.tolist()} != {expect}"

    ref, ref_out = profiled(impl, "fortran_families_twin", tmp_path_factory)
    assert func_records(prof) == func_records(ref)
    assert hist_records(prof) == hist_records(ref)
    assert peer_table(prof) == peer_table(ref)
    assert comparable(out) == comparable(ref_out)
    assert run_plain(impl, name, tmp_path) == out


# --- linked with -lmpiscope instead of preloaded --------------------------------

@pytest.mark.parametrize("binding", ("mpifh", "f08"))
def test_linked_program_counts_like_preloaded(impl, nranks, binding, tmp_path, tmp_path_factory):
    """`mpif90 app.f90 -lmpiscope`: the Fortran symbols bind to libmpiscope at link time."""
    src = mpitest.REPO / "tests" / "programs" / f"fortran_{binding}.f90"
    libdir = native.runtime_library(impl).parent
    exe = tmp_path / f"linked_{binding}"
    fc = shutil.which(f"mpif90.{impl}") or "mpif90"
    mpitest.run([fc, "-O2", "-fallow-argument-mismatch", "-w",
                 "-J", str(tmp_path), str(src), f"-L{libdir}", "-lmpiscope",
                 f"-Wl,-rpath,{libdir}", "-o", str(exe)], cwd=tmp_path, timeout=120)
    proc = mpitest.run([*mpitest.launcher(impl, nranks), *(["-x", "MPISCOPE_DIR"]
                        if impl == "openmpi" else []), str(exe)],
                       cwd=tmp_path, env={"MPISCOPE_DIR": str(tmp_path)}, timeout=240)
    assert f"fortran_{binding}: all checks passed" in proc.stdout
    [path] = tmp_path.glob("*.mpiscope")
    linked = read(path)
    preloaded, _ = profiled(impl, f"fortran_{binding}", tmp_path_factory)
    assert func_records(linked) == func_records(preloaded)
    assert peer_table(linked) == peer_table(preloaded)


def test_pcontrol_level_without_name_opens_no_region(impl, nranks, tmp_path_factory):
    """mpif.h's MPI_Pcontrol(level) leaves leftovers where a name would be: none becomes a region."""
    prof, out = profiled(impl, "fortran_pcontrol_levels", tmp_path_factory)
    assert f"fortran_pcontrol_levels: sum of ranks {nranks * (nranks - 1) // 2}" in out
    assert set(prof.region_names) == {0}
    assert set(prof.funcs["region"].tolist()) == {0}
    calls = calls_by_rank(prof)
    assert calls["MPI_Allreduce"].tolist() == [1] * nranks
    assert set(calls["MPI_Pcontrol"].tolist()) <= {0, 4}
