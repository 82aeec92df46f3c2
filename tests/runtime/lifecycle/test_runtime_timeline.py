"""The timeline (docs/runtime.md "Timeline"): per-rank time bins written at MPI_Finalize.

tests/programs/phases.c plants its phases with sleeps (timelineruns.py): the bins must
hold exactly the function table's time per kind however often their width doubled, the
time outside MPI, the bytes, one common grid for all ranks; summary mode the same reduced
over ranks per bin. Every program that assert_rank_sanity checks (profile_expect.py)
has its timeline totals checked too.
"""

from __future__ import annotations

import numpy as np

import timelineruns
from mpiscope import format as fmt
from profile_expect import assert_timeline_totals, runner, summary_records  # noqa: F401


def kind_totals(prof) -> dict[str, np.ndarray]:
    """Per function kind, per rank, the function records' time."""
    f = prof.funcs
    kinds = np.array(prof.function_kinds)[f["func"]]
    return {k: np.bincount(f["rank"][kinds == k], weights=f["time"][kinds == k],
                           minlength=prof.nranks) for k in set(kinds)}


def test_bins_hold_every_call_exactly_on_one_grid(impl):
    prof, _ = timelineruns.run(impl, timelineruns.BURSTS)
    tl = prof.timeline_bins
    P = prof.nranks
    assert tl.values.shape == (P, len(tl.rows), tl.bins)
    assert tl.rows == ["coll", "other", "compute", "bytes"]    # kinds in functions.KINDS order
    # A 1.95 s run outlasts 256 bins of the initial width, 2^20 ticks (~0.4 ms): the width
    # doubled at least three times, the memory did not grow.
    initial = 2**20 * prof.meta["seconds_per_tick"]
    assert tl.max_bins == 256 and tl.bins <= 256 and tl.bin_seconds >= 8 * initial * 0.999
    assert tl.bins * tl.bin_seconds >= tl.end_seconds > (tl.bins - 1) * tl.bin_seconds
    assert np.isclose(tl.end_seconds, prof.ranks["wall"].max(), rtol=1e-12)
    assert 0 <= tl.clock_offset_max < 0.5
    assert_timeline_totals(prof)
    # time outside MPI: each rank's wall time minus its MPI time, bin by bin
    compute = tl.row("compute")
    assert np.all(compute >= 0)
    assert np.allclose(compute.sum(axis=1), prof.ranks["wall"] - prof.ranks["mpi"], rtol=1e-9)
    # no bin holds more than its width (one thread per rank)
    assert np.all(tl.row("mpi") + compute <= tl.bin_seconds * (1 + 1e-9))
    # bytes: every call's, in the bin where it ended
    f = prof.funcs
    sent_recv = np.bincount(f["rank"], weights=(f["bytes_sent"] + f["bytes_recv"]).astype(float),
                            minlength=P)
    assert np.array_equal(tl.row("bytes").sum(axis=1), sent_recv)
    assert np.array_equal(tl.row("bytes"), np.round(tl.row("bytes")))
    # The planted start: rank 0 works 400 ms while the others wait in MPI_Bcast.
    first = slice(0, int(0.35 / tl.bin_seconds))
    assert tl.row("mpi")[0, first].sum() < 0.01
    assert np.all(tl.row("coll")[1:, first].sum(axis=1) > 0.3)


def test_summary_mode_reduces_each_bin(impl):
    summ, _ = timelineruns.run(impl, timelineruns.BURSTS, mode="summary")
    full, _ = timelineruns.run(impl, timelineruns.BURSTS)
    tl = summ.timeline_bins
    assert summ.is_summary and tl.values is None and len(summ.ranks) == 0
    assert tl.rows == ["coll", "other", "mpi", "compute", "bytes"]
    assert len(summ.timeline) == len(tl.rows) * tl.bins      # independent of the ranks
    P = summ.nranks
    for row, s in tl.stats.items():
        assert np.all(s["min"] <= s["sum"] / P * (1 + 1e-12) + 1e-15), row
        assert np.all(s["sum"] / P <= s["max"] * (1 + 1e-12) + 1e-15), row
        assert np.all(s["min_rank"] < P) and np.all(s["max_rank"] < P)
        assert np.all(s["nonzero"] <= P)
    # per kind, the bins' sums over ranks are the SUMMARY's function time (same run)
    recs = summary_records(summ)
    kinds = dict(zip(summ.functions, summ.function_kinds))
    for kind in ("coll", "other"):
        want = sum(v[2] for (func, _, metric), v in recs.items()
                   if func and metric == "time" and kinds[func] == kind)
        assert np.isclose(tl.stats[kind]["sum"].sum(), want, rtol=1e-9), kind
    assert np.allclose(tl.stats["mpi"]["sum"], tl.stats["coll"]["sum"] + tl.stats["other"]["sum"])
    # bytes do not depend on timing: the full run moved the same
    assert tl.stats["bytes"]["sum"].sum() == full.timeline_bins.row("bytes").sum()
    # where some rank waits a whole bin, rank 0's start and bursts (1.15 s of the 1.95 s run)
    # make rank 0 the one with the least MPI time (a loaded machine may add a few more)
    busy = tl.stats["mpi"]["max"] > 0.95 * tl.bin_seconds
    assert busy.sum() * tl.bin_seconds > 0.5
    assert np.mean(tl.stats["mpi"]["min_rank"][busy] == 0) > 0.8
    # the same reduction of the full run's bins, by the Python model of the runtime
    from mpiscope.testing import summary_rows
    assert summary_rows(full.timeline_bins.rows) == tl.rows


def test_threads_sum_their_bins(runner, impl):  # noqa: F811
    run = runner.run(impl, "threads")
    run.assert_ok()
    prof = run.profile
    assert_timeline_totals(prof)           # both threads' bins, merged at MPI_Finalize
    mpi = prof.timeline_bins.row("mpi")
    assert np.allclose(mpi.sum(axis=1), prof.ranks["mpi"], rtol=1e-9)


def test_off_writes_no_timeline(impl):
    prof, _ = timelineruns.run(impl, timelineruns.STEADY, env=(("MPISCOPE_TIMELINE_BINS", "0"),))
    assert prof.timeline_bins is None and "timeline" not in prof.meta and not len(prof.timeline)
    settings = prof.meta["settings"]
    assert settings.get("MPISCOPE_TIMELINE_BINS", settings.get("TIMELINE_BINS")) == 0
    assert fmt.SEC_TIMELINE == 15
