"""A lower bound on off-node messages of a 2-D stencil in few nodes, column by column.

The per-node bound of ``bounds`` lets every node be the best shape of the
infinite lattice. In a small grid cut into few nodes that is far too kind:
two nodes of 128 on a 16x16 9-point grid cannot both be octagons (the bound
allowed 52 messages, a straight cut needs 92). This bound sees the walls.

Off-node messages are the sum over nodes S of cut(S), the stencil edges from
S to the rest of the grid. Let w(S) count the stencil offsets from S that
leave the grid (its contact with a non-periodic wall); over all nodes these
add up to W, fixed by the grid. So for every price nu in [0, 1]

    off-node = sum over S of [cut(S) + nu w(S)] - nu W
            >= nodes * min over k-sets S of [cut(S) + nu w(S)] - nu W.

nu = 0 lets every node sit in a corner; nu = 1 is the infinite lattice. The
right side is concave in nu (a minimum of functions linear in nu, less a
linear term), so a golden-section search finds the best price.

The inner minimum is bounded below by dynamic programming over the grid's
columns (one dimension is cut into columns, the other runs along them). The
cost of S splits exactly into terms of two adjacent columns: the edges
between them (and half of each one's edges along the column, and the walls
they touch). Each such term is at least its minimum over all pairs of column
sets with the same sizes and the same wall contacts (whether the column's
first and last points are in S); that minimum is exact, by a second dynamic
programme along the pair of columns, row by row. Summing the minima over a
sequence of column states (size, wall contacts) and minimising over
sequences gives a lower bound, which is exact whenever the best columns are
intervals lined up as the minima want (a straight cut, a quadrant, a strip
around a torus). A set whose columns leave a gap splits there into two sets
with no edge between them, so its cost is the sum of two smaller minima.

A periodic dimension has no wall; cut into columns, a set that meets every
column is closed into a ring at its least populated column. Both ways of
cutting the grid into columns are tried and the larger bound kept.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ..patterns import Stencil, total_messages

INF = np.inf

# prices of wall contact tried (nu above) by the golden-section search
PRICE_STEPS = 10

# with more nodes one price on the walls cannot tell which nodes touch them,
# and the bound gives nothing over the per-node one (measured: 8 and 16 nodes)
MAX_NODES = 16

# skip the bound when its column programmes would cost more than this many
# (count, state, state) cells in all
BUDGET = 600_000_000


def _pair_minima(rows: int, periodic: bool, diagonal: bool, nu: float, cap: int,
                 cross: bool) -> np.ndarray:
    """min cost[fa, fb, a, b] over column sets X, Y of sizes a, b <= cap.

    The cost is the edges between X (one column) and Y (the next), plus half
    of each one's edges along the column, plus nu per offset that leaves the
    grid through the rows' ends (none if periodic). fa, fb encode whether the
    first and last rows are in X, Y (2 * first + last); with cross=False Y's
    side is ignored (used with b = 0 for a column next to the wall).
    Programme along the rows, state (X_i, Y_i), tracking the first row's state.
    At most 2 cap rows are non-empty, so beyond 4 cap + 2 rows some empty run
    is 2 long and can shrink: longer columns have the same minima.
    """
    rows = min(rows, 4 * cap + 2)
    bits = [(0, 0), (0, 1), (1, 0), (1, 1)]
    diag = cross and diagonal

    def row_cost(s):
        x, y = bits[s]
        return float(cross and x != y)

    def step(s, t):
        (x, y), (u, v) = bits[s], bits[t]
        return 0.5 * (x != u) + 0.5 * (y != v) + (diag and (x != v) + (u != y))

    def wall(s):
        x, y = bits[s]
        return 0.0 if periodic else nu * (0.5 * (x + y) + diag * (x + y))

    table = np.full((4, 4, cap + 1, cap + 1), INF)
    for s in range(4):
        x, y = bits[s]
        table[s, s, x, y] = row_cost(s) + wall(s)
    for _ in range(rows - 1):
        new = np.full_like(table, INF)
        for t in range(4):
            u, v = bits[t]
            best = np.min([table[:, s] + step(s, t) for s in range(4)], axis=0)
            new[:, t, u:, v:] = np.minimum(new[:, t, u:, v:],
                                           best[:, :cap + 1 - u, :cap + 1 - v] + row_cost(t))
        table = new
    out = np.full((4, 4, cap + 1, cap + 1), INF)
    for first, last in itertools.product(range(4), repeat=2):
        close = step(last, first) if periodic else wall(last)
        (x0, y0), (x1, y1) = bits[first], bits[last]
        fa, fb = 2 * x0 + x1, 2 * y0 + y1
        out[fa, fb] = np.minimum(out[fa, fb], table[first, last] + close)
    if periodic:  # no walls: the flags mean nothing, keep the best of each
        out[:, :] = out.min(axis=(0, 1))
    return out


def _set_minimum(cost: np.ndarray, k: int) -> float:
    """Close the minima under splitting: a set of size j may be two sets with no edge between."""
    best = cost[:k + 1].copy()
    for j in range(2, k + 1):
        split = best[1:j] + best[j - 1:0:-1]
        best[j] = min(best[j], split.min())
    return float(best[k])


def _advance(table: np.ndarray, step: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """One more column: table[used, state] -> table[used + size(next), next]."""
    reach = (table[:, :, None] + step[None, :, :]).min(axis=1)
    new = np.full_like(table, INF)
    rows = len(table)
    for c in np.unique(sizes):
        cols = sizes == c
        new[c:, cols] = reach[:rows - c, cols]
    return new


def _min_node_cost(grid: tuple[int, int], periodic: tuple[bool, bool], diagonal: bool,
                   nu: float, k: int) -> float:
    """Lower bound on min over k-sets S of cut(S) + nu w(S).

    Columns are indexed by dimension 0 (n_cols of them) and run along
    dimension 1 (rows)."""
    (n_cols, rows), (per_cols, per_rows) = grid, periodic
    cap = min(k, rows)
    pair = _pair_minima(rows, per_rows, diagonal, nu, cap, cross=True)
    alone = _pair_minima(rows, per_rows, diagonal, nu, cap, cross=False)
    flags = 1 if per_rows else 4
    states = [(f, c) for c in range(1, cap + 1) for f in range(flags) if pair[f, 0, c, 0] < INF]
    fs = np.array([f for f, _ in states])
    cs = np.array([c for _, c in states])
    step = pair[fs[:, None], fs[None, :], cs[:, None], cs[None, :]]   # state -> next state
    free = pair[0, fs, 0, cs]          # the column before the set is empty
    end = pair[fs, 0, cs, 0]           # the column after it is empty
    side = 3 if diagonal else 1        # offsets leaving through a side wall, per point
    wall = nu * side * cs + alone[fs, 0, cs, 0]
    cost = np.full(k + 1, INF)

    def run(start: np.ndarray, steps: int, finish):
        table = np.full((k + 1, len(states)), INF)
        table[cs, np.arange(len(states))] = start
        for t in range(1, steps + 1):
            finish(t, table)
            if t < steps:
                table = _advance(table, step, cs)

    def finish_free(limit_free, limit_wall):
        def finish(t, table):
            if t <= limit_free:
                np.minimum(cost, (table + end).min(axis=1), out=cost)
            if t <= limit_wall:
                np.minimum(cost, (table + wall).min(axis=1), out=cost)
        return finish

    longest = min(n_cols, k)
    if per_cols:
        run(free, longest, finish_free(n_cols - 1, 0))
        if n_cols <= k:  # meets every column: a ring closed at its smallest column
            for i, (f, c) in enumerate(states):
                if c * n_cols > k:
                    continue
                ring_step = np.where(cs[None, :] >= c, step, INF)
                table = np.full((k + 1, len(states)), INF)
                table[c, i] = 0.0
                for _ in range(n_cols - 1):
                    table = _advance(table, ring_step, cs)
                np.minimum(cost, (table + step[:, i]).min(axis=1), out=cost)
    else:
        # start after an empty column, or at the wall; a set spanning all
        # n_cols columns starts and ends at the two walls
        run(free, longest, finish_free(n_cols - 2, n_cols - 1))

        def finish_wall(t, table):
            if t <= n_cols - 1:
                np.minimum(cost, (table + end).min(axis=1), out=cost)
            if t == n_cols:
                np.minimum(cost, (table + wall).min(axis=1), out=cost)
        run(wall, longest, finish_wall)
    return _set_minimum(cost, k)


def _ops(grid: tuple[int, int], k: int, periodic: tuple[bool, bool]) -> int:
    cap = min(k, grid[1])
    states = cap * (1 if periodic[1] else 4)
    steps = min(grid[0], k) * (2 + (cap if periodic[0] else 0))
    return (k + 1) * states * states * steps


def _best_price(value, steps: int) -> float:
    """Largest value(nu) found by golden-section search on [0, 1] (value is concave)."""
    ratio = (math.sqrt(5) - 1) / 2
    lo, hi = 0.0, 1.0
    a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    va, vb = value(a), value(b)
    best = max(value(0.0), va, vb)
    for _ in range(steps - 3):
        if va >= vb:
            hi, b, vb = b, a, va
            a = hi - ratio * (hi - lo)
            va = value(a)
        else:
            lo, a, va = a, b, vb
            b = lo + ratio * (hi - lo)
            vb = value(b)
        best = max(best, va, vb)
    return best


def column_bound(stencil: Stencil, ppn: int, total: int | None = None) -> int:
    """Lower bound on off-node messages of a 2-D stencil (0 for 3-D or when too costly).

    Arguments:
        stencil: 5- or 9-point pattern; periodic dimensions need at least 3 ranks.
        ppn: ranks per node (divides the ranks).
        total: the pattern's message count if already known.
    """
    grid, per = stencil.grid, stencil.periodic
    if len(grid) != 2 or any(p and n < 3 for n, p in zip(grid, per)):
        return 0
    if total is None:
        total = total_messages(stencil)
    nodes = stencil.nranks // ppn
    if nodes > MAX_NODES:
        return 0
    offsets_per_rank = 8 if stencil.diagonal else 4
    contact = stencil.nranks * offsets_per_rank - total   # W: offsets leaving the grid
    steps = PRICE_STEPS if contact else 1
    # the transposed grid is the same problem when the grid is square
    orientations = [(0, 1)] if grid[0] == grid[1] and per[0] == per[1] else [(0, 1), (1, 0)]
    best = 0.0
    for axes in orientations:
        g = (grid[axes[0]], grid[axes[1]])
        p = (per[axes[0]], per[axes[1]])
        if _ops(g, ppn, p) * steps * len(orientations) > BUDGET:
            continue

        def value(nu, g=g, p=p):
            return nodes * _min_node_cost(g, p, stencil.diagonal, nu, ppn) - nu * contact
        best = max(best, value(0.0) if steps == 1 else _best_price(value, steps))
    # integer messages: round up (a hair of slack for floats)
    return max(0, math.ceil(best - 1e-9))
