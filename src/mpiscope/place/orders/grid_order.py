"""Cray's ``grid_order``, reimplemented: rank orders for nearest-neighbour grids.

The application numbers the ranks of a virtual grid column-major (-C: the
first dimension changes fastest, like Fortran) or row-major (-R: the last
changes fastest). The grid is cut into cells (-c); all ranks of a cell are
listed consecutively, so a cell whose size equals the ranks per node lands on
one node. Cells are visited in plain order (-Z), serpentine order (-P) or
along a Hilbert curve (-H); inside a cell ranks follow the grid's numbering.

Grids that cells do not tile are cut into regions: for every dimension the
part the cell tiles ([0, q*c)) and the remainder ([q*c, N)); each region is
tiled with the cell clipped to the region. Region 0 is the tiled part, as in
grid_order's ``# Region 0: 0,0 (0..11519)`` for an 81x144 grid with 8x2 cells.

A single number given to -c for a grid of two or more dimensions is a cell
size: the cell takes, dimension by dimension (the fastest first, then the
others in order), the largest share of that size the grid dimension allows.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from ...errors import UserError
from .curves import CURVES

# Ranks per output line when neither -n nor -c says.
DEFAULT_RANKS_PER_LINE = 16
# Largest grid handled: orders and coordinates are held in memory (~1 GiB here).
MAX_RANKS = 1 << 26


@dataclass(frozen=True)
class GridSpec:
    """What grid_order was asked for.

    Attributes:
        grid: ranks along each dimension.
        cell: cell extent along each dimension (None: one rank per cell, -H only).
        major: "C" (first dimension fastest) or "R" (last dimension fastest).
        curve: "Z", "P" or "H".
        max_rank: -m; ranks above it are left out, ranks past the grid up to it appended.
        ranks_per_line: -n; None means one cell per line.
        cell_size_only: -c was a single number for a multi-dimensional grid.
    """

    grid: tuple[int, ...]
    cell: tuple[int, ...] | None
    major: str = "R"
    curve: str = "Z"
    max_rank: int | None = None
    ranks_per_line: int | None = None
    cell_size_only: bool = False

    @property
    def nranks(self) -> int:
        return math.prod(self.grid)


@dataclass(frozen=True)
class Region:
    origin: tuple[int, ...]
    extent: tuple[int, ...]
    cell: tuple[int, ...]


def parse_dims(text: str, what: str) -> tuple[int, ...]:
    """'8,2' -> (8, 2); a one-line UserError for anything else."""
    try:
        dims = tuple(int(t) for t in text.replace("x", ",").split(","))
    except ValueError:
        raise UserError(f"{what} must be comma-separated positive integers, not {text!r}") from None
    if not dims or any(d < 1 for d in dims):
        raise UserError(f"{what} must be comma-separated positive integers, not {text!r}")
    return dims


def check_size(grid: tuple[int, ...]) -> None:
    """UserError for a grid too large to hold in memory."""
    if math.prod(grid) > MAX_RANKS:
        raise UserError(f"a grid of {math.prod(grid):,} ranks is more than mpiscope place "
                        f"handles ({MAX_RANKS:,})")


def fast_dims(ndim: int, major: str) -> list[int]:
    """Dimensions from fastest to slowest-changing rank number."""
    return list(range(ndim)) if major == "C" else list(range(ndim - 1, -1, -1))


def cell_from_size(grid: tuple[int, ...], size: int, major: str) -> tuple[int, ...]:
    """A cell of ``size`` ranks shaped from the grid's divisors (see module doc)."""
    first = fast_dims(len(grid), major)[0]
    order = [first] + [d for d in range(len(grid)) if d != first]
    cell = [1] * len(grid)
    rest = size
    for dim in order:
        cell[dim] = math.gcd(grid[dim], rest)
        rest //= cell[dim]
    if rest != 1:
        raise UserError(f"a cell of {size} ranks cannot be cut from a "
                        f"{'x'.join(map(str, grid))} grid; give its dimensions with -c n1,n2,...")
    return tuple(cell)


def make_spec(grid: str, cell: str | None, major: str, curve: str = "Z",
              max_rank: int | None = None, ranks_per_line: int | None = None) -> GridSpec:
    """Validate grid_order's options and build a GridSpec (UserError on bad input)."""
    g = parse_dims(grid, "-g")
    check_size(g)
    if major not in ("C", "R"):
        raise UserError("give -C (column-major) or -R (row-major) numbering")
    if curve not in CURVES:
        raise UserError(f"unknown curve {curve!r}: use -Z, -P or -H")
    size_only = False
    c = None
    if cell is not None:
        c = parse_dims(cell, "-c")
        if len(c) == 1 and len(g) > 1:
            c, size_only = cell_from_size(g, c[0], major), True
        if len(c) != len(g):
            raise UserError(f"-c has {len(c)} dimensions but -g has {len(g)}")
        if any(ci > gi for ci, gi in zip(c, g)):
            raise UserError(f"cell {'x'.join(map(str, c))} is larger than the grid "
                            f"{'x'.join(map(str, g))}")
    elif curve != "H":
        raise UserError("-c n1,n2,... is required (except with -H)")
    if max_rank is not None and max_rank < 0:
        raise UserError("-m must be a rank number >= 0")
    if ranks_per_line is not None and ranks_per_line < 1:
        raise UserError("-n must be >= 1")
    return GridSpec(g, c, major, curve, max_rank, ranks_per_line, size_only)


