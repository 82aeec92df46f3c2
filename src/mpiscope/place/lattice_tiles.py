"""Non-box node shapes for the 9-point stencil: fundamental domains of lattices.

Rectangular cells cannot reach the 9-point bound: the sets of ppn ranks with
the most king's-graph edges are octagon-like. Any set holding exactly one
point of each coset of a lattice L of index ppn tiles the plane by L's
translates. Starting from the rectangle of L's Hermite basis (a, 0), (s, b),
a hill climb moves one point by a lattice vector at a time (it stays a
fundamental domain) while the edges inside do not drop; e.g. for ppn 16 it
finds a tile with 43 edges (the maximum for any 16 points; a 4x4 square has 42),
for ppn 32 one with 97 (the maximum is 98, a 4x8 rectangle has 94).

On a finite grid the tiles at the border are clipped, so the parts are
evened to exactly ppn ranks and refined by the pairwise re-bisection of
``partition`` (METIS on each pair of neighbouring parts).
"""

from __future__ import annotations

import random

import numpy as np

from . import partition
from .patterns import Stencil, coords_of_ranks, edge_list

_KING_STEPS = ((1, 0), (0, 1), (1, 1), (1, -1), (-1, 0), (0, -1), (-1, -1), (-1, 1))


def _king_degree(point: tuple[int, int], cells: set) -> int:
    x, y = point
    return sum((x + dx, y + dy) in cells for dx, dy in _KING_STEPS)


