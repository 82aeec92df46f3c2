"""examples/pcg (Fortran, `use mpi` and `use mpi_f08` builds): self-checks
(every variant converges to the same solution, C-G follows the classic
residual history within round-off) and its signature in the profile (C-G
halves the allreduces, --prepost, --node-aware).
"""

from __future__ import annotations

import numpy as np
import pytest

import explainruns
from exampleapps import (assert_one_line_error, peer_matrix, per_rank, profiled, result,
                         result_fields, run_app)

BUILDS = ("pcg", "pcg_f08")


def history(proc) -> list[float]:
    return [float(ln.split()[3]) for ln in proc.stdout.splitlines() if ln.startswith("iter ")]


def test_all_variants_converge_to_the_same_line(impl, nranks):
    args = ("--grid", "48x40", "--tol", "1e-8")
    base = result(impl, nranks, "pcg", *args)
    fields = result_fields(base)
    assert float(fields["resid"]) < 1e-7  # the true residual ||b - Ax|| / ||b||
    # (The profile tests below compare more pairs of variants' lines.)
    runs = [("pcg", "cg", ("--prepost",)), ("pcg_f08", "classic", ("--node-aware",)),
            ("pcg_f08", "cg", ("--jitter", "20"))]
    for build, variant, extra in runs:
        assert result(impl, nranks, build, *args, "--variant", variant, *extra) == base, \
            (build, variant, extra)
    assert result(impl, 1, "pcg", *args, "--variant", "cg") == base


def test_cg_follows_classic_history_within_roundoff(impl, nranks):
    args = ("--grid", "40x36", "--tol", "0", "--maxiter", "25", "--history")
    classic = history(run_app(impl, nranks, "pcg", *args, "--variant", "classic"))
    cg = history(run_app(impl, nranks, "pcg_f08", *args, "--variant", "cg"))
    assert len(classic) == len(cg) == 25
    assert classic[-1] < classic[0] / 10
    assert cg == pytest.approx(classic, rel=1e-9)


@pytest.mark.parametrize("args,message", [
    (("--variant", "fast"), "--variant must be classic or cg"),
    (("--grid", "64x"), "--grid must look like 256x256"),
    (("--maxiter", "0"), "--maxiter must be an integer >= 1"),
    (("--jitter", "-3"), "--jitter must be a number of microseconds"),
    (("--procs", "3x7"), "does not match the number of ranks"),
    (("--procs", "1x2", "--grid", "1x1"), "fewer points than ranks"),
    (("--tol",), "option --tol needs a value"),
    (("--frobnicate",), "unknown option '--frobnicate'"),
])
def test_bad_input_is_one_line_error(impl, args, message):
    nranks = 2  # the error path is the same at any size; keep it cheap
    build = BUILDS[len(message) % 2]  # both builds, alternately
    proc = run_app(impl, nranks, build, *args, check=False)
    assert_one_line_error(proc, "pcg", message)


# ---- the signature in the profile ----------------------------------------

ITERS = 12  # --tol 0: exactly this many iterations


def _solve(impl, nranks, tmp_path, build, *args):
    prof, line = profiled(impl, nranks, build, "--grid", "32x24", "--tol", "0",
                          "--maxiter", ITERS, *args, outdir=tmp_path / "_".join((build,) + args))
    assert result_fields(line)["iters"] == str(ITERS)
    return prof, line


@pytest.mark.parametrize("build", BUILDS)
def test_cg_variant_halves_the_allreduces(impl, nranks, tmp_path, build):
    classic, line_classic = _solve(impl, nranks, tmp_path, build, "--variant", "classic")
    cg, line_cg = _solve(impl, nranks, tmp_path, build, "--variant", "cg")
    assert line_classic == line_cg
    n_classic = per_rank(classic, "calls", "MPI_Allreduce", region="solve")
    n_cg = per_rank(cg, "calls", "MPI_Allreduce", region="solve")
    np.testing.assert_array_equal(n_classic, 2 * ITERS)
    np.testing.assert_array_equal(n_cg, ITERS)
    # C-G's allreduce carries two doubles, classic's one.
    np.testing.assert_array_equal(per_rank(cg, "bytes_sent", "MPI_Allreduce", region="solve"),
                                  ITERS * 16)
    np.testing.assert_array_equal(per_rank(classic, "bytes_sent", "MPI_Allreduce",
                                           region="solve"), 2 * ITERS * 8)


def test_prepost_posts_receives_instead_of_blocking(impl, nranks, tmp_path):
    matvecs = ITERS + 1  # classic: one per iteration, one for the true residual
    late, _ = _solve(impl, nranks, tmp_path, "pcg", "--variant", "classic")
    early, _ = _solve(impl, nranks, tmp_path, "pcg", "--variant", "classic", "--prepost")
    np.testing.assert_array_equal(per_rank(late, "calls", "MPI_Recv", region="matvec"),
                                  4 * matvecs)
    np.testing.assert_array_equal(per_rank(late, "calls", "MPI_Irecv", region="matvec"), 0)
    np.testing.assert_array_equal(per_rank(early, "calls", "MPI_Irecv", region="matvec"),
                                  4 * matvecs)
    np.testing.assert_array_equal(per_rank(early, "calls", "MPI_Recv", region="matvec"), 0)
    # The same messages either way.
    np.testing.assert_array_equal(peer_matrix(late), peer_matrix(early))


