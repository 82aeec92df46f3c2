"""Ways of running the runtime: summary mode, MPISCOPE_SYNC, plain LD_PRELOAD,
linking with -lmpiscope, and the never-overwrite rule for file names."""

from __future__ import annotations

import hashlib

import pytest

from mpiscope import format as fmt
from mpiscope import native, read
from profile_expect import (HUNG, Expect, assert_one_node, assert_profile, assert_rank_sanity,
                            assert_summary_agrees, coll_blocking, observed_funcs, p2p_blocking,
                            regions, runner, setting)  # noqa: F401  (fixture)


@pytest.mark.parametrize("program", ["coll_blocking", "regions", "threads"])
def test_summary_agrees_with_full(runner, impl, program):  # noqa: F811
    full_run = runner.run(impl, program)
    summary_run = runner.run(impl, program, mode="summary")
    full_run.assert_ok()
    summary_run.assert_ok()
    assert summary_run.results == full_run.results
    assert_summary_agrees(full_run.profile, summary_run.profile)


SYNC_PROGRAMS = {"coll_blocking": coll_blocking, "regions": regions}


@pytest.mark.parametrize("program", sorted(SYNC_PROGRAMS))
def test_sync_records_barrier_time_without_changing_counts(runner, impl, program):  # noqa: F811
    """MPISCOPE_SYNC=1 (mpiscope run --sync): one `<coll>:sync` record per blocking
    collective call, in the collective's region, sync time > 0 on every rank,
    every other count unchanged."""
    run = runner.run(impl, program, sync=True)
    plain = runner.run(impl, program, how="plain")
    run.assert_ok()
    assert run.results == plain.results
    prof = run.profile
    assert prof.flags & fmt.FLAG_SYNC
    assert setting(prof, "SYNC") in (1, True, "1")
    e = SYNC_PROGRAMS[program](prof.nranks, {})
    kinds = dict(zip(prof.functions, prof.function_kinds))
    for (rank, func, region), (calls, _, _) in list(e.funcs.items()):
        if kinds[func] == "coll":
            e.call(rank, f"{func}:sync", calls=calls, region=region)
            assert kinds[f"{func}:sync"] == "sync"
    assert_profile(prof, e)
    assert_rank_sanity(prof, sync=True)  # rank.sync = the `:sync` records' time, > 0


def nbx(P: int, polls: dict) -> Expect:
    e = Expect(P)
    for r in range(P):
        if r > 0:
            e.call(r, "MPI_Issend", 8).msg(r, r - 1, 8)
        if r < P - 1:
            e.call(r, "MPI_Recv", recv=8)
        e.call(r, "MPI_Ibarrier").poll(r, "MPI_Iprobe", polls).poll(r, "MPI_Test", polls)
    return e


def test_sync_never_blocks_a_nonblocking_collective(runner, impl):  # noqa: F811
    """MPISCOPE_SYNC=1 times barriers before blocking collectives only: a barrier
    before MPI_Ibarrier would deadlock the NBX exchange (tests/programs/nbx.c)."""
    run = runner.run(impl, "nbx", sync=True, timeout=45)
    assert run.rc != HUNG, "nbx hung under MPISCOPE_SYNC=1 (a barrier before MPI_Ibarrier?)"
    run.assert_ok()
    prof = run.profile
    assert prof.flags & fmt.FLAG_SYNC
    assert_profile(prof, nbx(prof.nranks, run.polls))


def test_no_sync_records_by_default(runner, impl):  # noqa: F811
    prof = runner.run(impl, "coll_blocking").profile
    assert not prof.flags & fmt.FLAG_SYNC
    used = {prof.functions[int(f)] for f in prof.funcs["func"]}
    assert not any(f.endswith(":sync") for f in used)


def test_ld_preload_directly(runner, impl):  # noqa: F811
    """`LD_PRELOAD=.../libmpiscope.so mpirun ...` without mpiscope run: the same profile."""
    run = runner.run(impl, "p2p_blocking", how="preload")
    plain = runner.run(impl, "p2p_blocking", how="plain")
    run.assert_ok()
    assert run.results == plain.results
    prof = run.profile  # written in the current directory
    assert_profile(prof, p2p_blocking(prof.nranks, {}))
    assert_rank_sanity(prof)
    assert_one_node(prof)


