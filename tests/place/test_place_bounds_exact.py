"""The exact king's-lattice maxima behind the 9/27-point bounds are attained
and never beaten by brute force over every subset of small boxes."""

import itertools

import numpy as np
import pytest

from mpiscope.place.bounds import stencil_bound, king_bound
from mpiscope.place import patterns
from mpiscope.place.orders.search import baselines, search


def _king_edges(points: np.ndarray) -> int:
    """Pairs of distinct points at l-infinity distance 1 (independent count)."""
    diff = np.abs(points[:, None, :] - points[None, :, :]).max(axis=2)
    return int(np.count_nonzero(diff == 1)) // 2


def _box_maxima(shape: tuple[int, ...], kmax: int) -> list[int]:
    """Most king edges inside any k cells of the box, k = 0..kmax, by brute force."""
    cells = np.array(list(itertools.product(*(range(n) for n in shape))))
    adj = (np.abs(cells[:, None, :] - cells[None, :, :]).max(axis=2) == 1).astype(np.int64)
    best = [0]
    for k in range(1, kmax + 1):
        subsets = np.array(list(itertools.combinations(range(len(cells)), k)))
        edges = adj[subsets[:, :, None], subsets[:, None, :]].sum(axis=(1, 2)) // 2
        best.append(int(edges.max()))
    return best


@pytest.mark.parametrize("ndim,shape,kmax", [(2, (4, 4), 8), (3, (3, 3, 3), 5),
                                             (3, (2, 3, 3), 7)])
def test_exact_maximum_equals_brute_force_on_boxes(ndim, shape, kmax):
    brute = _box_maxima(shape, kmax)
    exact = [king_bound.king_edges_exact(ndim, k) for k in range(kmax + 1)]
    # every set in the box is a lattice set: brute force can never beat it ...
    assert all(b <= e for b, e in zip(brute, exact))
    # ... and these boxes hold an optimal set for every k up to kmax
    assert brute == exact


@pytest.mark.parametrize("ndim,k", [(2, 16), (2, 23), (3, 8), (3, 16), (3, 19)])
def test_exact_maximum_is_attained_by_the_returned_set(ndim, k):
    edges, points = king_bound.king_optimum(ndim, k)
    assert points.shape == (k, ndim)
    assert len({tuple(p) for p in points}) == k
    assert _king_edges(points) == edges


def test_exact_2d_maximum_equals_the_9_point_slice_bound():
    # two independent derivations of the same 2-D maximum agree
    for k in range(1, 29):
        assert king_bound.king_edges_exact(2, k) == stencil_bound.max_internal_edges(9, k)


def test_27_point_bound_uses_the_exact_maximum():
    # 16 points: the plane DP allows 89 edges; the true maximum is 78 (a 2x2x4
    # box has 72), and the bound now uses 78
    assert stencil_bound.max_internal_edges(27, 16) == king_bound.king_edges_exact(3, 16) == 78
    # the stored table is what the enumeration gives
    for k in (2, 9, 17):
        assert king_bound.EXACT_3D[k] == king_bound.king_edges_exact(3, k)


