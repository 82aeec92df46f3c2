"""The corner bound (place/bounds/corner_bound.py, step 11 of docs/placement.md):
its table against brute force and a fresh MIP, and the bound against
exhaustive search and every order auto tries."""

import numpy as np
import pytest

from mpiscope.place.bounds import stencil_bound, corner_bound
from mpiscope.place import patterns
from mpiscope.place.orders import search

_BITS16 = np.unpackbits(np.arange(1 << 16, dtype=np.uint16).view(np.uint8)).reshape(-1, 16).sum(1).astype(np.int64)


def _popcount(masks):
    return _BITS16[masks & 0xFFFF] + _BITS16[masks >> 16]


def _king_shifts(rows, cols):
    """(shift, valid) per king offset: cell i = r * cols + c links to i + shift
    where valid has bit i set (the neighbour is inside the box)."""
    out = []
    for dr, dc in ((0, 1), (1, -1), (1, 0), (1, 1)):
        valid = 0
        for r in range(rows):
            for c in range(cols):
                if 0 <= r + dr < rows and 0 <= c + dc < cols:
                    valid |= 1 << (r * cols + c)
        out.append((dr * cols + dc, np.uint32(valid)))
    return out


def _quadrant_maxima_by_brute_force(side, kmax):
    """Most king edges of k cells of a side x side box holding cell 0, every subset."""
    masks = (np.arange(1 << (side * side - 1), dtype=np.uint32) << np.uint32(1)) | np.uint32(1)
    edges = np.zeros(masks.size, np.int64)
    for shift, valid in _king_shifts(side, side):
        edges += _popcount(masks & valid & (masks >> np.uint32(shift)))
    sizes = _popcount(masks)
    return [int(edges[sizes == k].max()) for k in range(kmax + 1)[1:]]


def test_table_matches_brute_force_and_the_mip():
    brute = _quadrant_maxima_by_brute_force(5, 12)
    for k in range(2, 13):
        # every subset of a 5x5 box at the apex; sets leaving it are bounded
        # by corner_edges_upper's outside term, here below the box's maximum
        assert corner_bound._window_mip(k, 5) == brute[k - 1], k
        assert corner_bound.corner_edges_upper(k)[0] == brute[k - 1] == corner_bound.CORNER_9[k], k
    assert brute[11] == stencil_bound.max_internal_edges(9, 12) - 1  # 12 ranks: the first that lose


def test_table_entries_are_attained_inside_the_box():
    # the table is max(box MIP, sets leaving the box); where the second is
    # below the entry, the entry is the MIP's, i.e. a set that exists
    for k in range(2, len(corner_bound.CORNER_9)):
        assert corner_bound.leaving_box(k, corner_bound.box_side(k)) < corner_bound.CORNER_9[k], k


@pytest.mark.parametrize("k", [16, 24])
def test_table_matches_a_fresh_mip(k):
    assert corner_bound.corner_edges_upper(k)[0] == corner_bound.CORNER_9[k]


def _square_ish_edges(k):
    """King edges of k cells filled row by row into rows of ceil(sqrt(k)): a
    down-set holding the apex."""
    side = int(np.ceil(np.sqrt(k)))
    cells = {divmod(i, side) for i in range(k)}
    return sum((r + dr, c + dc) in cells for r, c in cells
               for dr, dc in ((0, 1), (1, -1), (1, 0), (1, 1)))


def test_table_never_above_the_plane_and_never_below_a_down_set():
    table = corner_bound.CORNER_9
    assert len(table) >= 129
    for k in range(2, len(table)):
        assert _square_ish_edges(k) <= table[k] <= stencil_bound.max_internal_edges(9, k), k


def _min_off_two_nodes(rows, cols):
    """Fewest off-node messages over every split of a rows x cols 9-point grid in two."""
    n = rows * cols
    masks = np.arange(1 << (n - 1), dtype=np.uint32)  # cell n-1 always in node 0
    masks = masks[_popcount(masks) == n // 2]
    cut = np.zeros(masks.size, np.int64)
    for shift, valid in _king_shifts(rows, cols):
        cut += _popcount((masks ^ (masks >> np.uint32(shift))) & valid)
    return 2 * int(cut.min())


@pytest.mark.parametrize("grid", [(4, 6), (3, 8)])
def test_corner_bound_never_beaten_exhaustively(grid):
    st = patterns.make_stencil(grid, 9, False)
    parts = stencil_bound.lower_bounds(st, 12)
    assert parts["corner bound"] > parts["per-node edge count"]  # 12 ranks lose at a corner
    assert stencil_bound.off_node_lower_bound(st, 12) <= _min_off_two_nodes(*grid)


def test_two_corners_in_one_node_are_counted_once():
    # 4x6 in two nodes of 12: each node holds two corners, and a node that
    # spans the grid is only proven to miss one edge, not two
    st = patterns.make_stencil((4, 6), 9, False)
    assert corner_bound.corner_loss(st, 12, stencil_bound.max_inside_node(st, 12)) == 1
    # 16x16 in nodes of 16: four corner nodes, one edge each
    st = patterns.make_stencil((16, 16), 9, False)
    assert corner_bound.corner_loss(st, 16, stencil_bound.max_inside_node(st, 16)) == 4


@pytest.mark.parametrize("grid,periodic,ppn", [
    ((16, 16), True, 16), ((16, 16), (True, False), 16), ((24, 24), False, 144)])
def test_no_corner_term_without_corners_or_table(grid, periodic, ppn):
    st = patterns.make_stencil(grid, 9, periodic)
    assert corner_bound.corner_loss(st, ppn, stencil_bound.max_inside_node(st, ppn)) == 0
    st5 = patterns.make_stencil((16, 16), 5, False)
    assert corner_bound.corner_loss(st5, 16, stencil_bound.max_inside_node(st5, 16)) == 0


def test_auto_is_within_five_percent_of_the_corner_bound_on_16x16_ppn16():
    # the case the corner bound was built for: 4x4 blocks (516 messages)
    # against 484 from the per-node count, 492 with the four corner nodes
    st = patterns.make_stencil((16, 16), 9, False)
    best, _, bound = search.search(st, 16)
    assert bound == 492 and stencil_bound.bound_source(st, 16) == "corner bound"
    assert best.traffic.off_msgs == 516 and best.traffic.off_msgs <= 1.05 * bound
