"""The exact king's-lattice maxima behind the 9/27-point bounds are attained
and never beaten by brute force over every subset of small boxes."""

import itertools

import numpy as np
import pytest

from mpiscope.place import bounds, evaluate, grid_order as go, lattice_tiles, patterns
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


@pytest.mark.parametrize("ppn", [16, 32])
def test_lattice_tile_is_a_fundamental_domain_with_many_edges(ppn):
    edges, (a, s, b), tile = lattice_tiles.best_tile(ppn)
    pts = np.asarray(tile)
    assert _king_edges(pts) == edges
    # one point of each coset of the lattice (a, 0), (s, b): the translates tile the plane
    j = np.floor_divide(pts[:, 1], b)
    residues = {(int(x), int(y)) for x, y in zip((pts[:, 0] - j * s) % a, pts[:, 1] % b)}
    assert len(residues) == ppn == a * b
    # more edges than any box of ppn ranks, at most the exact maximum
    boxes = max(_king_edges(np.array(list(itertools.product(range(w), range(ppn // w)))))
                for w in range(1, ppn + 1) if ppn % w == 0)
    assert boxes < edges <= bounds.king_edges_exact(2, ppn)


@pytest.mark.parametrize("grid,periodic,ppn,exact", [((32, 32), True, 16, True),
                                                     ((32, 32), True, 64, True),
                                                     ((24, 24), False, 16, False)])
def test_lattice_tile_orders_are_valid_and_reach_the_bound(grid, periodic, ppn, exact):
    st = patterns.make_stencil(grid, 9, periodic)
    order = lattice_tiles.tile_order(st, ppn)
    assert np.array_equal(np.sort(order), np.arange(st.nranks))
    off = evaluate.traffic_of_order(order, ppn, st).off_msgs
    bound = bounds.off_node_lower_bound(st, ppn)
    assert off >= bound
    best, _, _ = search(st, ppn)
    assert best.traffic.off_msgs <= off
    if exact:
        # octagon-like tiles with the maximum edges tile the torus: the bound is met
        assert off == bound
        assert best.name.startswith("lattice tiles")


def test_large_non_periodic_grid_uses_tiles_wrapping_at_the_border(monkeypatch):
    # above MAX_EVENED_RANKS the tiles of a grid they fit as a torus are used as
    # they are: every node still gets exactly ppn ranks, and only the nodes cut
    # by the border lose edges, so it beats the best box
    monkeypatch.setattr(lattice_tiles, "MAX_EVENED_RANKS", 100)
    st = patterns.make_stencil((64, 64), 9, False)
    order = lattice_tiles.tile_order(st, 16)
    assert np.array_equal(np.sort(order), np.arange(st.nranks))
    off = evaluate.traffic_of_order(order, 16, st).off_msgs
    box = evaluate.traffic_of_order(go.order((64, 64), (4, 4)), 16, st).off_msgs
    assert bounds.off_node_lower_bound(st, 16) <= off < box
