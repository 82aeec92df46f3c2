"""``place auto``: search cell shapes and curves for the order with least off-node traffic.

Candidates are grid_order orders: every cell shape whose size is ppn (any
factorisation over the grid's dimensions), visited -Z, -P or -H. Shapes are
first ranked by the stencil edges inside one cell (cheap, exact for a cell);
only the best few are evaluated on the whole grid. For the 9- and 27-point
stencils the nodes may also be lattice tiles (``lattice_tiles``): octagon-like
in 2-D, rounded in 3-D; for 5/7-point ones too when no box reaches the per-node
bound.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from . import grid_order as go
from . import bands, border, lattice_tiles
from ..bounds.stencil_bound import max_internal_edges, off_node_lower_bound
from ..evaluate import Traffic, node_of_rank, traffic_of_stencil
from .methods import method_order
from ..patterns import Stencil, cell_internal_messages


# band orders and the border repairs are tried when no cell or tile comes
# this close to the bound
CLOSE_ENOUGH = 0.01


@dataclass(frozen=True)
class Candidate:
    name: str
    cell: tuple[int, ...] | None
    curve: str
    traffic: Traffic
    order: np.ndarray


def factorisations(k: int, ndim: int) -> list[tuple[int, ...]]:
    """Every ordered tuple of ndim positive integers whose product is k."""
    if ndim == 1:
        return [(k,)]
    out = []
    for first in range(1, k + 1):
        if k % first == 0:
            out += [(first, *rest) for rest in factorisations(k // first, ndim - 1)]
    return out


def tiles_grid(stencil: Stencil, cell: tuple[int, ...]) -> bool:
    """Whether whole cells cover the grid (none is clipped at the border)."""
    return all(g % c == 0 for c, g in zip(cell, stencil.grid))


def candidate_cells(stencil: Stencil, ppn: int, keep: int) -> list[tuple[int, ...]]:
    """The cell shapes of size ppn that fit the grid, best (most inside traffic) first."""
    cells = [c for c in factorisations(ppn, len(stencil.grid))
             if all(ci <= gi for ci, gi in zip(c, stencil.grid))]
    score = {c: (cell_internal_messages(stencil, c), tiles_grid(stencil, c)) for c in cells}
    return sorted(cells, key=lambda c: score[c], reverse=True)[:keep]


def boxes_fall_short(stencil: Stencil, ppn: int) -> bool:
    """Whether every box of ppn ranks has fewer stencil edges than the
    per-node bound allows (then a non-box lattice tile may have more)."""
    best_box = max(cell_internal_messages(stencil, c) // 2
                   for c in factorisations(ppn, len(stencil.grid)))
    return best_box < max_internal_edges(stencil.points, ppn)


def evaluate_named(stencil: Stencil, ppn: int, name: str, order: np.ndarray,
                   cell=None, curve="") -> Candidate:
    return Candidate(name, cell, curve, traffic_of_stencil(node_of_rank(order, ppn), stencil),
                     order)


def baselines(stencil: Stencil, ppn: int) -> list[Candidate]:
    """SMP (identity), round-robin and grid_order's own choice for ``-c ppn``."""
    out = [evaluate_named(stencil, ppn, "SMP (method 1)", method_order(1, stencil.nranks, ppn)),
           evaluate_named(stencil, ppn, "round-robin (method 0)",
                          method_order(0, stencil.nranks, ppn))]
    try:
        cell = go.cell_from_size(stencil.grid, ppn, stencil.major)
    except Exception:  # noqa: BLE001 - no grid_order default for this grid and ppn
        return out
    spec = go.GridSpec(stencil.grid, cell, stencil.major, "Z", cell_size_only=True)
    out.append(evaluate_named(stencil, ppn, f"grid_order -c {ppn}", go.compute(spec)[0],
                              cell, "Z"))
    return out


def search(stencil: Stencil, ppn: int, keep: int = 6,
           curves: tuple[str, ...] = ("Z", "P", "H")) -> tuple[Candidate, list[Candidate], int]:
    """Best order for the stencil: grid_order cells and curves, lattice tiles,
    then (none within CLOSE_ENOUGH of the bound) band orders and the best
    one's border repairs.

    Returns:
        (best candidate, every candidate evaluated, lower bound on off-node messages).
    """
    tried = []
    for cell, curve in itertools.product(candidate_cells(stencil, ppn, keep), curves):
        if curve != curves[0] and tiles_grid(stencil, cell):
            # cells of exactly ppn ranks tile the grid: every curve puts the
            # same cells on nodes, only their order differs, so the off-node
            # traffic is the same; evaluate the first curve only
            continue
        order = go.order(stencil.grid, cell, stencil.major, curve)
        tried.append(evaluate_named(stencil, ppn, f"-{curve} -c {','.join(map(str, cell))}",
                                    order, cell, curve))
    if stencil.nranks > ppn and (stencil.diagonal or boxes_fall_short(stencil, ppn)):
        # 9/27-point: boxes are far from the bound, rounder lattice tiles come
        # close; 5/7-point: boxes are optimal except at some ppn (128: a tile
        # keeps 233 / 305 edges, the best box 232 / 304)
        order = lattice_tiles.tile_order(stencil, ppn)
        if order is not None:
            tried.append(evaluate_named(stencil, ppn, f"lattice tiles of {ppn}", order))
    bound = off_node_lower_bound(stencil, ppn)
    best = min(tried, key=_rank)
    if best.traffic.off_msgs > bound * (1 + CLOSE_ENOUGH):
        tried += [Candidate(name, None, "", traffic, order)
                  for name, order, traffic in bands.candidates(stencil, ppn)]
        best = min(tried, key=_rank)
        repaired = border.refine_at_border(stencil, ppn, best.order, best.traffic.off_msgs)
        if repaired is not None:
            order, traffic = repaired
            tried.append(Candidate(f"{best.name}, border re-cut", None, "", traffic, order))
            best = min(tried, key=_rank)
    return best, tried, bound


def _rank(c: Candidate) -> tuple[int, int]:
    return c.traffic.off_msgs, c.traffic.max_node_off_msgs
