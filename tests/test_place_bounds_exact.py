"""The exact king's-lattice maxima behind the 9/27-point bounds are attained
and never beaten by brute force over every subset of small boxes."""

import itertools

import numpy as np
import pytest

from mpiscope.place import bounds, patterns
from mpiscope.place.search import baselines, search


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
    exact = [bounds.king_edges_exact(ndim, k) for k in range(kmax + 1)]
    # every set in the box is a lattice set: brute force can never beat it ...
    assert all(b <= e for b, e in zip(brute, exact))
    # ... and these boxes hold an optimal set for every k up to kmax
    assert brute == exact


@pytest.mark.parametrize("ndim,k", [(2, 16), (2, 23), (3, 8), (3, 16), (3, 19)])
def test_exact_maximum_is_attained_by_the_returned_set(ndim, k):
    edges, points = bounds.king_optimum(ndim, k)
    assert points.shape == (k, ndim)
    assert len({tuple(p) for p in points}) == k
    assert _king_edges(points) == edges


def test_exact_2d_maximum_equals_the_9_point_slice_bound():
    # two independent derivations of the same 2-D maximum agree
    for k in range(1, 29):
        assert bounds.king_edges_exact(2, k) == bounds.max_internal_edges(9, k)


def test_27_point_bound_uses_the_exact_maximum():
    # 16 points: the plane DP allows 89 edges; the true maximum is 78 (a 2x2x4
    # box has 72), and the bound now uses 78
    assert bounds.max_internal_edges(27, 16) == bounds.king_edges_exact(3, 16) == 78
    # the stored table is what the enumeration gives
    k = min(bounds._KING3_EXACT)
    assert bounds._KING3_EXACT[k] == bounds.king_edges_exact(3, k)


@pytest.mark.parametrize("grid,periodic,ppn", [((8, 8, 8), False, 16), ((8, 8, 8), True, 16),
                                               ((8, 8, 16), True, 32), ((6, 6, 6), False, 8)])
def test_tighter_27_point_bound_is_never_beaten(grid, periodic, ppn):
    st = patterns.make_stencil(grid, 27, periodic)
    bound = bounds.off_node_lower_bound(st, ppn)
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
    loose = st.nranks // ppn * 2 * bounds._max_internal_table(27, ppn)[ppn]
    assert bound > patterns.total_messages(st) - loose
