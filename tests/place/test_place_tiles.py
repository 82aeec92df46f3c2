"""Lattice tiles (place/orders/lattice_tiles.py): fundamental domains with more
king's-graph edges than any box, and the orders they give."""

import itertools
import math

import numpy as np
import pytest

from mpiscope.place.bounds import stencil_bound, king_bound
from mpiscope.place import evaluate, patterns
from mpiscope.place.orders import grid_order as go, lattice_tiles
from mpiscope.place.orders.search import factorisations, search

STENCIL_OF_DIM = {2: 9, 3: 27}


def _king_edges(points: np.ndarray) -> int:
    """Pairs of distinct points at l-infinity distance 1 (independent count)."""
    diff = np.abs(points[:, None, :] - points[None, :, :]).max(axis=2)
    return int(np.count_nonzero(diff == 1)) // 2


def _face_edges(points: np.ndarray) -> int:
    """Pairs of points at l1 distance 1 (5/7-point stencil edges)."""
    diff = np.abs(points[:, None, :] - points[None, :, :]).sum(axis=2)
    return int(np.count_nonzero(diff == 1)) // 2


def _in_lattice(basis: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """Whether each vector is an integer combination of the basis rows (solved
    in floating point, not with the module's Hermite reduction)."""
    coef = np.linalg.solve(basis.T.astype(float), vectors.T.astype(float)).T
    return np.all(np.abs(coef - np.round(coef)) < 1e-9, axis=1)


def _best_box_edges(ndim: int, ppn: int) -> int:
    return max(_king_edges(np.array(list(itertools.product(*map(range, cell)))))
               for cell in factorisations(ppn, ndim))


@pytest.mark.parametrize("ndim,ppn", [(2, 16), (2, 32), (3, 16), (3, 32), (3, 64)])
def test_lattice_tile_is_a_fundamental_domain_with_many_edges(ndim, ppn):
    tile = lattice_tiles.best_tile(ppn, ndim)
    basis, pts = np.asarray(tile.basis), np.asarray(tile.points)
    assert _king_edges(pts) == tile.edges
    # one point of each coset: ppn points = the lattice's index, no two differ
    # by a lattice vector, so the translates tile space
    assert len(pts) == ppn == round(abs(np.linalg.det(basis)))
    diff = (pts[:, None, :] - pts[None, :, :]).reshape(-1, ndim)
    same_coset = _in_lattice(basis, diff).reshape(ppn, ppn)
    assert np.array_equal(same_coset, np.eye(ppn, dtype=bool))
    # more edges than any box of ppn ranks, at most the proven maximum
    assert _best_box_edges(ndim, ppn) < tile.edges
    assert tile.edges <= stencil_bound.max_internal_edges(STENCIL_OF_DIM[ndim], ppn)
    if ndim == 2 and ppn == 16:
        assert tile.edges == king_bound.king_edges_exact(2, 16)  # the maximum of any 16 points


@pytest.mark.parametrize("grid,periodic,ppn,exact", [((32, 32), True, 16, True),
                                                     ((32, 32), True, 64, True),
                                                     ((24, 24), False, 16, False)])
def test_lattice_tile_orders_are_valid_and_reach_the_bound(grid, periodic, ppn, exact):
    st = patterns.make_stencil(grid, 9, periodic)
    order = lattice_tiles.tile_order(st, ppn)
    assert np.array_equal(np.sort(order), np.arange(st.nranks))
    off = evaluate.traffic_of_order(order, ppn, st).off_msgs
    bound = stencil_bound.off_node_lower_bound(st, ppn)
    assert off >= bound
    best, _, _ = search(st, ppn)
    assert best.traffic.off_msgs <= off
    if exact:
        # octagon-like tiles with the maximum edges tile the torus: the bound is met
        assert off == bound
        assert best.name.startswith("lattice tiles")


@pytest.mark.parametrize("points,ndim", [(5, 2), (7, 3)])
def test_face_stencil_tiles_beat_every_box_at_ppn_128(points, ndim):
    # 5/7-point: no box of 128 ranks reaches the per-node maximum, a tile can
    tile = lattice_tiles.best_tile(128, ndim, diagonal=False)
    pts = np.asarray(tile.points)
    assert _face_edges(pts) == tile.edges
    diff = (pts[:, None, :] - pts[None, :, :]).reshape(-1, ndim)
    same_coset = _in_lattice(np.asarray(tile.basis), diff).reshape(128, 128)
    assert np.array_equal(same_coset, np.eye(128, dtype=bool))
    boxes = max(_face_edges(np.array(list(itertools.product(*map(range, cell)))))
                for cell in factorisations(128, ndim))
    assert boxes < tile.edges <= stencil_bound.max_internal_edges(points, 128)


def test_5_point_tiles_on_a_torus_when_boxes_fall_short():
    st = patterns.make_stencil((128, 128), 5, True)
    best, tried, bound = search(st, 128)
    tile = np.asarray(lattice_tiles.best_tile(128, 2, diagonal=False).points)
    assert best.name == "lattice tiles of 128"
    assert best.traffic.off_msgs == patterns.total_messages(st) - 2 * 128 * _face_edges(tile)
    assert bound <= best.traffic.off_msgs < min(c.traffic.off_msgs for c in tried if c.cell)


@pytest.mark.parametrize("ppn", [16, 64])
def test_3d_tiles_on_a_torus_are_whole_tiles_and_beat_every_box(ppn):
    st = patterns.make_stencil((16, 16, 16), 27, True)
    order = lattice_tiles.tile_order(st, ppn)
    assert np.array_equal(np.sort(order), np.arange(st.nranks))
    off = evaluate.traffic_of_order(order, ppn, st).off_msgs
    tile = np.asarray(lattice_tiles.best_tile(ppn, 3).points)
    nodes = st.nranks // ppn
    # every node is a whole tile: each keeps exactly the tile's edges on-node
    assert off == patterns.total_messages(st) - 2 * nodes * _king_edges(tile)
    assert off >= stencil_bound.off_node_lower_bound(st, ppn)
    boxes = min(evaluate.traffic_of_order(go.order(st.grid, cell), ppn, st).off_msgs
                for cell in factorisations(ppn, 3))
    assert off < boxes
    best, _, _ = search(st, ppn)
    assert best.name == f"lattice tiles of {ppn}" and best.traffic.off_msgs == off


def test_3d_tiles_on_a_small_non_periodic_grid_are_evened():
    st = patterns.make_stencil((12, 12, 12), 27, False)
    order = lattice_tiles.tile_order(st, 32)
    assert np.array_equal(np.sort(order), np.arange(st.nranks))
    off = evaluate.traffic_of_order(order, 32, st).off_msgs
    assert off >= stencil_bound.off_node_lower_bound(st, 32)
    best, tried, _ = search(st, 32)
    assert best.traffic.off_msgs <= off
    assert any(c.name == "lattice tiles of 32" for c in tried)


@pytest.mark.parametrize("grid,ppn", [((64, 64), 16), ((16, 16, 16), 16)])
def test_large_non_periodic_grid_uses_tiles_wrapping_at_the_border(monkeypatch, grid, ppn):
    # above MAX_EVENED_EDGES the tiles of a grid they fit as a torus are used as
    # they are: every node still gets exactly ppn ranks and only the nodes cut
    # by the border lose edges; the tiling is shifted so the border cuts few
    monkeypatch.setattr(lattice_tiles, "MAX_EVENED_EDGES", 100)
    st = patterns.make_stencil(grid, STENCIL_OF_DIM[len(grid)], False)
    order = lattice_tiles.tile_order(st, ppn)
    assert np.array_equal(np.sort(order), np.arange(st.nranks))
    off = evaluate.traffic_of_order(order, ppn, st).off_msgs
    assert off >= stencil_bound.off_node_lower_bound(st, ppn)
    # no shift of the best tile's tiling (ppn of them, one per coset) splits
    # fewer edges than the tile and shift chosen (up to edges at the corners)
    tile = lattice_tiles.best_tile(ppn, len(grid))
    coords = patterns.coords_of_ranks(st.grid, st.major)
    shifted = [evaluate.traffic_of_stencil(
        lattice_tiles.tile_labels(coords + np.asarray(p), tile, grid), st).off_msgs
        for p in tile.points]
    assert off <= min(shifted) * 1.002
    if len(grid) == 2:
        box = evaluate.traffic_of_order(go.order(grid, (4, 4)), ppn, st).off_msgs
        assert off < box


def test_tiles_for_an_odd_number_of_ranks_and_tiny_ppn():
    for ndim, ppn in [(3, 1), (3, 2), (2, 3), (3, 7)]:
        tile = lattice_tiles.best_tile(ppn, ndim)
        assert len(tile.points) == ppn
        assert _king_edges(np.asarray(tile.points)) == tile.edges
        assert tile.edges <= math.comb(ppn, 2)
