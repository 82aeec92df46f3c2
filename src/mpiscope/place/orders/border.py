"""Refining an order's nodes along the border of a non-periodic grid.

Lattice tiles and band orders are laid out for the inside of the grid; at a
non-periodic border their nodes are split (a tile that crosses the border is
folded to the opposite side) or clipped, and lose edges there. Two repairs,
each kept only if it lowers the traffic:

* *re-cut*: every pair of neighbouring nodes near the border is re-bisected
  with METIS, sizes kept (``partition``'s pairwise step);
* *regroup, then re-cut*: the ranks of the folded nodes (those spanning more
  than half a non-periodic dimension) are partitioned afresh with METIS into
  as many nodes of exactly ppn, so that pieces at the same wall join up.

9-point 256x256: ppn 32 +5.2 % -> +4.7 %, ppn 128 +9.5 % -> +8.2 % above the
bound; 27-point 64^3 ppn 32 +6.0 % -> +5.0 %, ppn 128 +7.6 % -> +5.5 %. Only
nodes near the border take part, so the work grows with the border, not the
grid.
"""

from __future__ import annotations

import numpy as np

from . import partition
from ..evaluate import Traffic, node_of_rank, traffic_of_stencil
from ..patterns import Stencil, coords_of_ranks, neighbour_pairs

# Largest border repaired: directed stencil edges among the border nodes'
# ranks, and border nodes (the pairs re-cut grow with them): ~25 s a repair
# for 27-point 64^3 ppn 32 (1.8 M edges, 2,190 nodes); 64^3 ppn 16 (4,610
# nodes, 2 % above the bound already) would take 2 minutes.
MAX_BORDER_EDGES = 2_000_000
MAX_BORDER_NODES = 3_000
PASSES = 3
# Nodes holding a rank this close to the border take part (2 recovers more
# than 1: 27-point 64^3 ppn 32, +5.3 % vs +5.1 %, three passes of re-cut).
DEPTH = 2


def border_nodes(stencil: Stencil, node: np.ndarray, depth: int = DEPTH) -> np.ndarray:
    """flag[n]: node n holds a rank within ``depth`` of a non-periodic border."""
    coords = coords_of_ranks(stencil.grid, stencil.major)
    on_border = np.zeros(stencil.nranks, bool)
    for dim, (n, wraps) in enumerate(zip(stencil.grid, stencil.periodic)):
        if not wraps:
            on_border |= (coords[:, dim] < depth) | (coords[:, dim] >= n - depth)
    flag = np.zeros(int(node.max()) + 1, bool)
    flag[node[on_border]] = True
    return flag


def folded_nodes(stencil: Stencil, node: np.ndarray) -> np.ndarray:
    """flag[n]: node n spans more than half of a non-periodic dimension (a
    tile folded across opposite borders)."""
    coords = coords_of_ranks(stencil.grid, stencil.major)
    nnodes = int(node.max()) + 1
    flag = np.zeros(nnodes, bool)
    for dim, (n, wraps) in enumerate(zip(stencil.grid, stencil.periodic)):
        if not wraps:
            lo, hi = np.full(nnodes, n), np.full(nnodes, -1)
            np.minimum.at(lo, node, coords[:, dim])
            np.maximum.at(hi, node, coords[:, dim])
            flag |= hi - lo > n // 2
    return flag


def _graph_of(stencil: Stencil, ranks: np.ndarray):
    """CSR of the stencil among ``ranks`` (local ids), or None over budget."""
    local = np.full(stencil.nranks, -1, np.int64)
    local[ranks] = np.arange(len(ranks))
    src, dst, edges = [], [], 0
    for s, d in neighbour_pairs(stencil):
        keep = (local[s] >= 0) & (local[d] >= 0) & (s != d)
        edges += int(np.count_nonzero(keep))
        if edges > MAX_BORDER_EDGES:
            return None
        src.append(local[s[keep]])
        dst.append(local[d[keep]])
    src, dst = np.concatenate(src), np.concatenate(dst)
    return partition.symmetric_graph(len(ranks), src, dst, np.ones(len(src), np.int64))


def recut(stencil: Stencil, ppn: int, node: np.ndarray) -> np.ndarray | None:
    """node labels with the border nodes' pairs re-bisected (None: over budget)."""
    ranks = np.flatnonzero(border_nodes(stencil, node)[node])
    graph = _graph_of(stencil, ranks)
    if graph is None:
        return None
    parts, part = np.unique(node[ranks], return_inverse=True)
    node = node.copy()
    node[ranks] = parts[partition._refine(part, *graph, ppn, passes=PASSES)]
    return node


def regroup(stencil: Stencil, ppn: int, node: np.ndarray) -> np.ndarray | None:
    """node labels with the folded nodes' ranks partitioned afresh (None: no
    folded node, or over budget)."""
    folded = folded_nodes(stencil, node)
    if folded.sum() < 2:
        return None
    ranks = np.flatnonzero(folded[node])
    graph = _graph_of(stencil, ranks)
    if graph is None:
        return None
    parts = np.flatnonzero(folded)
    node = node.copy()
    node[ranks] = parts[partition.balanced_parts(len(parts), graph, ppn, passes=PASSES, ncuts=4)]
    return node


def refine_at_border(stencil: Stencil, ppn: int, order: np.ndarray,
                     off_msgs: int) -> tuple[np.ndarray, Traffic] | None:
    """The better repair of an order whose off-node messages are ``off_msgs``:
    re-cut, or regrouped then re-cut, with its traffic; None when the grid has
    no non-periodic border, the border is over budget or neither repair helped."""
    if all(stencil.periodic):
        return None
    node = node_of_rank(order, ppn)
    if border_nodes(stencil, node).sum() > MAX_BORDER_NODES:
        return None
    best = None
    for start in (node, regroup(stencil, ppn, node)):
        if start is None:
            continue
        new = recut(stencil, ppn, start)
        if new is None:
            continue
        traffic = traffic_of_stencil(new, stencil)
        if traffic.off_msgs < (off_msgs if best is None else best[1].off_msgs):
            best = (new, traffic)
    return None if best is None else (np.argsort(best[0], kind="stable"), best[1])
