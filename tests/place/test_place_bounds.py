"""The off-node lower bound is never beaten and is exact where the optimum is known."""

import itertools

import numpy as np
import pytest

from mpiscope.place.bounds import stencil_bound
from mpiscope.place import evaluate, patterns
from mpiscope.place.orders import grid_order as go, search
from mpiscope.place.orders.methods import method_order


def test_row_cross_term_is_the_true_maximum():
    # Brute force over all subsets of a 7-wide window: intervals maximise the
    # number of pairs at distance <= 1 (the rearrangement step of the proof).
    intra, cross = stencil_bound._row_tables(7, diagonal=True)
    best = np.zeros((8, 8), int)
    window = range(7)
    subsets = [s for k in range(8) for s in itertools.combinations(window, k)]
    for a in subsets:
        for b in subsets:
            n = sum(1 for x in a for y in b if abs(x - y) <= 1)
            best[len(a), len(b)] = max(best[len(a), len(b)], n)
    assert np.array_equal(best[:6, :6], cross[:6, :6])


def _min_off_exhaustive(stencil, ppn):
    """Fewest off-node messages over every split of a tiny grid into nodes of ppn."""
    src, dst = patterns.edge_list(stencil)
    n = stencil.nranks
    best = None

    def splits(rest):
        if not rest:
            yield []
            return
        first = rest[0]
        for group in itertools.combinations(rest[1:], ppn - 1):
            left = [r for r in rest[1:] if r not in group]
            for tail in splits(left):
                yield [(first, *group)] + tail

    for groups in splits(list(range(n))):
        node = np.empty(n, int)
        for j, g in enumerate(groups):
            node[list(g)] = j
        off = int(np.count_nonzero(node[src] != node[dst]))
        best = off if best is None else min(best, off)
    return best


@pytest.mark.parametrize("grid,points,periodic,ppn", [
    ((4, 4), 5, False, 8), ((4, 4), 5, True, 8), ((2, 6), 5, True, 3), ((3, 4), 9, False, 4),
    ((4, 4), 9, True, 8), ((2, 2, 3), 7, False, 4), ((2, 2, 2), 27, True, 4),
    ((3, 3), 9, True, 3),
    # small tori where the line bound is the stronger one
    ((3, 4), 5, True, 6), ((4, 4), 5, (True, False), 8), ((3, 4), 5, (False, True), 6),
    # nodes that span a small torus (the wrap-around term of max_inside_node)
    ((3, 4), 9, True, 6), ((3, 4), 9, True, 4), ((3, 4), 5, True, 4),
    # non-periodic grids in few nodes (the line bound's price of a line end)
    ((3, 4), 5, False, 6), ((2, 6), 5, False, 6), ((3, 6), 5, False, 9), ((3, 5), 5, False, 5),
    ((2, 8), 5, False, 8), ((2, 3, 3), 7, False, 9),
    # a dimension of one rank (the line bound once returned 2**63 here)
    ((16, 1), 5, False, 16), ((8, 1), 5, False, 4), ((1, 6), 9, False, 3), ((2, 3, 1), 7, False, 3),
])
def test_bound_never_beaten_exhaustively(grid, points, periodic, ppn):
    st = patterns.make_stencil(grid, points, periodic)
    optimum = _min_off_exhaustive(st, ppn)
    assert stencil_bound.off_node_lower_bound(st, ppn) <= optimum


@pytest.mark.parametrize("grid,points,periodic,ppn,cell", [
    ((16, 16), 5, False, 16, (4, 4)), ((16, 16), 5, True, 16, (4, 4)),
    ((32, 32), 5, True, 64, (8, 8)), ((8, 8, 8), 7, False, 8, (2, 2, 2)),
    ((16, 16, 16), 7, True, 64, (4, 4, 4)),
])
def test_bound_tight_for_square_tiles(grid, points, periodic, ppn, cell):
    st = patterns.make_stencil(grid, points, periodic)
    t = evaluate.traffic_of_order(go.order(grid, cell), ppn, st)
    assert t.off_msgs == stencil_bound.off_node_lower_bound(st, ppn)


@pytest.mark.parametrize("points,grid", [(5, (24, 24)), (9, (24, 24)), (7, (8, 8, 8)),
                                         (27, (8, 8, 8))])
@pytest.mark.parametrize("periodic", [False, True])
def test_no_searched_or_random_order_beats_bound(points, grid, periodic):
    st = patterns.make_stencil(grid, points, periodic)
    rng = np.random.default_rng(7)
    for ppn in (4, 8, 16, 32):
        bound = stencil_bound.off_node_lower_bound(st, ppn)
        assert bound > 0
        best, tried, _ = search.search(st, ppn)
        orders = [c.order for c in tried] + [rng.permutation(st.nranks) for _ in range(3)]
        orders += [method_order(m, st.nranks, ppn) for m in (0, 1, 2)]
        for order in orders:
            assert evaluate.traffic_of_order(order, ppn, st).off_msgs >= bound


@pytest.mark.parametrize("ppn", [64, 128])
def test_line_bound_is_met_on_a_small_torus(ppn):
    # 16x16 torus cut into 4 or 2 nodes: strips (or 8x8 blocks) are optimal;
    # the per-node edge bound allows 96 and 32 off-node messages, the line
    # bound proves 128 and 64, which the best order reaches
    st = patterns.make_stencil((16, 16), 5, True)
    best, _, bound = search.search(st, ppn)
    assert bound == stencil_bound.line_bound(st, ppn) == best.traffic.off_msgs
    total = patterns.total_messages(st)
    assert bound > total - 2 * (st.nranks // ppn) * stencil_bound.max_inside_node(st, ppn)


def test_line_bound_sees_few_nodes_cannot_all_hold_the_border():
    # 16x16 non-periodic in 2 nodes of 128: spreading the lines' ends over
    # both nodes allows 28 off-node messages; pricing ends at 0 counts one
    # message per line a node meets but does not hold: 16 each, what a
    # straight cut needs
    st = patterns.make_stencil((16, 16), 5, False)
    best, _, bound = search.search(st, 128)
    assert stencil_bound.line_bound(st, 128) == bound == best.traffic.off_msgs == 32
    total = patterns.total_messages(st)
    assert bound > total - 2 * 2 * stencil_bound.max_inside_node(st, 128)


def test_nodes_spanning_a_small_torus_are_bounded_tightly():
    # 16^3 torus, 32 nodes of 128: a node may wrap around it, but then its
    # least populated plane limits both the wrapping edges and its own; the
    # bound comes within 2 % of 4x4x8 boxes
    st = patterns.make_stencil((16, 16, 16), 7, True)
    bound = stencil_bound.off_node_lower_bound(st, 128)
    boxes = evaluate.traffic_of_order(go.order(st.grid, (4, 4, 8)), 128, st).off_msgs
    assert bound <= boxes <= 1.02 * bound


def test_evaluate_counts_by_hand():
    # 4x4 non-periodic 5-point grid, 2x2 blocks on 4 nodes: 48 messages, 16 off-node.
    st = patterns.make_stencil((4, 4), 5, False, msg_bytes=10)
    t = evaluate.traffic_of_order(go.order((4, 4), (2, 2)), 4, st)
    assert (t.on_msgs, t.off_msgs, t.off_bytes, t.max_node_off_msgs) == (32, 16, 160, 4)