def regions(spec: GridSpec) -> list[Region]:
    """The grid cut into regions the (clipped) cell tiles, region 0 first."""
    cell = spec.cell or (1,) * len(spec.grid)
    parts = []
    for n, c in zip(spec.grid, cell):
        full = (n // c) * c
        parts.append([(0, full, c)] + ([(full, n - full, n - full)] if full < n else []))
    out = []
    for combo in itertools.product(*parts):
        origin = tuple(p[0] for p in combo)
        extent = tuple(p[1] for p in combo)
        if all(e > 0 for e in extent):
            out.append(Region(origin, extent, tuple(p[2] for p in combo)))
    return out


def rank_of_coords(coords: np.ndarray, grid: tuple[int, ...], major: str) -> np.ndarray:
    """Rank numbers of (n, d) grid coordinates under -C / -R numbering."""
    rank = np.zeros(len(coords), np.int64)
    for dim in reversed(fast_dims(len(grid), major)):
        rank = rank * grid[dim] + coords[:, dim]
    return rank


def _cell_dims_order(spec: GridSpec) -> list[int]:
    dims = fast_dims(len(spec.grid), spec.major)
    if spec.cell_size_only:  # the order the cell was grown in (see cell_from_size)
        dims = [dims[0]] + [d for d in range(len(spec.grid)) if d != dims[0]]
    return dims


def region_order(spec: GridSpec, region: Region) -> np.ndarray:
    """Ranks of one region: cells along the curve, each cell's ranks together."""
    dims = _cell_dims_order(spec)
    ncells = tuple(e // c for e, c in zip(region.extent, region.cell))
    cells = CURVES[spec.curve](ncells, dims)
    inside = CURVES["Z"](region.cell, dims)
    coords = (np.asarray(region.origin, np.int64)
              + cells[:, None, :] * np.asarray(region.cell, np.int64)
              + inside[None, :, :]).reshape(-1, len(spec.grid))
    return rank_of_coords(coords, spec.grid, spec.major)


def compute(spec: GridSpec) -> tuple[np.ndarray, list[tuple[Region, int, int]]]:
    """The rank order and, per region, (region, first position, last position)."""
    pieces, spans, pos = [], [], 0
    for reg in regions(spec):
        ranks = region_order(spec, reg)
        if spec.max_rank is not None:
            ranks = ranks[ranks <= spec.max_rank]
        if len(ranks):
            pieces.append(ranks)
            spans.append((reg, pos, pos + len(ranks) - 1))
            pos += len(ranks)
    order = np.concatenate(pieces) if pieces else np.zeros(0, np.int64)
    if spec.max_rank is not None and spec.max_rank >= spec.nranks:
        order = np.concatenate([order, np.arange(spec.nranks, spec.max_rank + 1)])
    return order, spans


def order(grid: tuple[int, ...], cell: tuple[int, ...] | None, major: str = "R",
          curve: str = "Z") -> np.ndarray:
    """Just the rank order (position p holds rank order[p]) for a grid and cell."""
    return compute(GridSpec(tuple(grid), tuple(cell) if cell else None, major, curve))[0]


def header(spec: GridSpec, cell_text: str | None) -> str:
    parts = ["# grid_order", f"-{spec.major}", f"-{spec.curve}"]
    if cell_text is not None:
        parts += ["-c", cell_text]
    parts += ["-g", ",".join(map(str, spec.grid))]
    if spec.max_rank is not None:
        parts += ["-m", str(spec.max_rank)]
    if spec.ranks_per_line is not None:
        parts += ["-n", str(spec.ranks_per_line)]
    return " ".join(parts)


def _chunks(ranks: np.ndarray, per_line: int) -> list[np.ndarray]:
    return [ranks[i:i + per_line] for i in range(0, len(ranks), per_line)]


def _sections(spec: GridSpec) -> list[tuple[str | None, list[np.ndarray]]]:
    """grid_order's output as (region comment or None, its lines of ranks)."""
    full, spans = compute(spec)
    out: list[tuple[str | None, list[np.ndarray]]] = []
    for index, (reg, first, last) in enumerate(spans):
        if spec.ranks_per_line:
            per_line = spec.ranks_per_line
        elif spec.cell:
            per_line = math.prod(reg.cell)
        else:
            per_line = DEFAULT_RANKS_PER_LINE
        out.append((f"# Region {index}: {','.join(map(str, reg.origin))} ({first}..{last})",
                    _chunks(full[first:last + 1], per_line)))
    extra = full[spans[-1][2] + 1:] if spans else full
    if len(extra):
        out.append((None, _chunks(extra, spec.ranks_per_line or DEFAULT_RANKS_PER_LINE)))
    return out


def node_lines(spec: GridSpec) -> list[np.ndarray]:
    """The ranks of each output line: one line is one node (MPICH_RANK_ORDER)."""
    return [line for _, lines in _sections(spec) for line in lines]


def render(spec: GridSpec, cell_text: str | None = None) -> str:
    """grid_order's output: a command comment, then per region a comment and its rows."""
    if cell_text is None and spec.cell is not None:
        cell_text = ",".join(map(str, spec.cell))
    out = [header(spec, cell_text)]
    for comment, lines in _sections(spec):
        if comment is not None:
            out.append(comment)
        out.extend(",".join(line.astype(str)) for line in lines)
    return "\n".join(out) + "\n"
