"""examples/zonal: self-checks (gather and distributed give the same zonal
means at every decomposition, equal to a numpy reference) and its signature
in the profile (rank 0's received bytes: the whole field vs the sums only).
"""

from __future__ import annotations

import numpy as np
import pytest

from exampleapps import (assert_one_line_error, mix, per_rank, profiled, result, result_fields,
                         run_app)

MASK = np.uint64((1 << 20) - 1)


def reference_mean(nlon: int, nlat: int, nlev: int, steps: int, work: int) -> float:
    """Mean of the last step's zonal means, as examples/zonal/zonal.c computes the field."""
    g = np.arange(nlon * nlat * nlev, dtype=np.uint64)
    v = mix(np.zeros_like(g), g) & MASK
    with np.errstate(over="ignore"):
        for step in range(1, steps + 1):
            for _ in range(work):
                v = (v * np.uint64(1103515245) + np.uint64(12345 + step)) & MASK
    zm = v.astype(np.float64).reshape(nlev, nlat, nlon).sum(axis=2) / nlon
    return float(zm.mean())


def test_variants_and_decompositions_agree_with_reference(impl, nranks):
    grid, steps, work = (40, 24, 5), 3, 2
    args = ("--grid", "x".join(map(str, grid)), "--steps", steps, "--work", work)
    serial = result(impl, 1, "zonal", *args, "--variant", "gather")
    assert float(result_fields(serial)["mean"]) == pytest.approx(
        reference_mean(*grid, steps, work), rel=1e-12)
    procs = [None, f"{nranks}x1", f"1x{nranks}"]
    for variant in ("gather", "distributed"):
        for p in procs:
            extra = ("--procs", p) if p else ()
            assert result(impl, nranks, "zonal", *args, "--variant", variant, *extra) == serial


@pytest.mark.parametrize("args,message", [
    (("--variant", "scatter"), "--variant must be gather or distributed"),
    (("--grid", "64x32"), "--grid needs 3 values"),
    (("--procs", "3x7"), "--procs 3x7 is 21 ranks"),
    (("--work", "-1"), "--work must be an integer"),
    (("--frobnicate",), "unknown option '--frobnicate'"),
])
def test_bad_input_is_one_line_error(impl, args, message):
    nranks = 2  # the error path is the same at any size; keep it cheap
    proc = run_app(impl, nranks, "zonal", *args, check=False)
    assert_one_line_error(proc, "zonal", message)


# ---- the signature in the profile ----------------------------------------

def test_rank0_receives_whole_field_in_gather_and_sums_only_in_distributed(impl, nranks,
                                                                           tmp_path):
    nlon, nlev, steps = 32, 4, 3
    received = {}
    for p in sorted({max(1, nranks // 4), nranks}):
        nlat = 6 * p  # weak scaling: the field grows with the ranks, as more patches
        args = ("--grid", f"{nlon}x{nlat}x{nlev}", "--steps", steps, "--procs", f"1x{p}")
        gather, line_g = profiled(impl, p, "zonal", *args, "--variant", "gather",
                                  outdir=tmp_path / f"g{p}")
        dist, line_d = profiled(impl, p, "zonal", *args, "--variant", "distributed",
                                outdir=tmp_path / f"d{p}")
        assert line_g == line_d
        got_g = per_rank(gather, "bytes_recv", region="zonal")[0]
        got_d = per_rank(dist, "bytes_recv", region="zonal")[0]
        # gather: the whole field (MPI_Gatherv posts every patch at the root).
        assert got_g == steps * nlon * nlat * nlev * 8
        # distributed: rank 0's own row sums (MPI_Reduce on a 1-rank row) and
        # the zonal means of every latitude (MPI_Gatherv of the leaders).
        assert got_d == steps * (nlat // p + nlat) * nlev * 8
        received[p] = (got_g, got_d)
    if len(received) == 2:
        (small, (g1, d1)), (large, (g2, d2)) = sorted(received.items())
        assert g2 / g1 == large / small        # grows with P
        assert g2 / d2 >= nlon / 2             # the fix moves 1/NLON of it or less
