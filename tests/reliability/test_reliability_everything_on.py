"""Everything on at once: the three mini-apps (stencil in C, pcg in Fortran,
zonal) under `mpiscope run --sync --mode summary`, with their MPI_Pcontrol
regions, print the RESULT line of a run on one rank without the runtime, and
the summary's exact records (calls and bytes: min, max, sum, minPE, maxPE
over ranks) are the ones the apps' own parameters give.

CI runs it at 64 Open MPI ranks (oversubscribed: about 25 s for the three
apps on 2 loaded cores) and 2 MPICH ranks (MPICH busy-polls);
perf/reliability/everything_on.py runs the same checks at any rank count
(docs/reliability.md)."""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np

from exampleapps import expected_halo_traffic, profiled, result
from profile_expect import summary_records

STEPS = 4        # stencil and zonal time steps
PCG_ITERS = 12   # --tol 0: exactly this many iterations
FLAGS = ("--sync", "--mode", "summary")


def grid_of(n: int) -> tuple[int, int]:
    """px x py = n, as square as it goes (px >= py)."""
    py = max(d for d in range(1, math.isqrt(n) + 1) if n % d == 0)
    return n // py, py


def stats(values) -> tuple:
    """(min, max, sum, minPE, maxPE) over ranks as the summary keeps them
    (ties: the lowest rank)."""
    v = np.asarray(values, np.float64)
    return (v.min(), v.max(), v.sum(), int(v.argmin()), int(v.argmax()))


def assert_records(prof, want: dict) -> None:
    """want: (function, region, metric) -> per-rank values."""
    got = summary_records(prof)
    assert prof.mode == "summary"
    for key, values in want.items():
        assert key in got, f"no summary record {key}"
        assert got[key][:5] == stats(values), (key, got[key], stats(values))


def check_stencil(impl: str, n: int, tmp: Path) -> None:
    px, py = grid_of(n)
    grid = (8 * px, 6 * py)
    args = ("--grid", f"{grid[0]}x{grid[1]}", "--steps", STEPS, "--halo", "sere")
    prof, line = profiled(impl, n, "stencil", *args, "--procs", f"{px}x{py}",
                          outdir=tmp / "stencil", extra=FLAGS)
    assert line == result(impl, 1, "stencil", *args)
    _, nbytes = expected_halo_traffic(grid, (px, py), STEPS)
    calls = np.full(n, 2 * 2 * STEPS)    # one MPI_Sendrecv per direction per dimension per step
    assert_records(prof, {
        ("MPI_Sendrecv", "halo", "calls"): calls,
        ("MPI_Sendrecv", "halo", "bytes_sent"): nbytes.sum(axis=1),
        ("MPI_Sendrecv", "halo", "bytes_recv"): nbytes.sum(axis=0),
    })


def check_pcg(impl: str, n: int, tmp: Path) -> None:
    px, py = grid_of(n)
    nx, ny = 4 * px, 3 * py
    args = ("--grid", f"{nx}x{ny}", "--tol", "0", "--maxiter", PCG_ITERS, "--variant", "classic")
    prof, line = profiled(impl, n, "pcg", *args, "--procs", f"{px}x{py}", outdir=tmp / "pcg",
                          extra=FLAGS)
    assert line == result(impl, 1, "pcg", *args)
    matvecs = PCG_ITERS + 1   # one per iteration, one for the true residual
    # Halo bytes each rank sends: nyl = 3 doubles to each x-neighbour, nxl = 4 to each y-neighbour.
    sent = np.zeros(n)
    for r in range(n):
        cx, cy = r % px, r // px
        sent[r] = 8 * matvecs * (3 * ((cx > 0) + (cx < px - 1)) + 4 * ((cy > 0) + (cy < py - 1)))
    every = np.ones(n)
    assert_records(prof, {
        ("MPI_Allreduce", "solve", "calls"): 2 * PCG_ITERS * every,
        ("MPI_Allreduce", "solve", "bytes_sent"): 2 * PCG_ITERS * 8 * every,
        ("MPI_Allreduce:sync", "solve", "calls"): 2 * PCG_ITERS * every,
        ("MPI_Recv", "matvec", "calls"): 4 * matvecs * every,
        ("MPI_Isend", "matvec", "calls"): 4 * matvecs * every,
        ("MPI_Isend", "matvec", "bytes_sent"): sent,
    })


def check_zonal(impl: str, n: int, tmp: Path) -> None:
    nlon, nlat, nlev = 16, 2 * n, 3
    args = ("--grid", f"{nlon}x{nlat}x{nlev}", "--steps", STEPS, "--variant", "gather")
    prof, line = profiled(impl, n, "zonal", *args, "--procs", f"1x{n}", outdir=tmp / "zonal",
                          extra=FLAGS)
    assert line == result(impl, 1, "zonal", *args)
    patch = nlon * (nlat // n) * nlev * 8           # each rank's bytes per step
    root = np.zeros(n)
    root[0] = STEPS * patch * n                     # rank 0 receives the whole field
    every = np.ones(n)
    assert_records(prof, {
        ("MPI_Gatherv", "zonal", "calls"): STEPS * every,
        ("MPI_Gatherv:sync", "zonal", "calls"): STEPS * every,
        ("MPI_Gatherv", "zonal", "bytes_sent"): STEPS * patch * every,
        ("MPI_Gatherv", "zonal", "bytes_recv"): root,
    })


CHECKS = {"stencil": check_stencil, "pcg": check_pcg, "zonal": check_zonal}


def check_all(impl: str, n: int, tmp: Path) -> dict[str, float]:
    """Every app at n ranks; the seconds each took (its runs with and without the runtime)."""
    seconds = {}
    for name, check in CHECKS.items():
        start = time.monotonic()
        check(impl, n, tmp)
        seconds[name] = round(time.monotonic() - start, 1)
    return seconds


RANKS = {"openmpi": 64, "mpich": 2}


def test_mini_apps_exact_with_sync_regions_and_summary(impl, tmp_path):
    check_all(impl, RANKS[impl], tmp_path)
