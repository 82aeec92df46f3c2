"""Non-box node shapes for the 9- and 27-point stencils: fundamental domains of lattices.

Boxes cannot reach the 9- or 27-point bound: the sets of ppn ranks with the
most king's-graph edges are octagon-like (2-D) or rounded (3-D). Any set
holding exactly one point of each coset of a lattice L of index ppn tiles
space by L's translates, so each node can be one such tile.

Lattices are enumerated in Hermite normal form: lower-triangular bases whose
rows are (a, 0), (s, b) in 2-D and (a, 0, 0), (s1, b, 0), (s2, s3, c) in 3-D,
with a*b(*c) = ppn and 0 <= s < the diagonal entry of its column. Only
lattices without a short vector are kept (a short lattice vector makes every
fundamental domain long and thin). For each, the "Voronoi" tile (walk Z^d by
Euclidean norm, then lexicographically, keeping the first point of each
coset) is scored; the best few distinct lattices are hill-climbed: one point
moves by a short lattice vector (so the set stays a fundamental domain) while
the edges inside do not drop. King edges found: 2-D 43/97/213/449 for ppn
16/32/64/128 (maxima 43/98/213/452); 3-D 77/202/485/1113 (boxes:
72/184/468/1036).

On a torus whose periods are lattice vectors each node is one tile. On a
non-periodic grid the tiles can be laid out as on that torus (a node crossing
the border is split in two pieces; the tiling is shifted so that the border
splits the fewest tile edges), or clipped at the border and the parts evened
to exactly ppn ranks and refined by the pairwise re-bisection of
``partition`` (METIS on each pair of neighbouring parts); small grids get the
better of the two, grids too large to even the first.
"""

from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ...errors import UserError
from . import partition
from ..evaluate import traffic_of_stencil
from ..patterns import Stencil, coords_of_ranks, edge_list

# Lattices with a nonzero vector shorter than this fraction of ppn^(1/d) are
# skipped: the best 3-D tiles of a search over every lattice of index
# 16/32/64/128 have shortest vectors of 0.97/1.09/1.00/1.12 ppn^(1/3).
MIN_NORM_FRACTION = 0.85
# Upper bound on (lattices scored) x (points walked) for the Voronoi starts
# (~2-3 s of numpy); the minimum norm is lowered from 1.2 ppn^(1/d) towards
# MIN_NORM_FRACTION while the lattices fit in it.
VORONOI_BUDGET = 16_000_000
# Distinct lattices hill-climbed, and steps of each climb (~0.1 s per 2-D climb,
# ~0.2 s in 3-D).
CLIMBED_LATTICES = 10
CLIMB_STEPS = 20_000


@dataclass(frozen=True)
class Tile:
    """A fundamental domain of a lattice.

    Attributes:
        edges: stencil edges between its points.
        basis: the lattice's Hermite basis, one row per basis vector.
        points: its ppn points, one row each.
    """

    edges: int
    basis: tuple[tuple[int, ...], ...]
    points: tuple[tuple[int, ...], ...]


def neighbour_offsets(ndim: int, diagonal: bool) -> np.ndarray:
    """One offset of each +/- pair of the stencil (so each edge is counted once)."""
    out = [o for o in itertools.product((-1, 0, 1), repeat=ndim)
           if o > (0,) * ndim and (diagonal or sum(map(abs, o)) == 1)]
    return np.array(out, np.int64)


def points_by_norm(radius2: float, ndim: int) -> np.ndarray:
    """Points of Z^d with squared norm <= radius2, by norm, then lexicographically."""
    r = math.isqrt(int(radius2))
    axis = np.arange(-r, r + 1, dtype=np.int64)
    pts = np.stack(np.meshgrid(*([axis] * ndim), indexing="ij"), -1).reshape(-1, ndim)
    norm2 = (pts * pts).sum(1)
    pts, norm2 = pts[norm2 <= radius2], norm2[norm2 <= radius2]
    return pts[np.lexsort(tuple(pts[:, k] for k in range(ndim - 1, -1, -1)) + (norm2,))]


def coset_index(bases: np.ndarray, points: np.ndarray) -> np.ndarray:
    """(L, P) index of each point's coset for each of L Hermite bases (L, d, d).

    Subtracting multiples of the basis rows from the last coordinate to the
    first brings a point into the box [0, a) x [0, b) x ...; the box holds one
    point per coset, numbered like a C array.
    """
    ndim = bases.shape[1]
    res = np.broadcast_to(points, (len(bases),) + points.shape).copy()
    for k in range(ndim - 1, -1, -1):
        q = np.floor_divide(res[:, :, k], bases[:, k, k][:, None])
        res -= q[:, :, None] * bases[:, None, k, :]
    idx = np.zeros(res.shape[:2], np.int64)
    for k in range(ndim):
        idx = idx * bases[:, k, k][:, None] + res[:, :, k]
    return idx