def best_tile(ppn: int, seed: int = 0, steps_per_point: int = 300,
              max_aspect: float = 4.0) -> tuple[int, tuple[int, int, int], list]:
    """(edges, (a, s, b), points): the best fundamental domain found over the
    lattices with Hermite basis (a, 0), (s, b), a*b = ppn, a/b and b/a <= max_aspect."""
    rng = random.Random(seed)
    best = (-1, (ppn, 0, 1), [])
    for a in range(1, ppn + 1):
        if ppn % a or max(a, ppn // a) > max_aspect * min(a, ppn // a):
            continue
        b = ppn // a
        for s in range(a):
            moves = [(i * a + j * s, j * b) for i in (-1, 0, 1) for j in (-1, 0, 1) if (i, j) != (0, 0)]
            pts = [(x, y) for y in range(b) for x in range(a)]
            cells = set(pts)
            edges = sum(_king_degree(p, cells) for p in pts) // 2
            top = (edges, list(pts))
            for _ in range(steps_per_point * ppn):
                i = rng.randrange(ppn)
                dx, dy = rng.choice(moves)
                old = pts[i]
                new = (old[0] + dx, old[1] + dy)
                cells.discard(old)
                delta = _king_degree(new, cells) - _king_degree(old, cells)
                if delta >= 0:
                    pts[i] = new
                    cells.add(new)
                    edges += delta
                    if edges > top[0]:
                        top = (edges, list(pts))
                else:
                    cells.add(old)
            if top[0] > best[0]:
                best = (top[0], (a, s, b), top[1])
    return best


def tile_labels(coords: np.ndarray, lattice: tuple[int, int, int], tile: list) -> np.ndarray:
    """Index of the translate of ``tile`` that holds each 2-D point."""
    a, s, b = lattice
    x, y = coords[:, 0], coords[:, 1]

    def canonical(px, py):
        j = np.floor_divide(py, b)
        i = np.floor_divide(px - j * s, a)
        return px - i * a - j * s, py - j * b, i, j

    t = np.asarray(tile, np.int64)
    cx, cy, ti, tj = canonical(t[:, 0], t[:, 1])
    shift_i = np.zeros((a, b), np.int64)
    shift_j = np.zeros((a, b), np.int64)
    shift_i[cx, cy], shift_j[cx, cy] = ti, tj
    px, py, i, j = canonical(x, y)
    li, lj = i - shift_i[px, py], j - shift_j[px, py]
    _, labels = np.unique(li * (1 << 32) + lj, return_inverse=True)
    return labels.reshape(-1)


# Above this many ranks clipped border tiles are not evened (the greedy
# evening is a Python loop: ~100 s at 65,536 ranks); there only grids whose
# periods are lattice vectors get a tile order (nodes wrap around the border).
MAX_EVENED_RANKS = 16_384


def tile_order(stencil: Stencil, ppn: int, seed: int = 0) -> np.ndarray | None:
    """Rank order of lattice tiles on a 2-D grid, ppn ranks a node; None when
    the tiles are clipped, do not fit the grid as a torus and the grid is too
    large to even them."""
    nparts = stencil.nranks // ppn
    _, lattice, tile = best_tile(ppn, seed)
    labels = tile_labels(coords_of_ranks(stencil.grid, stencil.major), lattice, tile)
    a, s, b = lattice
    n0, n1 = stencil.grid
    fits_torus = n1 % b == 0 and n0 % a == 0 and ((n1 // b) * s) % a == 0
    if fits_torus and (all(stencil.periodic) or stencil.nranks > MAX_EVENED_RANKS):
        # the grid's periods are lattice vectors: tiles that wrap around are
        # one node (on a non-periodic grid such a node is split in two pieces
        # at opposite borders, a loss only along the border)
        labels = _fold_on_torus(coords_of_ranks(stencil.grid, stencil.major), lattice, tile,
                                stencil.grid)
        return np.argsort(labels, kind="stable")
    sizes = np.bincount(labels)
    if len(sizes) == nparts and np.all(sizes == ppn):
        return np.argsort(labels, kind="stable")
    if stencil.nranks > MAX_EVENED_RANKS:
        return None
    src, dst = edge_list(stencil)
    xadj, adjncy, ew = partition.symmetric_graph(stencil.nranks, src, dst,
                                                 np.ones(len(src), np.int64))
    # keep the nparts fullest tiles; ranks of the other (clipped) tiles join a
    # neighbouring kept tile, then parts are evened and refined
    keep = np.argsort(-sizes, kind="stable")[:nparts]
    new_id = np.full(len(sizes), -1, np.int64)
    new_id[keep] = np.arange(len(keep))
    part = new_id[labels]
    srcv = np.repeat(np.arange(stencil.nranks, dtype=np.int64), np.diff(xadj))
    while np.any(part < 0):
        lost = (part[srcv] < 0) & (part[adjncy] >= 0)
        if not lost.any():
            part[part < 0] = 0
            break
        part[srcv[lost]] = part[adjncy[lost]]
    part = partition._balance(part, nparts, ppn, xadj, adjncy, ew)
    part = partition._refine(part, xadj, adjncy, ew, ppn)
    return np.argsort(part, kind="stable")


def _fold_on_torus(coords: np.ndarray, lattice, tile, grid) -> np.ndarray:
    """Tile labels on a torus whose periods (n0, 0), (0, n1) are lattice vectors:
    lattice coordinates reduced modulo the periods' sublattice."""
    a, s, b = lattice
    n0, n1 = grid
    x, y = coords[:, 0], coords[:, 1]
    t = np.asarray(tile, np.int64)
    tj = np.floor_divide(t[:, 1], b)
    ti = np.floor_divide(t[:, 0] - tj * s, a)
    cx, cy = t[:, 0] - ti * a - tj * s, t[:, 1] - tj * b
    shift_i = np.zeros((a, b), np.int64)
    shift_j = np.zeros((a, b), np.int64)
    shift_i[cx, cy], shift_j[cx, cy] = ti, tj
    j = np.floor_divide(y, b)
    i = np.floor_divide(x - j * s, a)
    px, py = x - i * a - j * s, y - j * b
    li, lj = i - shift_i[px, py], j - shift_j[px, py]
    # periods in lattice coordinates: (n0, 0) = (n0/a, 0); (0, n1) = (-(n1/b)s/a, n1/b)
    mj = n1 // b
    lj_red = np.mod(lj, mj)
    li = li + (lj_red - lj) // mj * (-(mj * s) // a)
    li_red = np.mod(li, n0 // a)
    return (li_red * mj + lj_red).astype(np.int64)

