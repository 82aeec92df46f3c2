"""A proven lower bound on the off-node messages of a stencil, for any order.

Every order puts ``ppn`` ranks on each node. One step sends T messages in all
(one per rank and neighbour). A message stays on-node only along an edge of
the stencil graph inside one node, and each such edge carries two messages
(one each way). So for any order

    off-node messages  =  T - 2 * sum over nodes of (edges inside the node)
                      >=  T - 2 * nodes * (max edges inside any set of ppn ranks)

``max_internal_edges`` bounds the inner maximum from above by dynamic
programming over the set's slices (rows in 2-D, planes in 3-D); see
docs/placement.md for the proof of each step:

* inside one row, k points of a path span at most k-1 edges;
* between two adjacent rows of sizes s and t the 5/7-point stencil has at
  most min(s, t) edges, the 9-point stencil (offsets -1, 0, +1) at most
  3m - max(0, 2 - (M - m)) with m, M = min, max(s, t): the discrete
  rearrangement inequality puts the maximum at two centred intervals;
* between two adjacent planes of sizes s and t the 7-point stencil has at
  most min(s, t) edges; the 27-point stencil at most s*t, 9*min(s, t) and
  max over i of [i + E9(s + t - i) + E9(i)], i the points the planes share
  and E9 the 2-D 9-point maximum (a king edge of the union links the planes
  at most once, twice only if both its ends are in both planes);
* gaps between slices only lose edges (the maximum is superadditive).

For the 27-point stencil the smaller of that and king_bound's maxima is used
(exact up to 32 ranks, the ring bound above; both from Steiner symmetrisation).

A periodic dimension adds edges that wrap around; cutting the torus at the
least-populated coordinate of that dimension, at most m <= floor(ppn / n)
points lie on the cut, each with one wrapping edge per stencil offset that
steps across it, and every slice of the unrolled set holds at least m points,
which limits its own edges (max_inside_node).

The bound is exact (tight) when ppn ranks can form the maximising shape and
such shapes tile the grid, e.g. 4x4 blocks of a 5-point periodic grid.

Two more bounds see what the per-node count cannot and the larger is kept:
``line_bound`` (5/7-point: a line a node meets but does not hold costs it
messages) and ``column_bound.column_bound`` (2-D: a node's cut counted column
by column, with a price on the walls, for grids cut into few nodes); the
per-node count itself is sharpened by ``corner_bound`` (2-D 9-point: the
nodes holding the grid's corners are confined to quadrants).
"""

from __future__ import annotations

import functools
import itertools
import math
from functools import lru_cache

import numpy as np

from . import column_bound, corner_bound, king_bound
from ..patterns import STENCILS, Stencil, offsets, total_messages


def _slice_dp(k: int, intra: np.ndarray, cross: np.ndarray, min_slices: int = 1,
              min_part: int = 1) -> np.ndarray:
    """best[j] = max over slice sizes s_1..s_r >= min_part (r >= min_slices)
    summing to j of sum intra[s_i] + sum cross[s_i, s_i+1], for j = 0..k
    (very negative if none)."""
    neg = np.iinfo(np.int64).min // 4
    cap = max(1, min_slices)
    # table[total, last slice size, min(slices, cap)]
    table = np.full((k + 1, k + 1, cap + 1), neg, np.int64)
    for s in range(min_part, k + 1):
        table[s, s, 1] = intra[s]
    for total in range(1, k + 1):
        block = table[total, 1:total + 1]  # (last, count)
        if block.max() == neg:
            continue
        for s in range(min_part, k - total + 1):
            cand = (block + (cross[1:total + 1, s] + intra[s])[:, None]).max(axis=0)
            dest = table[total + s, s]
            dest[2:] = np.maximum(dest[2:], cand[1:cap])
            dest[cap] = max(dest[cap], cand[cap])
    best = np.full(k + 1, neg, np.int64)
    best[0] = 0
    best[1:] = table[1:, :, cap].max(axis=1)
    return best


def _row_tables(k: int, diagonal: bool) -> tuple[np.ndarray, np.ndarray]:
    size = np.arange(k + 1, dtype=np.int64)
    intra = np.maximum(size - 1, 0)
    s, t = np.meshgrid(size, size, indexing="ij")
    lo, hi = np.minimum(s, t), np.maximum(s, t)
    if diagonal:
        cross = np.where(lo > 0, 3 * lo - np.maximum(0, 2 - (hi - lo)), 0)
    else:
        cross = lo
    return intra, cross


