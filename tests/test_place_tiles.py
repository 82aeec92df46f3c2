"""Lattice tiles (place/lattice_tiles.py): fundamental domains with more
king's-graph edges than any box, and the orders they give."""

import itertools

import numpy as np
import pytest

from mpiscope.place import bounds, evaluate, grid_order as go, lattice_tiles, patterns
from mpiscope.place.search import search


def _king_edges(points: np.ndarray) -> int:
    """Pairs of distinct points at l-infinity distance 1 (independent count)."""
    diff = np.abs(points[:, None, :] - points[None, :, :]).max(axis=2)
    return int(np.count_nonzero(diff == 1)) // 2


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
