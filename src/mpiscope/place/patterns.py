"""Stencil communication patterns on a virtual grid of ranks.

A stencil says which neighbours each rank exchanges one message with per
step: 5-point (2-D faces), 9-point (2-D faces and corners), 7-point (3-D
faces), 27-point (3-D faces, edges and corners). Each dimension is periodic or
not. Ranks are numbered on the grid column-major ("C") or row-major ("R"), as
grid_order's -C / -R. A message to oneself (a periodic dimension of size 1) is
not a message and is left out.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from ..errors import UserError
from .orders.grid_order import check_size, fast_dims, rank_of_coords as ranks_of_coords

# points -> (dimensions, whether diagonal neighbours are included)
STENCILS = {5: (2, False), 9: (2, True), 7: (3, False), 27: (3, True)}


@dataclass(frozen=True)
class Stencil:
    """A nearest-neighbour pattern.

    Attributes:
        grid: ranks along each dimension.
        points: 5, 9, 7 or 27.
        periodic: per dimension, whether it wraps around.
        major: how the application numbers the grid ("C" or "R").
        msg_bytes: bytes of every message.
    """

    grid: tuple[int, ...]
    points: int
    periodic: tuple[bool, ...]
    major: str = "R"
    msg_bytes: int = 1

    @property
    def nranks(self) -> int:
        return math.prod(self.grid)

    @property
    def diagonal(self) -> bool:
        return STENCILS[self.points][1]


def make_stencil(grid: tuple[int, ...], points: int, periodic: bool | tuple[bool, ...] = False,
                 major: str = "R", msg_bytes: int = 1) -> Stencil:
    """Validate and build a Stencil (UserError names what is wrong)."""
    if points not in STENCILS:
        raise UserError(f"unknown stencil {points}-point: use 5 or 9 (2-D), 7 or 27 (3-D)")
    ndim = STENCILS[points][0]
    if len(grid) != ndim:
        raise UserError(f"a {points}-point stencil needs a {ndim}-D grid, "
                        f"not {'x'.join(map(str, grid))}")
    if any(n < 1 for n in grid):
        raise UserError("grid dimensions must be >= 1")
    check_size(tuple(grid))
    if isinstance(periodic, bool):
        periodic = (periodic,) * ndim
    if len(periodic) != ndim:
        raise UserError(f"give periodicity for all {ndim} dimensions")
    if msg_bytes < 0:
        raise UserError("message size must be >= 0 bytes")
    return Stencil(tuple(int(n) for n in grid), points, tuple(bool(p) for p in periodic),
                   major, int(msg_bytes))


def offsets(stencil: Stencil) -> np.ndarray:
    """The (m, d) neighbour offsets of the stencil (no zero offset)."""
    ndim = len(stencil.grid)
    out = [o for o in itertools.product((-1, 0, 1), repeat=ndim)
           if any(o) and (stencil.diagonal or sum(map(abs, o)) == 1)]
    return np.array(out, np.int64)


def cell_internal_messages(stencil: Stencil, cell: tuple[int, ...]) -> int:
    """Messages that stay inside one isolated cell (no wrap-around)."""
    return int(sum(math.prod(max(0, c - abs(o)) for c, o in zip(cell, off))
                   for off in offsets(stencil)))


def coords_of_ranks(grid: tuple[int, ...], major: str) -> np.ndarray:
    """(P, d) int64 coordinates of ranks 0..P-1 under the numbering."""
    n = math.prod(grid)
    out = np.empty((n, len(grid)), np.int64)
    rest = np.arange(n, dtype=np.int64)
    for dim in fast_dims(len(grid), major):
        out[:, dim] = rest % grid[dim]
        rest //= grid[dim]
    return out


def neighbour_pairs(stencil: Stencil, coords: np.ndarray | None = None):
    """Yield (src, dst) rank arrays, one pair per offset: src sends one message to dst.

    Generated offset by offset so that a million-rank 27-point stencil never
    holds more than one offset's pairs in memory.
    """
    grid = np.asarray(stencil.grid, np.int64)
    if coords is None:
        coords = coords_of_ranks(stencil.grid, stencil.major)
    src_all = np.arange(len(coords), dtype=np.int64)
    wraps = np.asarray(stencil.periodic) & (grid > 1)
    for off in offsets(stencil):
        dst = coords + off
        keep = np.ones(len(coords), bool)
        for dim in range(len(grid)):
            if off[dim] == 0:
                continue
            if wraps[dim]:
                dst[:, dim] %= grid[dim]
            else:
                keep &= (dst[:, dim] >= 0) & (dst[:, dim] < grid[dim])
        src = src_all[keep]
        dst_rank = ranks_of_coords(dst[keep], stencil.grid, stencil.major)
        yield src, dst_rank


def total_messages(stencil: Stencil) -> int:
    """Messages one step sends in all (self-messages excluded)."""
    return sum(int(np.count_nonzero(s != d)) for s, d in neighbour_pairs(stencil))


def edge_list(stencil: Stencil) -> tuple[np.ndarray, np.ndarray]:
    """All (src, dst) messages of one step, concatenated (small grids, tests, profiles)."""
    pairs = [(s[s != d], d[s != d]) for s, d in neighbour_pairs(stencil)]
    return (np.concatenate([p[0] for p in pairs]), np.concatenate([p[1] for p in pairs]))
