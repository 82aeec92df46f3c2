"""Threads at every MPI thread level under the runtime (tests/programs/threads_levels.c):
four threads per rank doing point-to-point, collectives, RMA and nonblocking
point-to-point on their own communicators. Counts and bytes exact, every
thread counted, the window's accumulates all arrive (a lost update fails the
program's own check), output identical to the run without the runtime.
perf/reliability/threads_repeat.py runs MPI_THREAD_MULTIPLE 100 times in a row."""

from __future__ import annotations

import pytest

from profile_expect import Expect, assert_profile, check_program, ring, runner  # noqa: F401

P2P, COLL, RMA, NB = 40, 30, 25, 35  # iterations, as in threads_levels.c


def threads_levels(P: int, polls: dict) -> Expect:
    e = Expect(P)
    for r in range(P):
        left, right = ring(P, r)
        e.call(r, "MPI_Sendrecv", 128, 128, calls=P2P).msg(r, right, 128, msgs=P2P)
        e.call(r, "MPI_Allreduce", 16, 16, calls=COLL)
        e.call(r, "MPI_Bcast", 24 if r == 0 else 0, 0 if r == 0 else 24, calls=COLL)
        e.call(r, "MPI_Win_allocate").call(r, "MPI_Barrier").call(r, "MPI_Win_free")
        e.call(r, "MPI_Win_fence", calls=RMA + 1).call(r, "MPI_Accumulate", 4, calls=RMA)
        e.call(r, "MPI_Irecv", recv=32, calls=NB).call(r, "MPI_Isend", 32, calls=NB)
        e.msg(r, left, 32, msgs=NB)
        e.call(r, "MPI_Waitall", calls=NB)
    return e


# Threads that call MPI: the main thread (MPI_Init, the duplicates, the window)
# and the four workers; funneled: the main thread alone.
LEVELS = {"multiple": 5, "serialized": 5, "funneled": 1}


@pytest.mark.parametrize("level", sorted(LEVELS))
def test_thread_level_exact(runner, impl, level):  # noqa: F811
    prof = check_program(runner, impl, "threads_levels", threads_levels, level,
                         threads=LEVELS[level])
    assert prof.meta["argv"][1] == level


def test_thread_multiple_repeated(runner, impl, tmp_path):  # noqa: F811
    """Three more fresh MPI_THREAD_MULTIPLE runs: a race that shows one time in a
    few shows here; the 100-run loop is perf/reliability/threads_repeat.py."""
    for i in range(3):
        (tmp_path / str(i)).mkdir()
        run = runner.run(impl, "threads_levels", "multiple", outdir=str(tmp_path / str(i)))
        run.assert_ok()
        assert_profile(run.profile, threads_levels(run.nranks, {}))
