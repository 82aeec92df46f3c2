"""Collective programs under the runtime: exact calls, bytes and buckets per rank.

Convention asserted (docs/profile-format.md, runtime/wrappers/functions.py): bytes are
the sizes of the buffers the arguments describe. bytes_sent is what a rank's
send buffer holds for the operation (one block for Allgather and
Neighbor_allgather, a block per destination for Scatter at the root and the
all-to-alls); bytes_recv is what its receive buffer is to hold. A buffer
given as MPI_IN_PLACE counts 0. Collectives are not point-to-point peers.
MPISCOPE_SYNC barriers are tested in test_runtime_modes.py.
"""

from __future__ import annotations

import pytest

from profile_expect import Expect, check_program, coll_blocking, runner  # noqa: F401  (fixture)



def coll_inplace(P: int, polls: dict) -> Expect:
    e = Expect(P)
    for r in range(P):
        e.call(r, "MPI_Allreduce", 0, 28)
        e.call(r, "MPI_Reduce", 0 if r == 0 else 40, 40 if r == 0 else 0)
        e.call(r, "MPI_Allgather", 0, 12 * P)
        e.call(r, "MPI_Gather", 0 if r == P - 1 else 16, 16 * P if r == P - 1 else 0)
        e.call(r, "MPI_Scatter", 8 * P if r == 0 else 0, 0 if r == 0 else 8)
        e.call(r, "MPI_Alltoall", 0, 8 * P)
        e.call(r, "MPI_Reduce_scatter_block", 0, 12)
        e.call(r, "MPI_Scan", 0, 4)
    return e


def coll_nonblocking(P: int, polls: dict) -> Expect:
    e = Expect(P)
    for r in range(P):
        e.call(r, "MPI_Ibarrier")
        e.call(r, "MPI_Ibcast", 48 if r == 0 else 0, 0 if r == 0 else 48)
        e.call(r, "MPI_Ireduce", 12, 12 if r == 0 else 0)
        e.call(r, "MPI_Iallreduce", 8, 8)
        e.call(r, "MPI_Igather", 4, 4 * P if r == 0 else 0)
        e.call(r, "MPI_Iscatter", 16 * P if r == 0 else 0, 16)
        e.call(r, "MPI_Iallgather", 8, 8 * P)
        e.call(r, "MPI_Ialltoall", 12 * P, 12 * P)
        e.call(r, "MPI_Iscan", 4, 4)
        e.call(r, "MPI_Wait", calls=6).call(r, "MPI_Waitall")
    return e


def coll_neighbor(P: int, polls: dict) -> Expect:
    # A 1-D periodic ring: 2 neighbours in, 2 out (the same rank twice at P = 2).
    e = Expect(P)
    for r in range(P):
        e.call(r, "MPI_Neighbor_allgather", 12, 24)
        e.call(r, "MPI_Neighbor_alltoall", 16, 16)
        e.call(r, "MPI_Neighbor_allgatherv", 16, 32)
        e.call(r, "MPI_Neighbor_alltoallv", 16, 16)
        e.call(r, "MPI_Ineighbor_allgather", 24, 48)
        e.call(r, "MPI_Ineighbor_alltoall", 56, 56)
        e.call(r, "MPI_Wait", calls=2)
    return e


PROGRAMS = {f.__name__: f for f in (coll_blocking, coll_inplace, coll_nonblocking,
                                    coll_neighbor)}


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_exact_traffic(runner, impl, program):  # noqa: F811
    check_program(runner, impl, program, PROGRAMS[program])
