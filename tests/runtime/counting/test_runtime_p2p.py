"""Point-to-point programs under the runtime: exact calls, bytes, buckets and peers.

Conventions asserted here (docs/profile-format.md, runtime/wrappers/functions.py): a
send's bytes and its message to the peer are recorded by the call that starts
it (MPI_Send, MPI_Isend, each MPI_Start of a persistent send); a blocking
receive records the MPI_Status count (MPI_Recv, MPI_Sendrecv, MPI_Mrecv), a
nonblocking one its posted size when it is posted (MPI_Irecv, MPI_Start of a
persistent receive); completion, test and probe calls move nothing.
MPI_PROC_NULL moves 0 bytes (histogram bucket 0) and is no peer.
"""

from __future__ import annotations

import pytest

from profile_expect import (Expect, check_program, p2p_blocking, ring,  # noqa: F401  (fixture)
                            runner)



def p2p_nonblocking(P: int, polls: dict) -> Expect:
    e = Expect(P)
    for r in range(P):
        left, right = ring(P, r)
        to_right = [64, 256, 28, 400, 12, 4, 8, 20, 24]
        to_left = [256, 400]
        for n in to_right:
            e.call(r, "MPI_Isend", n).msg(r, right, n)
        for n in to_left:
            e.call(r, "MPI_Isend", n).msg(r, left, n)
        for n in (64, 256, 256, 28, 400, 400, 12, 4, 8, 20):
            e.call(r, "MPI_Irecv", recv=n)
        e.call(r, "MPI_Wait", calls=2).call(r, "MPI_Waitall").call(r, "MPI_Waitany", calls=2)
        for func in ("MPI_Waitsome", "MPI_Test", "MPI_Testall", "MPI_Testany", "MPI_Testsome"):
            e.poll(r, func, polls)
        e.call(r, "MPI_Request_free").call(r, "MPI_Recv", recv=24)
    return e


def p2p_persistent(P: int, polls: dict, iters: int = 5) -> Expect:
    e = Expect(P)
    for r in range(P):
        left, right = ring(P, r)
        e.call(r, "MPI_Send_init", calls=2).call(r, "MPI_Recv_init", calls=2)
        e.call(r, "MPI_Startall", 200, 200, calls=iters).call(r, "MPI_Waitall", calls=iters)
        e.call(r, "MPI_Start", 64, calls=iters).call(r, "MPI_Start", recv=64, calls=iters)
        e.call(r, "MPI_Wait", calls=2 * iters)
        e.call(r, "MPI_Request_free", calls=4)
        e.msg(r, right, 200, msgs=iters).msg(r, left, 64, msgs=iters)
        # C, on freed handles: 3 ints to left, from right, started twice
        e.call(r, "MPI_Send_init").call(r, "MPI_Recv_init").call(r, "MPI_Request_free", calls=2)
        e.call(r, "MPI_Startall", 12, 12, calls=2).call(r, "MPI_Waitall", calls=2)
        e.msg(r, left, 12, msgs=2)
    return e


def p2p_probe(P: int, polls: dict) -> Expect:
    e = Expect(P)
    e.call(0, "MPI_Probe", calls=P - 1)
    for s in range(1, P):
        e.call(0, "MPI_Recv", recv=4 * (s + 1)).call(0, "MPI_Recv", recv=4 * s)
        e.call(s, "MPI_Send", 4 * (s + 1)).call(s, "MPI_Send", 4 * s)
        e.msg(s, 0, 4 * (s + 1)).msg(s, 0, 4 * s)
    for r in range(P):
        left, right = ring(P, r)
        e.call(r, "MPI_Barrier", calls=2)
        for n in (36, 44, 52):
            e.call(r, "MPI_Isend", n).msg(r, right, n)
        e.call(r, "MPI_Wait", calls=4)
        e.call(r, "MPI_Mprobe").call(r, "MPI_Mrecv", recv=36).call(r, "MPI_Imrecv", recv=44)
        e.poll(r, "MPI_Improbe", polls).poll(r, "MPI_Iprobe", polls)
        e.call(r, "MPI_Recv", recv=52)
    return e


def proc_null(P: int, polls: dict) -> Expect:
    e = Expect(P)
    for r in range(P):
        up, down = r + 1 < P, r > 0
        e.call(r, "MPI_Send").call(r, "MPI_Recv")
        e.call(r, "MPI_Isend").call(r, "MPI_Irecv").call(r, "MPI_Waitall")
        e.call(r, "MPI_Sendrecv", 32 if up else 0, 32 if down else 0)
        e.call(r, "MPI_Sendrecv")  # 0 ints
        if up:
            e.msg(r, r + 1, 32).msg(r, r + 1, 0)
    return e


PROGRAMS = {f.__name__: f for f in (p2p_blocking, p2p_nonblocking, p2p_persistent, p2p_probe,
                                    proc_null)}


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_exact_traffic(runner, impl, program):  # noqa: F811
    check_program(runner, impl, program, PROGRAMS[program])
