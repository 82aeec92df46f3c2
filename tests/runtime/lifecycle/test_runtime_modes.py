"""Ways of running the runtime: summary mode, MPISCOPE_SYNC, plain LD_PRELOAD,
linking with -lmpiscope, and the never-overwrite rule for file names."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from mpiscope import format as fmt
from mpiscope import native, read
from mpiscope.report.environment import env_values
from profile_expect import (HUNG, Expect, assert_one_node, assert_profile, assert_rank_sanity,
                            coll_blocking, observed_funcs, p2p_blocking, region_name, regions,
                            runner, setting, summary_records)  # noqa: F401  (fixture)

# Metrics whose values do not depend on timing: equal in any two runs of a program.
EXACT_RANK_METRICS = {"on_node_msgs", "on_node_bytes", "off_node_msgs", "off_node_bytes",
                      "ncpus", "threads", "overlap", "unbound", "oversub", "load"}
EXACT_FUNC_METRICS = {"calls", "bytes_sent", "bytes_recv"}


def reduce_full(prof) -> dict:
    """What summary mode must hold, computed from a full-mode profile with numpy:
    (function name or None, region name, metric) -> (min, max, sum, minPE, maxPE, nonzero);
    a rank without a record counts 0; ties go to the lowest rank."""
    P = prof.nranks
    out = {}

    def entry(values):
        values = np.asarray(values, dtype=np.float64)
        return (values.min(), values.max(), values.sum(), int(values.argmin()),
                int(values.argmax()), int(np.count_nonzero(values)))

    r = prof.ranks
    for metric in fmt.RANK_METRICS:
        values = r["wall"] - r["mpi"] if metric == "compute" else r[metric]
        out[(None, "", metric)] = entry(values)
    for metric, values in env_values(prof).items():  # the ENV record's values
        out[(None, "", metric)] = entry(values)
    names = prof.functions
    for rec_key in {(int(f["func"]), int(f["region"])) for f in prof.funcs}:
        sel = prof.funcs[(prof.funcs["func"] == rec_key[0]) & (prof.funcs["region"] == rec_key[1])]
        for metric in fmt.FUNC_METRICS:
            values = np.zeros(P)
            np.add.at(values, sel["rank"].astype(np.int64), sel[metric].astype(np.float64))
            out[(names[rec_key[0]], region_name(prof, rec_key[1]), metric)] = entry(values)
    return out



@pytest.mark.parametrize("program", ["coll_blocking", "regions", "threads"])
def test_summary_agrees_with_full(runner, impl, program):  # noqa: F811
    full_run = runner.run(impl, program)
    summary_run = runner.run(impl, program, mode="summary")
    full_run.assert_ok()
    summary_run.assert_ok()
    assert summary_run.results == full_run.results
    full, summ = full_run.profile, summary_run.profile
    assert (summ.mode, summ.nranks) == ("summary", full.nranks)
    assert len(summ.ranks) == len(summ.funcs) == len(summ.peers) == 0
    want, got = reduce_full(full), summary_records(summ)
    assert set(got) == set(want)
    P = full.nranks
    for key, (mn, mx, total, min_pe, max_pe, nonzero) in got.items():
        if key[2] in EXACT_RANK_METRICS or key[2] in EXACT_FUNC_METRICS:
            assert (mn, mx, total, min_pe, max_pe, nonzero) == want[key], key
        else:  # a time: another run, so only its shape can be compared
            # (compute = wall - mpi is negative where threads overlapped in MPI)
            avg, eps = total / P, 1e-12 * max(abs(mn), abs(mx)) + 1e-15
            assert mn - eps <= avg <= mx + eps, key
            assert mn >= 0 or key[2] == "compute", key
            assert 0 <= min_pe < P and 0 <= max_pe < P, key
            assert (nonzero == P) == (want[key][5] == P) or key[2] in (
                "sync", "wait", "finalize", "cpu_time"), key
    # HIST: one record per (function, region, bucket), summed over ranks.
    assert np.all(summ.hist["rank"] == fmt.ALL_RANKS)
    names_f, names_s = full.functions, summ.functions
    hist_full, hist_summ = {}, {}
    for h in full.hist:
        k = (names_f[int(h["func"])], region_name(full, int(h["region"])), int(h["bucket"]))
        hist_full[k] = hist_full.get(k, 0) + int(h["count"])
    for h in summ.hist:
        k = (names_s[int(h["func"])], region_name(summ, int(h["region"])), int(h["bucket"]))
        assert k not in hist_summ
        hist_summ[k] = int(h["count"])
    assert hist_summ == hist_full


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