def _is_ranked_down_set(cells: set) -> bool:
    """Rows along x are centred intervals whose lengths do not grow with the
    ranked row (0, 1, -1, 2, -2, ...): an independent test of the shape."""
    rows: dict[int, list[int]] = {}
    for x, y in cells:
        rows.setdefault(y, []).append(x)
    lengths = []
    for rank in range(len(rows)):
        xs = sorted(rows.get(king_bound.ranked_position(rank), []))
        length = len(xs)
        if length == 0 or xs != list(range(-((length - 1) // 2), length // 2 + 1)):
            return False
        lengths.append(length)
    return len(lengths) == len(rows) and lengths == sorted(lengths, reverse=True)


def _outside_counts(cells: set) -> list[int]:
    """m(q) = set points in q's 3x3 square, for every q outside the set."""
    near = {(x + dx, y + dy) for x, y in cells for dx in (-1, 0, 1) for dy in (-1, 0, 1)}
    return [sum((qx + dx, qy + dy) in cells for dx in (-1, 0, 1) for dy in (-1, 0, 1))
            for qx, qy in near - cells]


def test_psi_equals_brute_force_over_every_ranked_down_set_in_a_window():
    # every ranked down-set of up to 5 points fits the 5x5 window
    window = list(itertools.product(range(-2, 3), range(-2, 3)))
    psi = king_bound.psi_table(5)
    for b in range(1, 6):
        best = np.zeros(psi.shape[1], np.int64)
        found = 0
        for subset in itertools.combinations(window, b):
            cells = set(subset)
            if not _is_ranked_down_set(cells):
                continue
            found += 1
            edges = _king_edges(np.array(subset))
            top = np.sort(np.array(_outside_counts(cells)))[::-1]
            prefix = np.concatenate([[0], np.cumsum(top)])
            value = 3 * edges + prefix[np.minimum(np.arange(len(best)), len(prefix) - 1)]
            best = np.maximum(best, value)
        # one ranked down-set per partition of b
        assert found == sum(1 for _ in king_bound.partitions(b))
        assert np.array_equal(best, psi[b])


def test_an_outside_point_touches_at_most_5_points_of_a_ranked_down_set():
    # the closed form the ring bound uses for planes above PSI_PLANES
    for b in range(1, 21):
        for rows in king_bound.partitions(b):
            cells = {(x, king_bound.ranked_position(r)) for r, n in enumerate(rows)
                     for x in range(-((n - 1) // 2), n // 2 + 1)}
            assert max(_outside_counts(cells)) <= 5


def test_ring_bound_is_never_below_the_exact_maximum_and_often_equal():
    planar = np.asarray(stencil_bound._max_internal_table(9, 20), np.int64)
    ring = [king_bound.king3_ring_bound(k, planar) for k in range(21)]
    exact = [king_bound.king_edges_exact(3, k) for k in range(21)]
    assert all(r >= e for r, e in zip(ring, exact))
    assert sum(r == e for r, e in zip(ring, exact)) >= 18
    # the stored tables are what the code computes
    assert list(king_bound.RING_3D[:21]) == ring
    assert list(king_bound.EXACT_3D[:21]) == exact


def test_ring_bound_is_much_tighter_than_the_plane_dp_at_64_and_128():
    # 64: a 4x4x4 block has 468 edges, the plane DP allows 514; 128: a 4x4x8
    # block has 1,036, the plane DP allows 1,153
    for k, box in ((64, (4, 4, 4)), (128, (4, 4, 8))):
        block = _king_edges(np.array(list(itertools.product(*(range(n) for n in box)))))
        bound = stencil_bound.max_internal_edges(27, k)
        assert block < bound < stencil_bound._max_internal_table(27, k)[k]
        assert bound == king_bound.RING_3D[k]


@pytest.mark.parametrize("grid,periodic,ppn", [((8, 8, 8), False, 16), ((8, 8, 8), True, 16),
                                               ((8, 8, 16), True, 32), ((6, 6, 6), False, 8)])
def test_tighter_27_point_bound_is_never_beaten(grid, periodic, ppn):
    st = patterns.make_stencil(grid, 27, periodic)
    bound = stencil_bound.off_node_lower_bound(st, ppn)
    best, tried, _ = search(st, ppn)
    for cand in tried + baselines(st, ppn):
        assert cand.traffic.off_msgs >= bound
    if ppn == 8:
        # 2x2x2 cubes are optimal and tile the grid: the bound is exact
        assert best.traffic.off_msgs == bound
        return
    if periodic:
        return
    # it is tighter than the size-only plane bound
    loose = st.nranks // ppn * 2 * stencil_bound._max_internal_table(27, ppn)[ppn]
    assert bound > patterns.total_messages(st) - loose
