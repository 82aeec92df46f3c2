"""Band orders: near-box nodes in bands of mixed heights."""

import numpy as np
import pytest

from mpiscope.place.orders import bands, grid_order as go, search
from mpiscope.place.bounds import stencil_bound
from mpiscope.place import evaluate, patterns
from mpiscope.place.patterns import coords_of_ranks


@pytest.mark.parametrize("n,h", [(64, 10), (64, 8), (100, 12), (7, 3), (16, 16)])
def test_split_heights_cut_the_side_exactly(n, h):
    ways = bands.split_heights(n, h)
    assert ways
    for way in ways:
        assert sum(way) == n and set(way) <= {h, h + 1}


def test_split_heights_none_when_impossible():
    assert bands.split_heights(5, 3) == [] and bands.split_heights(64, 11) == []


@pytest.mark.parametrize("grid,major,walk,heights", [
    ((64, 64), "R", 0, {1: (11, 11, 11, 11, 10, 10)}),
    ((10, 7), "C", 1, {0: (3, 3, 4)}),
    ((6, 5, 7), "R", 0, {2: (4, 3), 1: (2, 3)}),
    ((5, 6, 4), "C", 2, {1: (3, 3), 0: (2, 3)}),
])
def test_band_order_walks_each_band_by_cross_sections(grid, major, walk, heights):
    order = bands.band_order(grid, major, walk, heights)
    assert np.array_equal(np.sort(order), np.arange(np.prod(grid)))
    coords = coords_of_ranks(grid, major)[order]  # coordinates in visiting order
    slow = list(heights)
    starts = {d: np.repeat(np.cumsum((0,) + heights[d])[:-1], heights[d]) for d in slow}
    band = np.stack([starts[d][coords[:, d]] for d in slow], axis=1)
    # each band is visited in one stretch ...
    changes = np.any(band[1:] != band[:-1], axis=1)
    assert int(changes.sum()) == len({tuple(b) for b in band}) - 1
    # ... one cross-section at a time: the walk coordinate moves by at most one
    # between consecutive ranks of a band, and runs back on the next band
    steps = np.diff(coords[:, walk])[~changes]
    assert set(np.unique(steps)) <= {-1, 0, 1}
    first_band_end = int(np.flatnonzero(changes)[0]) if changes.any() else len(coords) - 1
    assert coords[first_band_end, walk] == grid[walk] - 1
    if changes.any():
        assert coords[first_band_end + 1, walk] == grid[walk] - 1


def test_bands_beat_every_cell_where_cells_are_far_from_square():
    # 64x64, 5-point, ppn 128: the squarest cell that divides the grid is
    # 8x16; bands of 11 and 10 rows make ~11x12 nodes
    st = patterns.make_stencil((64, 64), 5, False)
    best, tried, bound = search.search(st, 128)
    cells = [c for c in tried if c.cell is not None]
    assert best.name.startswith("bands")
    assert best.traffic.off_msgs < min(c.traffic.off_msgs for c in cells)
    assert best.traffic.off_msgs <= 1.05 * bound
    # the name and traffic are those of the order returned
    again = evaluate.traffic_of_order(best.order, 128, st)
    assert again == best.traffic


def test_bands_serve_grids_few_cells_divide():
    # 120x100 with ppn 96: only the 24x4 cell divides the grid; grid_order
    # clips the squarer ones at the border
    st = patterns.make_stencil((120, 100), 5, False)
    assert [c for c in search.factorisations(96, 2) if search.tiles_grid(st, c)] == [(24, 4)]
    best, tried, bound = search.search(st, 96)
    grid_order = min(c.traffic.off_msgs for c in tried if c.cell is not None)
    assert best.name.startswith("bands") and best.traffic.off_msgs < grid_order
    assert best.traffic.off_msgs <= 1.05 * bound
    assert bound == stencil_bound.off_node_lower_bound(st, 96)


def test_bands_not_tried_when_a_cell_meets_the_bound():
    st = patterns.make_stencil((32, 32), 5, True)
    best, tried, bound = search.search(st, 64)
    assert best.traffic.off_msgs == bound
    assert not any(c.name.startswith("bands") for c in tried)


def test_band_order_matches_grid_order_when_heights_are_one_cell():
    # bands of 4 rows walked column by column, nodes of 16 = 4x4 blocks
    st = patterns.make_stencil((16, 16), 5, False)
    order = bands.band_order(st.grid, st.major, 0, {1: (4, 4, 4, 4)})
    blocks = go.order(st.grid, (4, 4), st.major, "Z")
    assert evaluate.traffic_of_order(order, 16, st) == evaluate.traffic_of_order(blocks, 16, st)