def test_node_aware_sums_reduce_in_node_and_allreduce_among_leaders(impl, nranks, tmp_path):
    prof, _ = _solve(impl, nranks, tmp_path, "pcg_f08", "--variant", "cg", "--node-aware")
    leaders = np.zeros(nranks, bool)
    leaders[np.unique(prof.ranks["node"])] = True  # the lowest rank of each node
    np.testing.assert_array_equal(per_rank(prof, "calls", "MPI_Reduce", region="solve"), ITERS)
    np.testing.assert_array_equal(per_rank(prof, "calls", "MPI_Bcast", region="solve"), ITERS)
    np.testing.assert_array_equal(per_rank(prof, "calls", "MPI_Allreduce", region="solve"),
                                  np.where(leaders, ITERS, 0))


def spins(rank: int, iterations: range, jitter: float) -> np.ndarray:
    """Seconds rank spins after each halo update (examples/pcg/pcg.F90:spin)."""
    m = 2147483647
    out = []
    for it in iterations:
        h = (rank * 1000003 + it * 7919 + 1) % m
        h = h * 48271 % m * 48271 % m
        out.append(jitter * h / m)
    return np.array(out)


def test_jitter_is_spent_computing_and_shows_as_ragged_arrival(impl, nranks, tmp_path):
    # At most 4 ranks: their waits are compared with the injected raggedness,
    # and 16 ranks on 2 cores would add as much again of scheduler noise.
    n, jitter = min(nranks, 4), 0.01
    prof, _ = profiled(impl, n, "pcg", "--grid", "32x24", "--tol", "0", "--maxiter", ITERS,
                       "--jitter", int(jitter * 1e6), outdir=tmp_path, extra=("--sync",))
    spun = np.array([spins(r, range(1, ITERS + 1), jitter) for r in range(n)])  # classic
    # The spin is a wall-clock busy-wait outside MPI: compute time holds all of it.
    assert np.all(prof.rank_metric("compute") >= 0.99 * spun.sum(axis=1))
    # After each spin, every rank waits for the slowest, in MPI (the halo's
    # blocking MPI_Recv or the allreduce's sync barrier): n*max - sum per iteration.
    ragged = (n * spun.max(axis=0) - spun.sum(axis=0)).sum()
    waited = prof.rank_metric("mpi").sum()
    # (0.2, not 1: on a loaded 2-core machine a rank is also descheduled while
    # it spins, which evens arrivals out as often as it staggers them.)
    assert waited > 0.2 * ragged, (waited, ragged)
    np.testing.assert_array_equal(
        per_rank(prof, "calls", "MPI_Allreduce:sync", region="solve"), 2 * ITERS)


@pytest.mark.alone
def test_jitter_waits_in_the_allreduce_or_its_sync_barrier(impl, tmp_path):
    """docs/examples.md's claim, Worley's timing barriers: ranks leaving the halo update
    raggedly (--jitter spins after it) wait for the last one at the next allreduce;
    without --sync inside MPI_Allreduce (the "slow allreduce"), with --sync in the
    barrier before it (MPI_Allreduce:sync). 2 ranks, each bound to its own core: every
    halo exchange pairs them, so when the spin came before the halo (as it did) the
    blocking receives absorbed all of it and no lateness reached the allreduce.
    Lower bounds only: a collective cannot end on a rank before the later rank
    arrives, whatever else the scheduler adds."""
    n, jitter, iters = 2, 0.01, 40
    launch = explainruns.launcher(impl, n, *explainruns.BIND_CORE[impl])
    spun = np.array([spins(r, range(1, iters + 1), jitter) for r in range(n)])
    late = (spun.max(axis=0) - spun).sum(axis=1)     # each rank's wait for the other, planted
    args = ("--grid", "32x24", "--tol", "0", "--maxiter", iters, "--jitter", int(jitter * 1e6))
    plain, _ = profiled(impl, n, "pcg", *args, outdir=tmp_path / "plain", launch=launch)
    own = per_rank(plain, "time", "MPI_Allreduce", region="solve")
    assert np.all(own >= 0.5 * late - 0.02), (own, late)
    synced, _ = profiled(impl, n, "pcg", *args, outdir=tmp_path / "sync", extra=("--sync",),
                         launch=launch)
    sync = per_rank(synced, "time", "MPI_Allreduce:sync", region="solve")
    assert np.all(sync >= 0.5 * late - 0.02), (sync, late)
    assert sync.sum() >= 0.5 * late.sum() > 0.05, (sync, late)
