"""examples/stencil: self-checks (the same RESULT line for every variant, the
field agrees with a numpy reference, both I/O modes write the same file) and
its signature in the profile (halo strategies, hot rank, rank-0 vs MPI-IO).
"""

from __future__ import annotations

import numpy as np
import pytest

from exampleapps import (blocks, assert_one_line_error, expected_halo_traffic, mix, peer_matrix,
                         per_rank, profiled, result, result_fields, run_app)

HALOS = ("bsbr", "sere", "isbr", "isir", "iris")


def reference_field(grid: tuple[int, ...], points: int, steps: int) -> np.ndarray:
    """The heat equation the app solves, in numpy: interior field, C order (z, y, x)."""
    shape = tuple(reversed(grid))
    k = np.arange(int(np.prod(grid)), dtype=np.uint64)
    init = (mix(np.zeros_like(k), k) >> np.uint64(11)).astype(np.float64) * 2.0 ** -53
    u = np.zeros(tuple(s + 2 for s in shape))
    u[..., 0] = 1.0                         # fixed boundary: 1 on the low-x face
    inner = tuple(slice(1, -1) for _ in shape)
    u[inner] = init.reshape(shape)

    for _ in range(steps):
        def at(*off):
            return u[tuple(slice(1 + o, u.shape[i] - 1 + o) for i, o in enumerate(off))]
        c = at(*([0] * len(shape)))
        if points == 5:
            lap = at(0, -1) + at(0, 1) + at(-1, 0) + at(1, 0) - 4 * c
        elif points == 9:
            lap = (4 * (at(0, -1) + at(0, 1) + at(-1, 0) + at(1, 0)) + at(-1, -1) + at(-1, 1)
                   + at(1, -1) + at(1, 1) - 20 * c) / 6
        elif points == 7:
            lap = (at(0, 0, -1) + at(0, 0, 1) + at(0, -1, 0) + at(0, 1, 0) + at(-1, 0, 0)
                   + at(1, 0, 0) - 6 * c)
        else:
            s = sum(at(a, b, d) for a in (-1, 0, 1) for b in (-1, 0, 1) for d in (-1, 0, 1))
            lap = (s - 27 * c) / 26
        v = u.copy()
        v[inner] = c + 0.1 * lap
        u = v
    return u[inner]


@pytest.mark.parametrize("grid,points", [((37, 29), 5), ((37, 29), 9), ((11, 9, 8), 7),
                                         ((11, 9, 8), 27)])
def test_field_matches_numpy_reference(impl, nranks, grid, points):
    steps = 6
    line = result(impl, nranks, "stencil", "--grid", "x".join(map(str, grid)),
                  "--points", points, "--steps", steps)
    ref = reference_field(grid, points, steps)
    # The app sums in 2^-32 fixed point (order-independent): one rounding per point.
    assert float(result_fields(line)["sum"]) == pytest.approx(ref.sum(), abs=ref.size * 2.0 ** -32)