# Every setting that adds work around the calls: sampling's timers (the setting's own parse
# once set errno to 0 after MPI_Init), call sites' unwinding, the timeline, summary mode.
ERRNO_SETTINGS = {"default": {}, "sampled": {"MPISCOPE_SAMPLE": "1000"},
                  "deep-sites": {"MPISCOPE_CALLSITE_DEPTH": "8"},
                  "summary": {"MPISCOPE_MODE": "summary", "MPISCOPE_SYNC": "1"}}


@pytest.mark.parametrize("how", sorted(ERRNO_SETTINGS))
def test_program_errno_is_the_mpis_alone(runner, impl, how):  # noqa: F811
    """errno after MPI_Init, MPI_Pcontrol, communicator calls and MPI_Finalize is what the
    MPI left (or the program's own value), as without the runtime (tests/programs/errno_kept.c)."""
    run = runner.run(impl, "errno_kept", how="preload", env=ERRNO_SETTINGS[how])
    plain = runner.run(impl, "errno_kept", how="plain")
    run.assert_ok()
    plain.assert_ok()
    lines = [x for x in plain.results if " errno after Init " in x]
    assert len(lines) == plain.nranks
    assert run.results == plain.results
    assert run.profile.nranks == plain.nranks


def linked_ring(P: int) -> Expect:
    e = Expect(P)
    for r in range(P):
        e.call(r, "MPI_Sendrecv", 16, 16, calls=3).msg(r, (r + 1) % P, 16, msgs=3)
        e.call(r, "MPI_Allreduce", 8, 8)
    return e


def test_linked_program_writes_a_profile_without_preload(runner, impl):  # noqa: F811
    """Linked with -lmpiscope: the shared library is found as any other (here through
    LD_LIBRARY_PATH, as the install does not set an rpath); no LD_PRELOAD."""
    lib = str(native.runtime_library(impl).parent)
    run = runner.run(impl, "linked_ring", how="plain", env={"LD_LIBRARY_PATH": lib,
                                                           "LD_PRELOAD": ""})
    run.assert_ok()
    prof = run.profile
    assert_profile(prof, linked_ring(prof.nranks))
    assert_rank_sanity(prof)


def _job_id_args(impl: str, job: str) -> tuple:
    # Given to the ranks only: a SLURM_JOB_ID in mpirun's own environment would
    # make it look for a Slurm allocation.
    return ("-x", f"SLURM_JOB_ID={job}") if impl == "openmpi" else ("-genv", "SLURM_JOB_ID", job)


def test_existing_profile_is_never_overwritten(runner, impl, tmp_path):  # noqa: F811
    """Two runs with the same job id: the second gets `<prog>.<job>.1.mpiscope`."""
    job = f"h7same{impl}"
    first = runner.run(impl, "hello", outdir=str(tmp_path), launcher_args=_job_id_args(impl, job))
    assert first.rc == 0, first.stderr
    name = tmp_path / f"hello.{job}.mpiscope"
    assert [p.name for p in tmp_path.glob("*.mpiscope")] == [name.name]
    digest = hashlib.sha256(name.read_bytes()).hexdigest()
    second = runner.run(impl, "hello", outdir=str(tmp_path), launcher_args=_job_id_args(impl, job),
                        fresh=True)
    assert second.rc == 0, second.stderr
    assert sorted(p.name for p in tmp_path.glob("*.mpiscope")) == \
        [f"hello.{job}.1.mpiscope", name.name]
    assert hashlib.sha256(name.read_bytes()).hexdigest() == digest
    for path in tmp_path.glob("*.mpiscope"):
        prof = read(path)
        assert prof.meta["job_id"] == job
        calls = observed_funcs(prof)
        assert all(calls[(r, "MPI_Barrier", "")][0] == 1 for r in range(prof.nranks))
