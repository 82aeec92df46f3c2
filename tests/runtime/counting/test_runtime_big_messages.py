"""Messages of 2 GiB and more are counted exactly (issue 22, item 1).

MPI_Type_size and MPI_Get_count say MPI_UNDEFINED above INT_MAX bytes; the
runtime uses MPI_Type_size_x and MPI_Get_elements_x, and every byte counter,
histogram bucket and peer total is 64-bit. One run per MPI of
tests/programs/big_message.c and of its mpi_f08 twin big_message_f08.f90 at
2 ranks (about 4 GiB of memory per job; the jobs run one at a time): rank 0
sends rank 1 2^31 bytes as MPI_Type_contiguous(2^28, MPI_DOUBLE) x 1
(MPI_Send / MPI_Recv) and as MPI_DOUBLE x 2^28 (MPI_Send / MPI_Irecv).
"""

from __future__ import annotations

import pytest

import mpitest
from profile_expect import Expect, assert_profile, bucket, program_path, run_killable
from mpiscope import read

BIG = 2**31
NRANKS = 2


def big_message(P: int) -> Expect:
    e = Expect(P)
    e.call(0, "MPI_Send", BIG, calls=2).msg(0, 1, BIG, msgs=2)
    e.call(1, "MPI_Recv", recv=BIG).call(1, "MPI_Irecv", recv=BIG).call(1, "MPI_Wait")
    return e


@pytest.mark.parametrize("program", ["big_message", "big_message_f08"])
def test_two_gib_messages_counted_exactly(impl, tmp_path, program, user_lock):
    env = mpitest.mpi_env()
    # Copying 4 GiB through shared-memory fragments takes minutes; Open MPI's
    # default single copy (CMA) takes seconds.
    env.pop("OMPI_MCA_btl_vader_single_copy_mechanism", None)
    cmd = mpitest.mpiscope_cmd("run", "--dir", str(tmp_path), "--mpi", impl, "--",
                               *mpitest.launcher(impl, NRANKS),
                               program_path(impl, program))
    # One 4 GiB job at a time, whatever pytest-xdist (or this user's other suites) runs beside it.
    with user_lock("big-message"):
        rc, out, err = run_killable(cmd, tmp_path, env, timeout=600)
    assert rc == 0, err[-3000:]
    lines = sorted(line for line in out.splitlines() if " checksum " in line)
    # rank 1 saw 2^31 bytes twice with MPI_Get_elements_x (+ the last value, 7 and 8)
    assert lines == [f"{program} rank 0 checksum 0 ok",
                     f"{program} rank 1 checksum {2 * BIG + 15} ok"], out
    files = sorted(tmp_path.glob("*.mpiscope"))
    assert len(files) == 1, err[-3000:]
    prof = read(files[0])
    assert_profile(prof, big_message(NRANKS))
    assert bucket(BIG) == 32
    assert prof.ranks["on_node_bytes"][0] == 2 * BIG
