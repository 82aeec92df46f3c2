"""Bytes that never moved are not counted (issue 22, item 3).

A receive whose cancellation succeeds (MPI_Test_cancelled true on its
completion status) takes its posted size back, whichever completion call
(MPI_Wait, MPI_Waitall with MPI_STATUSES_IGNORE, MPI_Test) sees it; a cancel
that comes too late (the message already matched) leaves it counted.
Blocking MPI-IO reads count what the status says was read: 100 ints asked at
the end of a file of 2 ints count 8 bytes, not 400. docs/runtime.md ("Bytes")
says where the requested size is still used.
"""

from __future__ import annotations

from profile_expect import Expect, check_program, runner  # noqa: F401  (fixture)


def cancel_recv(P: int, polls: dict) -> Expect:
    e = Expect(P)
    for r in range(P):
        e.call(r, "MPI_Irecv", recv=0, calls=4)      # 3 cancelled + 1 from MPI_PROC_NULL
        e.call(r, "MPI_Irecv", recv=400)             # matched before its MPI_Cancel
        e.call(r, "MPI_Cancel", calls=4)
        e.call(r, "MPI_Wait", calls=2).call(r, "MPI_Waitall").poll(r, "MPI_Test", polls)
        e.call(r, "MPI_Send", 40).msg(r, r, 40)
    return e


def short_read(P: int, polls: dict) -> Expect:
    e = Expect(P)
    for r in range(P):
        e.call(r, "MPI_File_open").call(r, "MPI_File_close").call(r, "MPI_File_delete")
        e.call(r, "MPI_File_write_at", 8)
        e.call(r, "MPI_File_read_at", recv=8, calls=2)
        e.call(r, "MPI_File_read", recv=8).call(r, "MPI_File_read", recv=0)
        e.call(r, "MPI_File_read_at_all", recv=4)
    return e


def test_cancelled_receives_count_nothing(runner, impl):  # noqa: F811
    check_program(runner, impl, "cancel_recv", cancel_recv)


def test_short_reads_count_what_was_read(runner, impl):  # noqa: F811
    check_program(runner, impl, "short_read", short_read)
