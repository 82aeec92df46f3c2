"""examples/stencil: self-checks (the same RESULT line for every variant, the
field agrees with a numpy reference, both I/O modes write the same file) and
its signature in the profile (halo strategies, hot rank, rank-0 vs MPI-IO).
"""

from __future__ import annotations

import numpy as np
import pytest

from exampleapps import assert_one_line_error, result, result_fields, run_app

HALOS = ("bsbr", "sere", "isbr", "isir", "iris")
M64 = (1 << 64) - 1


def _mix(bits: np.ndarray, index: np.ndarray) -> np.ndarray:
    """examples/common/miniapp.c:miniapp_mix over uint64 arrays."""
    with np.errstate(over="ignore"):
        z = bits ^ (index * np.uint64(0x9E3779B97F4A7C15))
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def reference_field(grid: tuple[int, ...], points: int, steps: int) -> np.ndarray:
    """The heat equation the app solves, in numpy: interior field, C order (z, y, x)."""
    shape = tuple(reversed(grid))
    k = np.arange(int(np.prod(grid)), dtype=np.uint64)
    init = (_mix(np.zeros_like(k), k) >> np.uint64(11)).astype(np.float64) * 2.0 ** -53
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


def test_five_halo_strategies_same_checksum(impl, nranks):
    args = ("--grid", "45x31", "--points", "9", "--steps", "8")
    lines = {h: result(impl, nranks, "stencil", *args, "--halo", h) for h in HALOS}
    serial = result(impl, 1, "stencil", *args)
    assert set(lines.values()) == {serial}, lines


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
def test_bad_input_is_one_line_error(impl, nranks, args, message):
    proc = run_app(impl, nranks, "stencil", *args, check=False)
    assert_one_line_error(proc, "stencil", message)


def test_existing_output_file_is_not_overwritten(impl, nranks, tmp_path):
    out = tmp_path / "keep.dat"
    out.write_bytes(b"precious")
    proc = run_app(impl, nranks, "stencil", "--grid", "16x16", "--steps", "2", "--io", "mpiio",
                   "--io-every", "1", "--io-file", out, check=False)
    assert proc.returncode != 0 and "exists" in proc.stderr
    assert out.read_bytes() == b"precious"


def test_bad_rank_order_file(impl, nranks, tmp_path):
    order = tmp_path / "order"
    order.write_text("0," * nranks + "\n")  # rank 0 repeated: not a permutation
    proc = run_app(impl, nranks, "stencil", "--rank-order", order, check=False)
    assert proc.returncode != 0 and "not a permutation" in proc.stderr