@lru_cache(maxsize=None)
def _slice_tables(points: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(intra, cross): most edges inside one slice of s ranks, and between
    adjacent slices of s and t ranks (rows in 2-D, planes in 3-D), s, t <= k."""
    ndim, diagonal = STENCILS[points]
    if ndim == 2:
        return _row_tables(k, diagonal)
    planar = np.asarray(_max_internal_table(9 if diagonal else 5, k), np.int64)
    size = np.arange(k + 1, dtype=np.int64)
    s, t = np.meshgrid(size, size, indexing="ij")
    if not diagonal:
        return planar, np.minimum(s, t)
    big = np.asarray(_max_internal_table(9, 2 * k), np.int64)
    cross3 = np.zeros((k + 1, k + 1), np.int64)
    for a in range(1, k + 1):
        for b in range(a, k + 1):
            shared = np.arange(0, a + 1)
            val = int((shared + big[a + b - shared] + big[shared]).max())
            cross3[a, b] = cross3[b, a] = min(val, 9 * a, a * b)
    return planar, cross3


@lru_cache(maxsize=None)
def _max_internal_table(points: int, k: int, min_slices: int = 1,
                        min_part: int = 1) -> tuple[int, ...]:
    intra, cross = _slice_tables(points, k)
    return tuple(int(v) for v in _slice_dp(k, intra, cross, min_slices, min_part))


def max_internal_edges(points: int, k: int, min_slices: int = 1, min_part: int = 1) -> int:
    """Upper bound on the stencil edges inside any k ranks of an unbounded grid
    that meet at least ``min_slices`` slices (rows in 2-D, planes in 3-D),
    each of them with at least ``min_part`` ranks; -1 if no k ranks can."""
    if min_slices * min_part > max(k, 1):
        return -1  # no set of k points meets that many slices
    if k <= 1:
        return 0
    bound = max(_max_internal_table(points, k, min_slices, min_part)[k], -1)
    if points == 27 and bound >= 0:
        # bounds every k-set, however many slices it meets
        bound = min(bound, king_bound.king3_max_edges(
            k, lambda n: _max_internal_table(9, n)))
    return bound


def max_internal_edges_upto(points: int, k: int) -> tuple[int, ...]:
    """max_internal_edges(points, j) for j = 0..k, from one programme (2-D only)."""
    if STENCILS[points][0] != 2:
        raise ValueError("max_internal_edges_upto: 3-D maxima also need king_bound")
    return _max_internal_table(points, k)


def max_inside_node(stencil: Stencil, k: int) -> int:
    """Upper bound on stencil edges inside any k ranks of this grid, wrap-around included.

    A set that misses some coordinate of a periodic dimension can be unrolled
    there and has no wrapping edge. One that meets all n_d coordinates of
    each dimension d in U is cut, along each, at its least populated
    coordinate (m_d <= k / n_d ranks); an edge that wraps across that cut has
    an end among those m_d ranks, so at most c_d m_d edges wrap (c_d: offsets
    stepping +1 along d). Let d* be the dimension of U with the largest m_d
    = M: the unrolled set has n_d* slices along d* of at least M ranks each,
    which bounds its own edges (slice DP with min_slices, min_part).
    """
    offs = offsets(stencil)
    best = max_internal_edges(stencil.points, k)
    spannable = [(n, int(np.count_nonzero(offs[:, dim] == 1)))
                 for dim, (n, periodic) in enumerate(zip(stencil.grid, stencil.periodic))
                 if periodic and 1 < n <= k]
    for size in range(1, len(spannable) + 1):
        for subset in itertools.combinations(spannable, size):
            for star, (n_star, c_star) in enumerate(subset):
                for m in range(1, k // n_star + 1):
                    inner = max_internal_edges(stencil.points, k, n_star, m)
                    if inner < 0:
                        continue
                    wraps = c_star * m + sum(c * min(m, k // n) for j, (n, c) in enumerate(subset)
                                             if j != star)
                    best = max(best, inner + wraps)
    return best


# line_bound searches every (r_0, ..., r_d) with r_d <= min(ppn, lines along d)
_LINE_BOUND_CELLS = 4_000_000


# prices of a line end tried by line_bound (see its docstring)
_END_PRICES = (0.0, 0.25, 0.5, 0.75, 1.0)


def line_bound(stencil: Stencil, ppn: int) -> int:
    """Lower bound on off-node messages from the grid's lines (5/7-point only).

    The stencil's edges are the grid lines along each dimension. Inside one
    line a node's ranks have at least two neighbours off the node unless it
    holds the whole line (then none); in a non-periodic line, one fewer if it
    holds one of the line's two ends (each end is held by exactly one node).
    A node that meets r_d lines along d and holds f_d of them whole, and holds
    e_d <= r_d - f_d ends of the others, so has at least

        sum over d of  2 (r_d - f_d) - e_d

    off-node messages. The ends held, e_d + 2 f_d over all nodes, add up to
    twice the lines along d (2 L_d). Pricing an end at lam in [0, 1] (a
    Lagrangian relaxation of that sum) gives, for every lam,

        off-node >= nodes * min over (r, f) of [sum_{d periodic} 2 (r_d - f_d)
                       + sum_{d not periodic} ((1 + lam) r_d - (1 - lam) f_d)]
                    - 2 lam * sum_{d not periodic} L_d,

    and the bound is the best over a few prices. lam = 1 spreads the ends
    over all nodes; lam = 0 counts one message per line a node meets but
    does not hold, which sees that a few nodes cannot all sit at the border
    (16x16 in 2 nodes of 128: 32, a straight cut). (r, f) range over what
    k = ppn ranks can have: Loomis-Whitney (k <= r_0 r_1 in 2-D,
    k^2 <= r_0 r_1 r_2 in 3-D), f_d whole lines of n_d ranks plus r_d - f_d
    partial ones of at most n_d - 1 hold k, and a whole line along d meets
    n_d lines along every other dimension. On a small torus it sees what the
    per-node edge count cannot: a node that spans it (a strip) has wrapping
    edges only if its neighbours are strips too. 0 for diagonal stencils.
    """
    grid, per = stencil.grid, stencil.periodic
    # a dimension of one rank has no line of two (the counts below assume n >= 2)
    if stencil.diagonal or any((p and n < 3) or n < 2 for n, p in zip(grid, per)):
        return 0
    k, ndim = ppn, len(grid)
    lines = [stencil.nranks // n for n in grid]
    cap = [min(k, lines[d]) for d in range(ndim)]
    if math.prod(cap) > _LINE_BOUND_CELLS:
        return 0  # a trivial bound rather than a slow one (3-D, ppn > 158)
    axes = np.meshgrid(*(np.arange(1, c + 1) for c in cap), indexing="ij", sparse=True)
    prod = functools.reduce(np.multiply, axes)
    fits = prod >= (k if ndim == 2 else k * k)
    # per dimension: (r, f) of a node with no whole line, and with the most
    # whole lines it can hold (where it can hold one)
    shapes = []
    for d in range(ndim):
        n, r = grid[d], axes[d]
        most = np.minimum(r, (k - r) // max(n - 1, 1))
        whole_ok = most >= 1
        for other in range(ndim):
            if other != d:
                whole_ok = whole_ok & (axes[other] >= n)
        shapes.append(((0, k <= r * (n - 1)), (most, whole_ok)))
    nodes = stencil.nranks // ppn
    ends = sum(lines[d] for d in range(ndim) if not per[d])
    big = np.iinfo(np.int64).max
    best = 0
    for lam in (_END_PRICES if ends else (1.0,)):
        least = None
        for choice in itertools.product(*shapes):
            cost = np.zeros(prod.shape)
            ok = fits
            for d, (f, allowed) in enumerate(choice):
                r = axes[d]
                cost = cost + (2 * (r - f) if per[d] else (1 + lam) * r - (1 - lam) * f)
                ok = ok & allowed
            value = float(np.where(ok, cost, big).min())
            least = value if least is None else min(least, value)
        if least >= big:
            continue  # no shape fits (cannot happen for n >= 2; never a huge bound)
        # integer messages: round the relaxation up (a hair of slack for floats)
        best = max(best, math.ceil(nodes * least - 2 * lam * ends - 1e-9))
    return best


def lower_bounds(stencil: Stencil, ppn: int) -> dict[str, int]:
    """Each proven lower bound on off-node messages, by the name users see.

    "per-node edge count": steps 1-8 of docs/placement.md (max_inside_node);
    "line bound": step 9 (5/7-point); "column bound": step 10 (2-D, few nodes);
    "corner bound": step 11 (the per-node count less what the corner nodes miss).
    """
    return dict(_lower_bounds(stencil, ppn))


# cached: ``place auto`` asks for the bound and then for its name
@lru_cache(maxsize=64)
def _lower_bounds(stencil: Stencil, ppn: int) -> tuple[tuple[str, int], ...]:
    nnodes = stencil.nranks // ppn
    total = total_messages(stencil)
    node_max = max_inside_node(stencil, ppn)
    missed = corner_bound.corner_loss(stencil, ppn, node_max)
    return (("per-node edge count", max(0, total - 2 * nnodes * node_max)),
            ("line bound", line_bound(stencil, ppn)),
            ("column bound", column_bound.column_bound(stencil, ppn, total)),
            ("corner bound", max(0, total - 2 * (nnodes * node_max - missed))))


def bound_source(stencil: Stencil, ppn: int) -> str:
    """Name of the bound that proves off_node_lower_bound (the first of equals)."""
    parts = lower_bounds(stencil, ppn)
    return max(parts, key=parts.get)


def off_node_lower_bound(stencil: Stencil, ppn: int) -> int:
    """Fewest off-node messages per step any order with ppn ranks per node can have.

    Arguments:
        stencil: the pattern (grid, points, periodicity).
        ppn: ranks per node; must divide the number of ranks.
    Returns:
        a lower bound on off-node messages (multiply by msg_bytes for bytes).
    """
    return max(lower_bounds(stencil, ppn).values())