def test_3d_halo_strategies_and_decompositions_agree(impl, nranks):
    args = ("--grid", "10x9x8", "--points", "27", "--steps", "4")
    serial = result(impl, 1, "stencil", *args)
    procs = "x".join(map(str, (2, nranks // 2, 1))) if nranks > 1 else "1x1x1"
    for halo in ("bsbr", "sere", "iris"):
        assert result(impl, nranks, "stencil", *args, "--halo", halo, "--procs", procs) == serial


def test_hot_rank_reorder_and_rank_order_keep_checksum(impl, nranks, tmp_path):
    args = ("--grid", "40x24", "--steps", "6")
    base = result(impl, nranks, "stencil", *args)
    assert result(impl, nranks, "stencil", *args, "--hot-rank", nranks - 1,
                  "--hot-factor", "2.5") == base
    assert result(impl, nranks, "stencil", *args, "--reorder") == base
    order = tmp_path / "order"
    perm = np.random.default_rng(7).permutation(nranks)
    order.write_text("# scrambled\n" + ",".join(map(str, perm)) + "\n")
    assert result(impl, nranks, "stencil", *args, "--rank-order", order) == base


def test_rank0_and_mpiio_write_the_same_file(impl, nranks, tmp_path):
    grid, steps, every = (23, 17, 5), 6, 3
    args = ("--grid", "x".join(map(str, grid)), "--steps", steps, "--io-every", every)
    line0 = result(impl, nranks, "stencil", *args, "--io", "rank0", "--io-file", "a.dat",
                   cwd=tmp_path)
    line1 = result(impl, nranks, "stencil", *args, "--io", "mpiio", "--io-file", "b.dat",
                   cwd=tmp_path)
    assert line0 == line1
    a = (tmp_path / "a.dat").read_bytes()
    assert a == (tmp_path / "b.dat").read_bytes()
    field = np.frombuffer(a, "<f8").reshape(steps // every, *reversed(grid))
    # The last snapshot (step 6) is the final field the RESULT line sums.
    assert field[-1].sum() == pytest.approx(float(result_fields(line0)["sum"]),
                                            abs=field[-1].size * 2.0 ** -32)
    np.testing.assert_array_equal(field[0], reference_field(grid, 7, every))


@pytest.mark.parametrize("args,message", [
    (("--halo", "fast"), "--halo must be one of bsbr|sere|isbr|isir|iris"),
    (("--grid", "64x"), "--grid must look like"),
    (("--grid", "8x8x8", "--points", "9"), "--points 9 is not a 3-D stencil"),
    (("--procs", "3x7"), "--procs product is 21"),
    (("--hot-factor", "2"), "--hot-factor needs --hot-rank"),
    (("--steps",), "option --steps needs a value"),
    (("--frobnicate",), "unknown option '--frobnicate'"),
])
def test_bad_input_is_one_line_error(impl, args, message):
    nranks = 2  # the error path is the same at any size; keep it cheap
    proc = run_app(impl, nranks, "stencil", *args, check=False)
    assert_one_line_error(proc, "stencil", message)


def test_existing_output_file_is_not_overwritten(impl, tmp_path):
    nranks = 2
    out = tmp_path / "keep.dat"
    out.write_bytes(b"precious")
    proc = run_app(impl, nranks, "stencil", "--grid", "16x16", "--steps", "2", "--io", "mpiio",
                   "--io-every", "1", "--io-file", out, check=False)
    assert proc.returncode != 0 and "exists" in proc.stderr
    assert out.read_bytes() == b"precious"


def test_bad_rank_order_file(impl, tmp_path):
    nranks = 2
    order = tmp_path / "order"
    order.write_text("0," * nranks + "\n")  # rank 0 repeated: not a permutation
    proc = run_app(impl, nranks, "stencil", "--rank-order", order, check=False)
    assert proc.returncode != 0 and "not a permutation" in proc.stderr


# ---- the signature in the profile ----------------------------------------


def _procs(nranks: int) -> tuple[int, int]:
    return (2, nranks // 2) if nranks > 1 else (1, 1)


def test_halo_strategies_same_peer_traffic_and_checksum(impl, nranks, tmp_path):
    grid, steps, procs = (36, 28), 5, _procs(nranks)
    msgs, nbytes = expected_halo_traffic(grid, procs, steps)
    lines = set()
    for halo in HALOS:
        prof, line = profiled(impl, nranks, "stencil", "--grid", "36x28", "--steps", steps,
                              "--points", 9, "--procs", "x".join(map(str, procs)), "--halo", halo,
                              outdir=tmp_path / halo)
        lines.add(line)
        np.testing.assert_array_equal(peer_matrix(prof, "msgs"), msgs, err_msg=halo)
        np.testing.assert_array_equal(peer_matrix(prof, "bytes"), nbytes, err_msg=halo)
        # All point-to-point traffic is in the halo region.
        sent = per_rank(prof, "bytes_sent", region="halo")
        np.testing.assert_array_equal(sent, nbytes.sum(axis=1), err_msg=halo)
    # ... and the same RESULT line as one rank computing the whole grid.
    assert lines == {result(impl, 1, "stencil", "--grid", "36x28", "--steps", steps,
                            "--points", 9)}


def test_rank_order_file_permutes_the_measured_traffic(impl, nranks, tmp_path):
    grid, steps, procs = (36, 28), 3, _procs(nranks)
    msgs, _ = expected_halo_traffic(grid, procs, steps)
    order = np.random.default_rng(11).permutation(nranks)
    path = tmp_path / "order"
    path.write_text(",".join(map(str, order)) + "\n")
    prof, _ = profiled(impl, nranks, "stencil", "--grid", "36x28", "--steps", steps,
                       "--procs", "x".join(map(str, procs)), "--rank-order", path,
                       outdir=tmp_path / "run")
    # World rank w runs grid rank order[w].
    np.testing.assert_array_equal(peer_matrix(prof, "msgs"), msgs[np.ix_(order, order)])


def test_rank0_io_puts_all_write_bytes_on_rank0_mpiio_spreads_them(impl, nranks, tmp_path):
    grid, steps, every, procs = (40, 24), 4, 2, _procs(nranks)
    field = grid[0] * grid[1] * 8
    snapshots = steps // every
    args = ("--grid", "40x24", "--steps", steps, "--io-every", every,
            "--procs", "x".join(map(str, procs)))
    prof0, line0 = profiled(impl, nranks, "stencil", *args, "--io", "rank0",
                            "--io-file", tmp_path / "a.dat", outdir=tmp_path / "rank0")
    prof1, line1 = profiled(impl, nranks, "stencil", *args, "--io", "mpiio",
                            "--io-file", tmp_path / "b.dat", outdir=tmp_path / "mpiio")
    assert line0 == line1
    written0 = per_rank(prof0, "bytes_sent", kind="io")
    expect0 = np.zeros(nranks)
    expect0[0] = snapshots * field
    np.testing.assert_array_equal(written0, expect0)
    lx, ly = blocks(grid[0], procs[0]), blocks(grid[1], procs[1])
    expect1 = np.array([snapshots * lx[r % procs[0]] * ly[r // procs[0]] * 8
                        for r in range(nranks)], np.float64)
    np.testing.assert_array_equal(per_rank(prof1, "bytes_sent", kind="io"), expect1)
    assert expect1.sum() == snapshots * field


def test_hot_rank_is_maxpe_of_compute_and_its_neighbours_wait(impl, nranks, tmp_path):
    # 4 ranks at most: with 16 ranks on 2 cores the scheduler's time slices
    # swamp a few milliseconds of compute; 4 keep the hot rank's extra work
    # (F = 8 sweeps of a 512x512 block) far above that noise.
    n = min(nranks, 4)
    procs = (2, n // 2)
    hot = n - 1
    prof, _ = profiled(impl, n, "stencil", "--grid", "1024x1024", "--steps", 20,
                       "--procs", "x".join(map(str, procs)), "--hot-rank", hot,
                       "--hot-factor", 8, outdir=tmp_path)
    compute = prof.rank_metric("compute")
    wait = prof.rank_metric("wait")
    assert compute.argmax() == hot, compute       # maxPE of compute time
    assert wait.argmin() == hot, wait             # the one rank that never waits for it
    msgs, _ = expected_halo_traffic((1024, 1024), procs, 20)
    neighbours = np.flatnonzero(msgs[hot])
    extra = compute[hot] - np.median(compute)
    # Each neighbour waits, step after step, for the hot rank's extra sweeps.
    assert np.all(wait[neighbours] - wait[hot] > 0.3 * extra), (wait, compute)