def hermite_lattices(n: int, ndim: int, min_norm2: float) -> np.ndarray:
    """(L, d, d) Hermite bases of the lattices of index n in Z^d without a
    nonzero vector of squared norm < min_norm2.

    Built row by row: the first d-1 rows span L's intersection with the
    hyperplane x_d = 0, itself such a lattice of index n / c. A vector
    (v', m c) of L exists iff v' - m s lies in that sub-lattice (s the last
    row's first d-1 entries), i.e. iff coset(m s) = coset(v'); last rows for
    which a short v' does so are dropped without building the lattice.
    """
    if ndim == 1:
        return np.full((1 if n * n >= min_norm2 else 0, 1, 1), n, np.int64)
    short = points_by_norm(min_norm2, ndim - 1)
    short_norm2 = (short * short).sum(1)
    out = []
    for c in (c for c in range(1, n + 1) if n % c == 0):
        for sub in hermite_lattices(n // c, ndim - 1, min_norm2):
            sub1 = sub[None]
            axes = [np.arange(d) for d in np.diag(sub)]
            rows = np.stack(np.meshgrid(*axes, indexing="ij"), -1).reshape(-1, ndim - 1)
            ok = np.ones(len(rows), bool)
            for m in range(1, math.isqrt(max(0, math.ceil(min_norm2) - 1)) // c + 1):
                near = short[short_norm2 < min_norm2 - (m * c) ** 2]
                hit = np.zeros(n // c, bool)
                hit[coset_index(sub1, near)[0]] = True
                ok &= ~hit[coset_index(sub1, m * rows)[0]]
            bases = np.zeros((int(ok.sum()), ndim, ndim), np.int64)
            bases[:, :-1, :-1] = sub
            bases[:, -1, :-1] = rows[ok]
            bases[:, -1, -1] = c
            out.append(bases)
    return np.concatenate(out) if out else np.zeros((0, ndim, ndim), np.int64)


def voronoi_tiles(bases: np.ndarray, walk: np.ndarray, n: int, diagonal: bool,
                  batch: int = 512) -> tuple[np.ndarray, np.ndarray]:
    """For each lattice, the first point of ``walk`` in each of its n cosets.

    Returns:
        (first, edges): (L, n) indices into walk and (L,) stencil edges of
        that tile; edges is -1 where the walk misses a coset.
    """
    ndim = walk.shape[1]
    index = {p: i for i, p in enumerate(map(tuple, walk.tolist()))}
    step = neighbour_offsets(ndim, diagonal)
    # neighbour of each walk point along each offset (len(walk) = outside the walk)
    nbr = np.array([[index.get(tuple(p + o), len(walk)) for o in step]
                    for p in walk], np.int64)
    first = np.empty((len(bases), n), np.int64)
    edges = np.empty(len(bases), np.int64)
    position = np.arange(len(walk), dtype=np.int64)
    for lo in range(0, len(bases), batch):
        part = bases[lo:lo + batch]
        rows = np.arange(len(part))[:, None]
        pick = np.full((len(part), n), len(walk), np.int64)
        np.minimum.at(pick, (rows, coset_index(part, walk)), position)
        covered = pick.max(1) < len(walk)
        pick[~covered] = 0
        member = np.zeros((len(part), len(walk) + 1), bool)
        member[rows, pick] = True
        found = member[rows[:, :, None], nbr[pick]].sum((1, 2))
        first[lo:lo + batch] = pick
        edges[lo:lo + batch] = np.where(covered, found, -1)
    return first, edges


def climb(points: np.ndarray, moves: np.ndarray, diagonal: bool, rng: random.Random,
          steps: int) -> tuple[int, np.ndarray]:
    """Hill climb: move a random point by a random lattice vector of ``moves``
    whenever the stencil edges inside do not drop. Returns the best (edges, points)."""
    ndim = points.shape[1]
    # points as Python ints (mixed radix, far from any wrap) for fast set lookups
    radix = 1 << 20
    weight = np.array([radix ** k for k in range(ndim)], dtype=object)

    def encode(vectors: np.ndarray) -> list[int]:
        return [int(v) for v in (vectors.astype(object) + radix // 2) @ weight]

    def delta_of(vectors: np.ndarray) -> list[int]:
        return [int(v) for v in vectors.astype(object) @ weight]

    step = neighbour_offsets(ndim, diagonal)
    near = delta_of(np.concatenate([step, -step]))
    shifts = delta_of(moves)
    pts = encode(points)
    cells = set(pts)

    def degree(p: int) -> int:
        return sum((p + d) in cells for d in near)

    edges = sum(degree(p) for p in pts) // 2
    best = (edges, list(pts))
    for _ in range(steps):
        i = rng.randrange(len(pts))
        old = pts[i]
        new = old + rng.choice(shifts)
        if new in cells:
            continue
        cells.discard(old)
        gain = degree(new) - degree(old)
        if gain >= 0:
            pts[i] = new
            cells.add(new)
            edges += gain
            if edges > best[0]:
                best = (edges, list(pts))
        else:
            cells.add(old)
    digits = [[(p // radix ** k) % radix - radix // 2 for k in range(ndim)] for p in best[1]]
    return best[0], np.array(digits, np.int64)


@lru_cache(maxsize=None)
def ranked_tiles(ppn: int, ndim: int = 2, diagonal: bool = True, seed: int = 0) -> tuple[Tile, ...]:
    """The climbed tiles of the most promising distinct lattices, most edges first."""
    if ppn < 1:
        raise UserError("ranks per node must be >= 1")
    scale = ppn ** (1 / ndim)
    # every Voronoi tile of a lattice kept below lies within 0.9 ppn^(1/d) of 0
    walk = points_by_norm((scale + 1) ** 2, ndim)
    # roundest lattices first: the roundest possible (face-centred cubic in
    # 3-D, hexagonal in 2-D) have shortest vectors of about 1.12 / 1.07 ppn^(1/d);
    # below MIN_NORM_FRACTION only while none is found (tiny ppn: 3 in 2-D)
    bases = np.zeros((0, ndim, ndim), np.int64)
    fraction = 1.2
    while fraction > 0:
        rounder = hermite_lattices(ppn, ndim, (fraction * scale) ** 2)
        if len(bases) and (len(rounder) * len(walk) > VORONOI_BUDGET
                           or fraction < MIN_NORM_FRACTION - 1e-9):
            break
        bases = rounder
        fraction -= 0.05
    first, edges = voronoi_tiles(bases, walk, ppn, diagonal)
    if edges.max(initial=-1) < 0:
        # lattices that thin have Voronoi tiles reaching beyond the walk
        walk = points_by_norm((2 * scale + 2) ** 2, ndim)
        first, edges = voronoi_tiles(bases, walk, ppn, diagonal)
    near_zero = points_by_norm(max(2 * fraction * scale, scale + 1) ** 2, ndim)
    rng = random.Random(seed)
    seen, tiles = set(), []
    for li in np.argsort(-edges, kind="stable"):
        if edges[li] < 0 or len(tiles) == CLIMBED_LATTICES:
            break
        # the lattice's vectors up to twice its shortest (never shorter than
        # the walk's radius: found among its points)
        vectors = near_zero[coset_index(bases[li:li + 1], near_zero)[0] == 0][1:]
        # lattices equal up to a symmetry of Z^d share edges and vector norms: climb one
        key = (int(edges[li]), tuple((vectors * vectors).sum(1).tolist()))
        if key in seen:
            continue
        seen.add(key)
        moves = vectors[:2 * (3 ** ndim - 1)]
        found, points = climb(walk[first[li]], moves, diagonal, rng, CLIMB_STEPS)
        tiles.append(Tile(found, tuple(map(tuple, bases[li].tolist())),
                          tuple(map(tuple, points.tolist()))))
    return tuple(sorted(tiles, key=lambda t: -t.edges))


def best_tile(ppn: int, ndim: int = 2, diagonal: bool = True, seed: int = 0) -> Tile:
    """The fundamental domain of ppn points with the most stencil edges found."""
    return ranked_tiles(ppn, ndim, diagonal, seed)[0]


def periods_in_lattice(basis, grid: tuple[int, ...]) -> bool:
    """Whether the grid's periods (n_k along axis k) are all vectors of the lattice."""
    return bool(np.all(coset_index(np.asarray(basis, np.int64)[None],
                                   np.diag(np.asarray(grid, np.int64)))[0] == 0))


def tile_labels(coords: np.ndarray, tile: Tile, periods: tuple[int, ...] | None = None) -> np.ndarray:
    """Index (0, 1, ...) of the translate of ``tile`` holding each point.

    A point p lies in the translate by p - t, t the tile's point in p's coset.
    With ``periods`` (lattice vectors: see periods_in_lattice) translates that
    differ by a period are one: the tiles of a torus.
    """
    basis = np.asarray(tile.basis, np.int64)[None]
    points = np.asarray(tile.points, np.int64)
    in_coset = np.empty_like(points)
    in_coset[coset_index(basis, points)[0]] = points
    shift = coords - in_coset[coset_index(basis, coords)[0]]
    if periods is not None:
        shift %= np.asarray(periods, np.int64)
    shift -= shift.min(0)
    _, labels = np.unique(np.ravel_multi_index(shift.T, tuple(shift.max(0) + 1)),
                          return_inverse=True)
    return labels.reshape(-1)


def border_split(tile: Tile, stencil: Stencil) -> tuple[np.ndarray, float]:
    """Shift of the tiling that splits the fewest tile edges (edges of the
    stencil) at the borders of the non-periodic dimensions when it is laid
    out as on a torus, and how many edges it splits.

    Laid out that way (the grid's periods must be lattice vectors), a node
    only loses the edges of its tile that would wrap across a border. Along
    axis k the lattice's k-th coordinates are the multiples of g_k (the gcd
    of the basis' column k), and a plane x_k = m of lattice points holds
    g_k / ppn of them per unit area; so the translates of a tile edge whose
    lower end u has u_k = r (mod g_k) cross the border (area A_k) A_k g_k / ppn
    times when the border falls at r, and not at all otherwise. The shift
    puts each border where the fewest edges cross.
    """
    basis = np.asarray(tile.basis, np.int64)
    points = np.asarray(tile.points, np.int64)
    grid = stencil.grid
    diff = points[None, :, :] - points[:, None, :]
    adjacent = np.abs(diff).max(axis=2) == 1
    if not stencil.diagonal:
        adjacent &= np.abs(diff).sum(axis=2) == 1  # faces only
    shift = np.zeros(len(grid), np.int64)
    split = 0.0
    for k, wraps in enumerate(stencil.periodic):
        if wraps:
            continue
        g = int(np.gcd.reduce(basis[:, k]))
        lower, _ = np.nonzero(adjacent & (diff[:, :, k] == 1))
        crossing = np.bincount(points[lower, k] % g, minlength=g)
        # shifted by t, the border lies between coordinates t - 1 and t
        shift[k] = (int(np.argmin(crossing)) + 1) % g
        area = math.prod(grid) // grid[k]
        split += area * g / len(points) * int(crossing.min())
    return shift, split


# Above this many stencil edges clipped border tiles are not evened (the
# evening and the pairwise re-bisection are Python loops: ~10 s for a 16^3
# 27-point grid, 53,248 edges; ~100 s for a 256^2 9-point grid, 262,144);
# there only grids whose periods are lattice vectors get a tile order (nodes
# wrap around the border). 65,536 is a 128^2 9-point grid.
MAX_EVENED_EDGES = 65_536


def tile_order(stencil: Stencil, ppn: int, seed: int = 0) -> np.ndarray | None:
    """Rank order of lattice tiles, ppn ranks a node; None when no good tile
    fits the grid as a torus and the grid is too large to even clipped tiles."""
    ndim = len(stencil.grid)
    tiles = ranked_tiles(ppn, ndim, stencil.diagonal, seed)
    coords = coords_of_ranks(stencil.grid, stencil.major)
    nodes = stencil.nranks // ppn
    too_large = stencil.nranks * len(neighbour_offsets(ndim, stencil.diagonal)) > MAX_EVENED_EDGES
    folded = None
    fitting = [t for t in tiles if periods_in_lattice(t.basis, stencil.grid)]
    if fitting:
        # the grid's periods are lattice vectors: tiles that wrap around are
        # one node (on a non-periodic grid such a node is split in pieces at
        # opposite borders); keep the tile that loses least that way
        splits = [border_split(tile, stencil) for tile in fitting]
        kept = [nodes * tile.edges - lost for tile, (_, lost) in zip(fitting, splits)]
        best = int(np.argmax(kept))
        folded = tile_labels(coords + splits[best][0], fitting[best], stencil.grid)
        if all(stencil.periodic) or too_large:
            return np.argsort(folded, kind="stable")
    shift, _ = border_split(tiles[0], stencil)
    labels = tile_labels(coords + shift, tiles[0])
    sizes = np.bincount(labels)
    if len(sizes) == nodes and np.all(sizes == ppn):
        return np.argsort(labels, kind="stable")
    if too_large:
        return None
    # clipped tiles evened and re-bisected usually lose less at the border
    # than split ones, not always (64^2 9-point ppn 16: 10,796 vs 10,384)
    evened = _even_clipped_tiles(stencil, ppn, labels)
    if folded is not None and (traffic_of_stencil(folded, stencil).off_msgs
                               < traffic_of_stencil(evened, stencil).off_msgs):
        return np.argsort(folded, kind="stable")
    return np.argsort(evened, kind="stable")


def _even_clipped_tiles(stencil: Stencil, ppn: int, labels: np.ndarray) -> np.ndarray:
    """Parts of exactly ppn ranks from tiles clipped by the grid's border."""
    nparts = stencil.nranks // ppn
    sizes = np.bincount(labels)
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
    return partition._refine(part, xadj, adjncy, ew, ppn)
