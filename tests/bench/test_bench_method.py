"""The p2p kernel's method against the OSU method, and its numbers against each other.

The reference is `bench/osu_method.c`, a minimal program written from the OSU
micro-benchmarks' documented method that shares no code with the kernels
(separate send and receive buffers, as applications have). On a machine other
jobs load (2 cores shared by many test suites), one timing decides nothing:
every comparison uses fastest batches (short ones, so that some fall between
the other jobs' time slices), over alternating runs, and ratios; a comparison
that misses is measured again (the samples pooled), so only a difference that
persists fails.
"""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

import mpitest
from mpiscope import native
from mpiscope.bench import results

# the kernel's timings against the reference's: run alone (conftest._machine_share)
pytestmark = pytest.mark.alone

MIB = 1 << 20


def kernel_rows(impl: str, tmp_path: Path, name: str, *args: str) -> dict:
    """`mpiscope bench p2p ARGS` through the driver, 2 ranks on one node."""
    out = tmp_path / f"{name}.json"
    cmd = mpitest.mpiscope_cmd("bench", "p2p", "--locality", "on-node", *args, "-o", str(out),
                               "--force", "--", *mpitest.launcher(impl, 2))
    mpitest.run(cmd, cwd=tmp_path, timeout=180)
    res = results.load(out)
    assert res["partial"] is False
    return res


def reference(impl: str, test: str, size: int, iters: int,
              batches: int = 5) -> dict[int, tuple[float, float]]:
    """The OSU-method reference: {size: (OSU mean, fastest batch)}."""
    prog = str(native.program(impl, "bench-reference/osu_method"))
    cmd = [*mpitest.launcher(impl, 2), prog, test, str(size), str(size),
           str(iters), "2", str(iters), "2", str(batches)]
    out = mpitest.run(cmd, timeout=180).stdout
    rows = [line.split() for line in out.splitlines() if line[:1].isdigit()]
    return {int(s): (float(m), float(b)) for s, m, b in rows}


def test_1mib_latency_matches_a_separate_buffer_pingpong(impl, tmp_path):
    """The one-buffer mistake made 1 MiB on-node latency 1.4-5x too slow; it cannot return.

    Per run, each side's fastest batch of 10 round trips is its least disturbed figure.
    Across runs this VM's figure falls into one of three modes that last a whole run,
    whichever program runs and however the ranks are bound: about 50 us (rare), 120-165 us
    (most runs) and 500-630 us (one run in four; measured 26 Nov 2026, 24 runs of the
    reference alone). A median of six runs landed in different modes on the two sides, and
    within the common mode two runs differ by up to 20 %. So each side's lower quartile over
    alternating runs (the common mode unless most runs were slow) is compared, with a bound
    (0.8-1.25) that the mistake, slower in every run, still breaks.
    """
    iters, batches = 200, 20
    kernel_best, ref_best = [], []

    def ratio() -> float:
        q = len(kernel_best) // 4
        return sorted(kernel_best)[q] / sorted(ref_best)[q]

    for pair in range(12):  # alternate: load that comes and goes hits both alike
        res = kernel_rows(impl, tmp_path, "lat", "--tests", "latency", "--min-size", "1M",
                          "--max-size", "1M", "--iters-large", str(iters), "--skip-large",
                          "2", "--batches", str(batches))
        (row,) = results.rows(res, "p2p", size=MIB)
        assert row["method"] == "osu_latency" and row["iters"] == iters
        kernel_best.append(row["latency_best_us_avg"])
        ref_best.append(reference(impl, "latency", MIB, iters, batches)[MIB][1])
        if pair >= 3 and 0.8 <= ratio() <= 1.25:
            break
    assert 0.8 <= ratio() <= 1.25, (kernel_best, ref_best)


# The copy-bound end: a window's or two directions' bandwidth over one message at a time.
AGREE = 0.75


def test_bandwidth_methods_agree_with_each_other(impl, tmp_path):
    """Bandwidth rises with size to a plateau, which a window and two directions reach too.

    Per size the best over runs of each method's fastest batch (1-2 iterations
    each): the least disturbed figure, which other load can only lower.
    """
    args = ("--tests", "latency,bw,bibw", "--min-size", "1", "--max-size", "1M",
            "--iters", "400", "--iters-large", "40", "--bw-iters", "40", "--bw-skip", "2",
            "--bw-iters-large", "20", "--bw-skip-large", "1", "--batches", "20")
    best: dict[str, dict[int, float]] = {"p2p": {}, "p2p_bw": {}, "p2p_bibw": {}}
    for attempt in range(4):
        res = kernel_rows(impl, tmp_path, f"bw{attempt}", *args)
        for table, seen in best.items():
            for r in results.rows(res, table):
                seen[r["size"]] = max(seen.get(r["size"], 0.0), r["bandwidth_best_MBps_avg"])
        for r in results.rows(res, "p2p_bw") + results.rows(res, "p2p_bibw"):
            assert r["window"] == 64 and r["iters"] == (40 if r["size"] <= 8192 else 20)
        sizes = sorted(best["p2p_bw"])
        assert sizes == [1 << k for k in range(21)] == sorted(best["p2p"]) == \
            sorted(best["p2p_bibw"])
        pp, win, bi = best["p2p"], best["p2p_bw"], best["p2p_bibw"]
        big = sizes[-3:]  # 256 KiB .. 1 MiB: the copy-bound end
        checks = {
            # 1-4 B are latency-bound, 64-256 KiB copy-bound: bandwidth grows many-fold ...
            "rise": statistics.median(pp[s] for s in sizes[16:19]) /
                    statistics.median(pp[s] for s in sizes[:3]),
            # ... to a plateau: the largest sizes within a factor 3 of each other.
            "plateau": max(pp[s] for s in big) / min(pp[s] for s in big),
            "window": statistics.median(win[s] for s in big) /
                      statistics.median(pp[s] for s in big),
            "bidirectional": statistics.median(bi[s] for s in big) /
                             statistics.median(win[s] for s in big),
        }
        ok = (checks["rise"] > 10 and checks["plateau"] < 3 and checks["window"] >= AGREE
              and checks["bidirectional"] >= AGREE)
        if ok:
            break
    assert checks["rise"] > 10 and checks["plateau"] < 3, checks
    # At the copy-bound end every method meets the same memory-copy ceiling: a window of
    # 64 messages in flight, or two directions at once, moves about what one message at a
    # time does. Not more on shared memory, and somewhat less: 64 MiB in flight spill the
    # caches a ping-pong's one buffer stays in (quiet machine, Open MPI: 0.91 and 0.85).
    assert checks["window"] >= AGREE, checks
    assert checks["bidirectional"] >= AGREE, checks
