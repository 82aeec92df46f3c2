"""Stacking with another PMPI tool (docs/runtime.md, "Stacking with other PMPI tools").

tests/tools/pmpi_counter.c is a classic PMPI tool (its wrappers call PMPI_*),
built here and preloaded with libmpiscope.so around the C and Fortran
programs of known traffic (fortran_twin.c, fortran_mpifh.f90). With mpiscope
first, both count every call exactly once, and the tool never sees the
runtime's own MPI calls; with the tool first, the runtime prints one warning
that names it.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

import mpitest
from mpiscope import native, read
from profile_expect import FORTRAN_CALLS as CALLS, calls_by_rank

TOOL_SRC = mpitest.REPO / "tests" / "tools" / "pmpi_counter.c"
PROGRAMS = ("fortran_twin", "fortran_mpifh")
WARNING = re.compile(r"mpiscope: warning: (\S+) is loaded before mpiscope and defines MPI_\w+")


def build_tool(impl: str, where: Path) -> Path:
    out = where / f"pmpi_counter.{impl}.so"
    if not out.exists():
        cc = shutil.which(f"mpicc.{impl}") or "mpicc"
        mpitest.run([cc, "-O2", "-shared", "-fPIC", str(TOOL_SRC), "-o", str(out)], timeout=120)
    return out


def tool_counts(stdout: str, nranks: int) -> dict[int, dict[str, int]]:
    rows = {}
    for m in re.finditer(r"^pmpi_counter rank (\d+):(.*)$", stdout, re.M):
        rows[int(m.group(1))] = {k: int(v) for k, v in re.findall(r"(MPI_\w+)=(\d+)", m.group(2))}
    assert sorted(rows) == list(range(nranks)), stdout
    return rows


def assert_tool_saw_every_call(stdout: str, nranks: int) -> None:
    for rank, counts in tool_counts(stdout, nranks).items():
        for name, n in counts.items():
            assert n == CALLS[name], (rank, name, n)


def ranks(impl: str) -> int:
    return min(4, mpitest.NRANKS[impl])


@pytest.mark.parametrize("program", PROGRAMS)
def test_tool_after_mpiscope_sees_every_call(impl, program, tmp_path):
    """`mpiscope run` with the user's LD_PRELOAD=tool: ours first, the tool kept after it."""
    tool = build_tool(impl, tmp_path)
    n = ranks(impl)
    proc = mpitest.run(mpitest.mpiscope_cmd("run", "--mpi", impl, "--dir", str(tmp_path), "--",
                                            *mpitest.launcher(impl, n),
                                            str(native.program(impl, f"tests/{program}"))),
                       cwd=tmp_path, env={"LD_PRELOAD": str(tool)}, timeout=240)
    assert "all checks passed" in proc.stdout
    assert not WARNING.search(proc.stderr), proc.stderr
    assert_tool_saw_every_call(proc.stdout, n)      # and none of the runtime's own calls
    [path] = re.findall(r"mpiscope: profile: (\S+)", proc.stderr)
    calls = calls_by_rank(read(path))
    for name in ("MPI_Send", "MPI_Recv", "MPI_Isend", "MPI_Irecv", "MPI_Waitall",
                 "MPI_Allreduce", "MPI_Bcast", "MPI_Barrier", "MPI_Gather"):
        assert calls[name].tolist() == [CALLS[name]] * n, name


