"""Band orders: near-box nodes for grids that boxes of ppn ranks do not tile well.

A grid_order cell of exactly ppn ranks tiles the grid only if its sides divide
the grid's, and the squarest such cell is often far from square (64x64 grid,
ppn 128: 8x16, while 11x12 boxes would cut fewer edges). A band order cuts
every dimension but one (the *walk* dimension) into bands of heights h and
h + 1 summing to its size, walks each band along the walk dimension one
cross-section (h_1 x h_2 ... ranks) at a time, and fills nodes with
consecutive ranks. A node is then a box of whole cross-sections, plus a
staircase of one step where it begins or ends inside a cross-section. Bands
are visited back and forth (boustrophedon), so a node that straddles two
bands lies at the grid's side, folded round its end.

The order depends only on the grid and the heights, so it is cheap to build;
``candidates`` ranks height choices by the box they make and evaluates only
the most promising ones.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ..evaluate import Traffic, node_of_rank, traffic_of_stencil
from .grid_order import rank_of_coords
from ..patterns import Stencil, cell_internal_messages, coords_of_ranks, offsets

# Upper bound on (ranks x stencil offsets x band orders evaluated) per search:
# evaluating one order costs ~0.1 s per million rank-offsets.
EVALUATION_BUDGET = 48_000_000
MIN_EVALUATED, MAX_EVALUATED = 2, 48


def split_heights(n: int, h: int) -> list[tuple[int, ...]]:
    """Ways to cut n into bands of heights h and h + 1: all h+1 bands first or last
    (one way if h divides n, none if n cannot be cut so)."""
    for wide in range(0, n // (h + 1) + 1):
        rest = n - wide * (h + 1)
        if rest % h == 0:
            narrow = rest // h
            ways = [(h + 1,) * wide + (h,) * narrow]
            if wide and narrow:
                ways.append((h,) * narrow + (h + 1,) * wide)
            return ways
    return []


def _runs(heights: tuple[int, ...]) -> str:
    """10,10,12 -> '10*2+12'."""
    runs = [(h, len(list(g))) for h, g in itertools.groupby(heights)]
    return "+".join(f"{h}*{n}" if n > 1 else str(h) for h, n in runs)


def _boustrophedon(counts: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Every index tuple below counts, inner indices running back and forth."""
    if len(counts) == 1:
        return [(i,) for i in range(counts[0])]
    inner = _boustrophedon(counts[1:])
    out = []
    for i in range(counts[0]):
        out += [(i, *t) for t in (inner if i % 2 == 0 else inner[::-1])]
    return out


def band_order(grid: tuple[int, ...], major: str, walk: int,
               heights: dict[int, tuple[int, ...]]) -> np.ndarray:
    """The order of a band layout.

    Arguments:
        grid: ranks along each dimension.
        major: the application's rank numbering ("R" or "C").
        walk: the dimension walked along inside a band.
        heights: for every other dimension, its band heights (summing to its size);
            the dimensions are nested in the dictionary's order, outermost first.
    Returns:
        order[p] = the rank at position p.
    """
    slow = list(heights)
    coords = coords_of_ranks(grid, major)
    band_ix, offset, size = [], [], []
    for dim in slow:
        edges = np.cumsum((0,) + tuple(heights[dim]))
        ix = np.searchsorted(edges, coords[:, dim], side="right") - 1
        band_ix.append(ix)
        offset.append(coords[:, dim] - edges[ix])
        size.append(np.asarray(heights[dim], np.int64)[ix])
    counts = tuple(len(heights[d]) for d in slow)
    visits = _boustrophedon(counts)
    serial = np.empty(counts, np.int64)
    start = np.empty(counts, np.int64)
    done = 0
    for s, ix in enumerate(visits):
        serial[ix] = s
        start[ix] = done
        done += grid[walk] * math.prod(heights[d][i] for d, i in zip(slow, ix))
    where = tuple(band_ix)
    section = np.ones(len(coords), np.int64)
    inside = np.zeros(len(coords), np.int64)
    for off, h in zip(offset, size):
        inside = inside * h + off
        section *= h
    step = coords[:, walk]
    step = np.where(serial[where] % 2 == 0, step, grid[walk] - 1 - step)
    position = start[where] + step * section + inside
    order = np.empty(len(coords), np.int64)
    order[position] = rank_of_coords(coords, grid, major)
    return order


def _layouts(stencil: Stencil, ppn: int):
    """(score, name, walk, heights) for band layouts of nodes near ppn ranks;
    the score is the stencil's messages inside the average node's box."""
    grid, ndim = stencil.grid, len(stencil.grid)
    side = ppn ** (1 / ndim)
    for walk in range(ndim):
        slow = [d for d in reversed(range(ndim)) if d != walk]
        options = []
        for dim in slow:
            lo = max(1, int(side / 2))
            hi = min(grid[dim], ppn, int(math.ceil(side * 2)))
            options.append([(h, way) for h in range(lo, hi + 1)
                            for way in split_heights(grid[dim], h)])
        for choice in itertools.product(*options):
            section = math.prod(h for h, _ in choice)
            length = ppn / section
            if length < 1 or length > grid[walk]:
                continue
            box = [0] * ndim
            box[walk] = max(1, round(length))
            for dim, (h, _) in zip(slow, choice):
                box[dim] = h
            heights = {dim: way for dim, (_, way) in zip(slow, choice)}
            name = "bands " + " ".join(f"{'xyz'[d]}={_runs(way)}" for d, way in heights.items()) \
                + f" walk {'xyz'[walk]}"
            yield cell_internal_messages(stencil, tuple(box)) / math.prod(box), name, walk, heights


def candidates(stencil: Stencil, ppn: int) -> list[tuple[str, np.ndarray, Traffic]]:
    """The best band orders for the stencil (name, order, traffic), evaluated
    in order of their nodes' box quality within ``EVALUATION_BUDGET``."""
    if len(stencil.grid) < 2 or stencil.nranks <= ppn:
        return []
    layouts = sorted(_layouts(stencil, ppn), key=lambda t: -t[0])
    cost = stencil.nranks * len(offsets(stencil))
    keep = max(MIN_EVALUATED, min(MAX_EVALUATED, EVALUATION_BUDGET // cost))
    out, seen = [], set()
    for _, name, walk, heights in layouts:
        key = (walk, tuple(heights.items()))
        if key in seen:
            continue
        seen.add(key)
        order = band_order(stencil.grid, stencil.major, walk, heights)
        out.append((name, order, traffic_of_stencil(node_of_rank(order, ppn), stencil)))
        if len(out) >= keep:
            break
    return out
