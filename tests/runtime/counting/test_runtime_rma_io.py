"""One-sided communication and MPI-IO under the runtime: exact calls and bytes.

Convention asserted: MPI_Put and MPI_Accumulate send their origin buffer
(count x type size), MPI_Get receives it; MPI-IO writes send and reads receive
count x type size. Neither is point-to-point: no peers.
"""

from __future__ import annotations

import pytest

from profile_expect import Expect, check_program, runner  # noqa: F401  (fixture)


def rma(P: int, polls: dict) -> Expect:
    e = Expect(P)
    for r in range(P):
        e.call(r, "MPI_Win_allocate").call(r, "MPI_Win_free")
        e.call(r, "MPI_Win_fence", calls=4)
        e.call(r, "MPI_Put", 4).call(r, "MPI_Put", 16)
        e.call(r, "MPI_Get", recv=8).call(r, "MPI_Get", recv=20)
        e.call(r, "MPI_Accumulate", 12)
        e.call(r, "MPI_Win_lock", calls=3).call(r, "MPI_Win_unlock", calls=3)
        e.call(r, "MPI_Barrier")
    return e


def mpiio(P: int, polls: dict) -> Expect:
    e = Expect(P)
    for r in range(P):
        e.call(r, "MPI_File_open").call(r, "MPI_File_close")
        e.call(r, "MPI_File_write_at_all", 64).call(r, "MPI_File_read_at", recv=64)
        e.call(r, "MPI_File_write_at", 32).call(r, "MPI_File_read_at_all", recv=32)
        e.call(r, "MPI_File_sync", calls=4).call(r, "MPI_Barrier", calls=3)
    e.call(0, "MPI_File_delete")
    return e


PROGRAMS = {"rma": rma, "mpiio": mpiio}


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_exact_traffic(runner, impl, program):  # noqa: F811
    check_program(runner, impl, program, PROGRAMS[program])


def test_io_files_record_the_collective_open(runner, impl):  # noqa: F811
    """META io_files: the one file mpiio.c opened, with its aggregator hints as the
    MPI-IO layer reports them (ROMIO does; a hint it lacks is null)."""
    prof = runner.run(impl, "mpiio").profile
    files = prof.meta["io_files"]
    assert [f["name"] for f in files] == ["mpiio.dat"]
    hints = files[0]
    assert set(hints) == {"name", "cb_nodes", "cb_config_list", "romio_cb_write"}
    assert all(v is None or isinstance(v, str) for v in hints.values())
    if impl == "mpich":  # ROMIO
        assert int(hints["cb_nodes"]) >= 1 and hints["cb_config_list"]