@pytest.mark.parametrize("program", PROGRAMS)
def test_tool_before_mpiscope_is_named_once(impl, program, tmp_path):
    """LD_PRELOAD=tool:mpiscope: the tool's PMPI_* calls bypass us; one warning names it,
    MPI_Init and MPI_Finalize first (the tool wraps both). Issue 27 item 4: the profile is
    still written (the tool's MPI_Finalize calls PMPI_Finalize, which mpiscope defines),
    and the warning prints once even with LD_PRELOAD set for the launcher itself (its
    processes load the runtime too, and hydra sets no rank variable the runtime knows)."""
    tool = build_tool(impl, tmp_path)
    lib = native.runtime_library(impl)
    n = ranks(impl)
    preload = f"{tool}:{lib}"
    if impl == "openmpi":
        cmd = [*mpitest.launcher(impl, n), "-x", f"LD_PRELOAD={preload}", "-x", "MPISCOPE_DIR"]
    else:
        cmd = [*mpitest.launcher(impl, n)]
    proc = mpitest.run([*cmd, str(native.program(impl, f"tests/{program}"))], cwd=tmp_path,
                       env={"MPISCOPE_DIR": str(tmp_path), "LD_PRELOAD": preload}, timeout=240)
    assert "all checks passed" in proc.stdout
    warnings = WARNING.findall(proc.stderr)
    assert warnings == [str(tool)], proc.stderr
    assert "defines MPI_Init, MPI_Init_thread, MPI_Finalize, MPI_Send (12 wrapped" in proc.stderr
    assert_tool_saw_every_call(proc.stdout, n)
    [path] = tmp_path.glob("*.mpiscope")
    calls = calls_by_rank(read(path))
    # what the tool does not wrap reaches mpiscope; what it wraps and passes to PMPI_* does not
    assert calls["MPI_Sendrecv"].tolist() == [CALLS["MPI_Sendrecv"]] * n
    assert calls["MPI_Comm_split"].tolist() == [CALLS["MPI_Comm_split"]] * n
    if program == "fortran_twin":      # C: every MPI_Send reaches the tool first
        assert calls["MPI_Send"].sum() == 0


def build_static_twin(impl: str, where: Path) -> Path:
    """fortran_twin.c linked with libmpiscope.a (a fully static runtime in the program)."""
    archive = native.runtime_library(impl).parent / "libmpiscope.a"
    exe = where / "twin_static"
    cc = shutil.which(f"mpicc.{impl}") or "mpicc"
    mpitest.run([cc, "-O2", str(mpitest.REPO / "tests" / "programs" / "fortran_twin.c"),
                 str(archive), "-lpthread", "-ldl", "-o", str(exe)], timeout=120)
    return exe


def test_static_archive_chains_to_a_preloaded_tool(impl, tmp_path):
    """libmpiscope.a linked into the program: the preloaded tool comes next and sees every call."""
    tool = build_tool(impl, tmp_path)
    exe = build_static_twin(impl, tmp_path)
    n = ranks(impl)
    if impl == "openmpi":
        cmd = [*mpitest.launcher(impl, n), "-x", f"LD_PRELOAD={tool}", "-x", "MPISCOPE_DIR"]
    else:
        cmd = [*mpitest.launcher(impl, n), "-genv", "LD_PRELOAD", str(tool)]
    proc = mpitest.run([*cmd, str(exe)], cwd=tmp_path, env={"MPISCOPE_DIR": str(tmp_path)},
                       timeout=240)
    assert "all checks passed" in proc.stdout
    assert not WARNING.search(proc.stderr), proc.stderr
    assert_tool_saw_every_call(proc.stdout, n)
    [path] = tmp_path.glob("*.mpiscope")
    calls = calls_by_rank(read(path))
    for name in ("MPI_Send", "MPI_Recv", "MPI_Allreduce", "MPI_Barrier", "MPI_Gather"):
        assert calls[name].tolist() == [CALLS[name]] * n, name


def test_static_archive_under_mpiscope_run(impl, tmp_path):
    """Issue 27 item 3: a program linked with libmpiscope.a, run under `mpiscope run` (which
    preloads the shared runtime): one copy stands down, the other profiles; one profile,
    one start banner, one note, no warning, every call counted once."""
    exe = build_static_twin(impl, tmp_path)
    n = ranks(impl)
    out = tmp_path / "out"
    out.mkdir()
    proc = mpitest.run(mpitest.mpiscope_cmd("run", "--mpi", impl, "--dir", str(out), "--",
                                            *mpitest.launcher(impl, n), str(exe)),
                       cwd=tmp_path, timeout=240)
    assert "all checks passed" in proc.stdout
    assert not WARNING.search(proc.stderr), proc.stderr
    assert proc.stderr.count("mpiscope: profiling") == 1, proc.stderr
    assert proc.stderr.count("has mpiscope in it too") == 1, proc.stderr
    [path] = out.glob("*.mpiscope")
    calls = calls_by_rank(read(path))
    for name in ("MPI_Send", "MPI_Recv", "MPI_Isend", "MPI_Irecv", "MPI_Waitall", "MPI_Allreduce",
                 "MPI_Bcast", "MPI_Sendrecv", "MPI_Waitany", "MPI_Barrier", "MPI_Gather",
                 "MPI_Comm_split"):
        assert calls[name].tolist() == [CALLS[name]] * n, name
