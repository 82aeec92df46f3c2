"""The column bound (2-D grids in few nodes) is never beaten and is met where it should be."""

import itertools

import numpy as np
import pytest

from mpiscope.place.bounds import stencil_bound, column_bound
from mpiscope.place import patterns
from mpiscope.place.orders import search
from test_place_bounds import _min_off_exhaustive


def _pair_cost(xs, ys, rows, periodic, diagonal, nu, cross):
    """From the definition: X in column 0, Y in column 1 of a strip of rows.
    Half of each column's own cut edges and of its offsets leaving through the
    rows' ends; with cross, every cut edge between the columns and every
    diagonal offset from one column towards the other that leaves the strip."""
    columns = (xs, ys) if cross else (xs,)
    along = [(r, r + 1) for r in range(rows - 1)] + ([(rows - 1, 0)] if periodic else [])
    cost = 0.0
    for own in columns:
        cost += 0.5 * sum((a in own) != (b in own) for a, b in along)
        if not periodic:
            cost += 0.5 * nu * ((0 in own) + ((rows - 1) in own))
    if cross:
        steps = (-1, 0, 1) if diagonal else (0,)
        for r in range(rows):
            for dr in steps:
                t = r + dr
                if periodic or 0 <= t < rows:
                    cost += (r in xs) != ((t % rows) in ys)
        if diagonal and not periodic:
            cost += nu * sum((0 in own) + ((rows - 1) in own) for own in columns)
    return cost


@pytest.mark.parametrize("periodic", [False, True])
@pytest.mark.parametrize("diagonal", [False, True])
@pytest.mark.parametrize("cross", [False, True])
def test_pair_minima_are_the_true_minima(periodic, diagonal, cross):
    rows, cap, nu = 5, 5, 0.25
    got = column_bound._pair_minima(rows, periodic, diagonal, nu, cap, cross)
    want = np.full_like(got, np.inf)
    subsets = [frozenset(s) for k in range(rows + 1) for s in itertools.combinations(range(rows), k)]
    for xs in subsets:
        for ys in (subsets if cross else [frozenset()]):
            fa = 2 * (0 in xs) + ((rows - 1) in xs)
            fb = 2 * (0 in ys) + ((rows - 1) in ys)
            c = _pair_cost(xs, ys, rows, periodic, diagonal, nu, cross)
            want[fa, fb, len(xs), len(ys)] = min(want[fa, fb, len(xs), len(ys)], c)
    if periodic:
        want[:, :] = want.min(axis=(0, 1))
    if not cross:
        got, want = got[:, :, :, 0], want[:, :, :, 0]
    assert np.array_equal(got, want)


def test_long_columns_have_the_minima_of_short_ones():
    long = column_bound._pair_minima(40, False, True, 0.5, 3, True)
    short = column_bound._pair_minima(14, False, True, 0.5, 3, True)
    assert np.array_equal(long, short)


@pytest.mark.parametrize("grid,points,periodic,ppn", [
    ((3, 4), 9, False, 4), ((4, 4), 9, False, 8), ((4, 4), 9, True, 8), ((3, 4), 9, True, 6),
    ((3, 4), 9, True, 4), ((3, 3), 9, True, 3), ((4, 5), 9, False, 10), ((3, 6), 9, False, 9),
    ((3, 5), 9, (True, False), 5), ((4, 4), 9, (False, True), 8), ((4, 4), 5, False, 8),
    ((2, 8), 5, False, 8),
])
def test_column_bound_never_beaten_exhaustively(grid, points, periodic, ppn):
    st = patterns.make_stencil(grid, points, periodic)
    optimum = _min_off_exhaustive(st, ppn)
    bound = column_bound.column_bound(st, ppn)
    assert 0 < bound <= optimum
    assert stencil_bound.off_node_lower_bound(st, ppn) <= optimum


def test_column_bound_is_exact_on_tiny_grids_the_edge_count_misses():
    # 4x4 9-point torus in 2 nodes: the per-node edge count allows 16, the
    # optimum (and the column bound) is 48
    st = patterns.make_stencil((4, 4), 9, True)
    assert column_bound.column_bound(st, 8) == _min_off_exhaustive(st, 8) == 48
    st = patterns.make_stencil((4, 5), 9, False)
    assert column_bound.column_bound(st, 10) == _min_off_exhaustive(st, 10) == 22


@pytest.mark.parametrize("periodic,ppn,expected", [
    (False, 128, 92),   # a straight cut
    (True, 128, 192),   # two strips around the torus
    (True, 64, 344),    # four strips
])
def test_column_bound_is_met_by_auto_on_16x16_king_grids(periodic, ppn, expected):
    st = patterns.make_stencil((16, 16), 9, periodic)
    best, _, bound = search.search(st, ppn)
    assert bound == column_bound.column_bound(st, ppn) == best.traffic.off_msgs == expected
    total = patterns.total_messages(st)
    assert bound > total - 2 * (st.nranks // ppn) * stencil_bound.max_inside_node(st, ppn)


def test_column_bound_finds_a_price_between_the_grid_points():
    # 16x16 9-point in 4 nodes of 64: prices 1/4 and 1/2 give 170, the best
    # price (about 3/8) 172, within 5 % of four quadrants' 180
    st = patterns.make_stencil((16, 16), 9, False)
    assert column_bound.column_bound(st, 64) == 172
    off = search.search(st, 64)[0].traffic.off_msgs
    assert off == 180


def test_many_nodes_skip_the_column_bound():
    st = patterns.make_stencil((64, 64), 9, False)
    assert column_bound.column_bound(st, 128) == 0   # 32 nodes
