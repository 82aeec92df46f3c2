"""Re-cutting the nodes along a non-periodic border."""

import numpy as np

from mpiscope.place.orders import border, lattice_tiles, search
from mpiscope.place import patterns
from mpiscope.place.evaluate import node_of_rank, traffic_of_order, traffic_of_stencil


def _groups(order, ppn):
    node = node_of_rank(order, ppn)
    return node, {frozenset(np.flatnonzero(node == n).tolist()) for n in range(node.max() + 1)}


def test_border_recut_lowers_traffic_and_touches_only_border_nodes():
    # 9-point 256x256, ppn 32: lattice tiles folded at the border
    st = patterns.make_stencil((256, 256), 9, False)
    tiles = lattice_tiles.tile_order(st, 32)
    before = traffic_of_order(tiles, 32, st).off_msgs
    refined, traffic = border.refine_at_border(st, 32, tiles, before)
    assert np.array_equal(np.sort(refined), np.arange(st.nranks))
    after = traffic_of_order(refined, 32, st).off_msgs
    assert after == traffic.off_msgs
    assert after < before
    # nodes with no rank on the border keep exactly their ranks
    node, _ = _groups(tiles, 32)
    flag = border.border_nodes(st, node)
    _, new_groups = _groups(refined, 32)
    inner = [frozenset(np.flatnonzero(node == n).tolist()) for n in np.flatnonzero(~flag)]
    assert inner and all(g in new_groups for g in inner)
    # and search offers it (within 5 % of the bound, where the tiles alone are not)
    best, _, bound = search.search(st, 32)
    assert best.name.endswith("border re-cut")
    assert best.traffic.off_msgs <= after <= 1.05 * bound < before


def test_border_recut_skips_tori_and_big_borders(monkeypatch):
    torus = patterns.make_stencil((64, 64), 9, True)
    tiles = lattice_tiles.tile_order(torus, 32)
    assert border.refine_at_border(torus, 32, tiles, 10**9) is None
    st = patterns.make_stencil((256, 256), 9, False)
    tiles = lattice_tiles.tile_order(st, 32)
    monkeypatch.setattr(border, "MAX_BORDER_EDGES", 1000)
    assert border.refine_at_border(st, 32, tiles, 10**9) is None


def test_regrouping_folded_tiles_joins_pieces_at_the_same_wall():
    # 9-point 256x256, ppn 128: tiles crossing the border are folded to the
    # opposite side; regrouping their ranks, then re-cutting, beats re-cutting alone
    st = patterns.make_stencil((256, 256), 9, False)
    node = node_of_rank(lattice_tiles.tile_order(st, 128), 128)
    folded = border.folded_nodes(st, node)
    assert 0 < folded.sum() < len(folded)
    regrouped = border.regroup(st, 128, node)
    assert np.all(np.bincount(regrouped) == 128)
    assert np.array_equal(regrouped[~folded[node]], node[~folded[node]])
    assert border.folded_nodes(st, regrouped).sum() < folded.sum()
    alone = traffic_of_stencil(border.recut(st, 128, node), st).off_msgs
    both = traffic_of_stencil(border.recut(st, 128, regrouped), st).off_msgs
    assert both < alone
    order = np.argsort(node, kind="stable")
    before = traffic_of_order(order, 128, st).off_msgs
    best, traffic = border.refine_at_border(st, 128, order, before)
    assert traffic_of_order(best, 128, st).off_msgs == traffic.off_msgs == min(alone, both)
