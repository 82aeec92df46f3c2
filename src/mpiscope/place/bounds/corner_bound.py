"""Corner bound: the nodes that hold the corners of a non-periodic 2-D grid.

Every corner of the grid is held by some node, and that node lies inside the
grid, so inside the quadrant whose apex is the corner. For the 9-point
stencil no k-set in a quadrant that holds the apex reaches the most edges a
k-set can have in the plane for many k (16 ranks: 42 against the octagon's
43), because the best shapes are octagons and a quadrant has a right angle.
So, with E(k) the per-node maximum and Ec(k) the quadrant maximum,

    off-node = T - 2 sum_S e(S) >= T - 2 (nodes E(k) - loss),

where ``loss`` is the edges the corner nodes must miss: delta = E(k) - Ec(k)
per corner when the four corners lie in four nodes. A node holding two
corners either meets every slice between them (the slice DP with
``min_slices`` bounds it) or leaves a gap, and then it is two sets with no
edge between them, each holding its corner (at most Ec(a) + Ec(k - a));
either way it misses at least L2 edges, so the four corners cost at least
min(4 delta, max(delta, L2)).

Ec(k) is tabulated (``CORNER_9``; ``perf/placement/corner_table.py``
regenerates it): a MIP finds the exact maximum over k-sets in a w x w box
at the apex, and sets that leave the box either meet w + 1 slices from the
apex or leave a gap, both bounded as above; the table holds the largest of
the three, which is the MIP's value at every k (box_side picks w so).
The 5-point stencil loses nothing at a corner (its best sets, quasi-squares,
fit one), and 3-D grids are not covered: their corner nodes are too few to
matter at the sizes that miss. docs/placement.md, step 11.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

# bounds imports this module too; its names are looked up at call time
from . import stencil_bound
from ..patterns import Stencil

# CORNER_9[k]: most 9-point (king) edges in k points of a quadrant that hold
# its apex, k = 0..len-1 (python3 perf/placement/corner_table.py)
CORNER_9: tuple[int, ...] = (
    0, 0, 1, 3, 6, 8, 11, 14, 17, 20, 23, 26, 29, 33, 36, 39, 42, 46, 49, 52, 56, 59,
    63, 66, 69, 73, 76, 80, 83, 87, 90, 94, 97, 101, 104, 108, 111, 115, 118, 122, 126,
    129, 133, 136, 140, 143, 147, 151, 154, 158, 161, 165, 169, 172, 176, 180, 183, 187,
    190, 194, 198, 201, 205, 209, 212, 216, 220, 223, 227, 231, 234, 238, 242, 245, 249,
    253, 256, 260, 264, 267, 271, 275, 279, 282, 286, 290, 293, 297, 301, 304, 308, 312,
    316, 319, 323, 327, 330, 334, 338, 342, 345, 349, 353, 357, 360, 364, 368, 371, 375,
    379, 383, 386, 390, 394, 398, 401, 405, 409, 413, 416, 420, 424, 428, 431, 435, 439,
    443, 446, 450,
)


def corner_edges(points: int, k: int) -> int | None:
    """Upper bound on the edges of k ranks in a quadrant holding its apex.

    Arguments:
        points: the stencil (only 9 is tabulated).
        k: ranks per node.
    Returns:
        the tabulated bound, or None when none is known (no corner term).
    """
    if points == 9 and k < len(CORNER_9):
        return CORNER_9[k]
    return None


def corner_loss(stencil: Stencil, ppn: int, node_max: int) -> int:
    """Edges the nodes holding the grid's corners miss, in total, below node_max each.

    Arguments:
        stencil: a 2-D grid; only one non-periodic along both dimensions,
            each at least 2 ranks long, has corners.
        ppn: ranks per node.
        node_max: the per-node edge maximum the bound subtracts (E(k)).
    Returns:
        a number of edges (0 when the grid has no corners or Ec is unknown).
    """
    if (len(stencil.grid) != 2 or any(stencil.periodic) or min(stencil.grid) < 2
            or stencil.nranks <= ppn):
        return 0
    quadrant = corner_edges(stencil.points, ppn)
    if quadrant is None:
        return 0
    delta = max(0, node_max - quadrant)
    if delta == 0:
        return 0
    # two corners in one node: it meets every slice between them, or it is
    # two parts with no edge between them, each in its own corner's quadrant
    pair = max(_split_max(CORNER_9, ppn),
               *(stencil_bound.max_internal_edges(stencil.points, ppn, n) for n in stencil.grid))
    two_corners = max(delta, node_max - pair)
    return min(4 * delta, two_corners)


def _split_max(most: Sequence[int], k: int) -> int:
    """Most edges of k ranks in two parts with no edge between them, most[j]
    bounding the edges of a part of j ranks."""
    return max((most[a] + most[k - a] for a in range(1, k // 2 + 1)), default=-1)


def corner_edges_upper(k: int, window: int | None = None) -> tuple[int, int]:
    """(upper bound on Ec(k) for the 9-point stencil, window used).

    The MIP's value inside a window x window box at the apex, or the most a
    set leaving the box can have, whichever is larger: a set holding the apex
    with a point at x >= window (or y) meets every column 0..window (window +
    1 slices) or misses one, and then splits. Needs scipy.
    """
    window = window or box_side(k)
    return max(_window_mip(k, window), leaving_box(k, window)), window


def box_side(k: int) -> int:
    """Side of the box at the apex the MIP searches for k ranks: the smallest
    from sqrt(k) + 4 up where sets meeting side + 1 columns cannot come
    within 3 edges of the plane's maximum (every corner loss found is 0-2
    edges, so the MIP's value decides; a test checks it for every tabulated k)."""
    side, target = math.isqrt(k - 1) + 4, stencil_bound.max_internal_edges(9, k) - 3
    while side < k and stencil_bound.max_internal_edges(9, k, side + 1) > target:
        side += 1
    return side


def leaving_box(k: int, window: int) -> int:
    """Most 9-point edges of k ranks holding the apex and a point outside the
    window x window box: they meet window + 1 columns (or rows) or split."""
    return max(_split_max(stencil_bound.max_internal_edges_upto(9, k), k),
               stencil_bound.max_internal_edges(9, k, window + 1))


def _window_mip(k: int, window: int) -> int:
    """Most king edges of k cells of a window x window box that hold cell (0, 0),
    by integer programming (HiGHS via scipy); rounded down from the solver's
    proven upper (dual) bound, so it never undercounts."""
    if k > window * window:
        return -1
    cells = {c: i for i, c in enumerate(itertools.product(range(window), repeat=2))}
    edges = np.array([(i, cells[(x + dx, y + dy)]) for (x, y), i in cells.items()
                      for dx, dy in ((1, -1), (1, 0), (1, 1), (0, 1))
                      if (x + dx, y + dy) in cells])
    result = max_edges_milp(len(cells), edges, k, np.zeros(len(cells)),
                            must=[cells[(0, 0)]])
    if not result.success:
        raise RuntimeError(f"corner MIP for k={k} did not finish: {result.message}")
    return math.floor(-result.mip_dual_bound + 1e-6)


def max_edges_milp(n: int, edges: np.ndarray, k: int, price: np.ndarray,
                   must: Sequence[int] = (), seconds: float | None = None):
    """scipy's HiGHS result for: choose k of n cells maximising the edges
    (rows of ``edges``: cell pairs) between chosen cells less the chosen
    cells' ``price``; cells in ``must`` are chosen. Its objective is the
    negated maximum: x[:n] are the cells, -mip_dual_bound the proven upper
    bound. Needs scipy."""
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import coo_matrix

    m = len(edges)
    # variables: cell chosen (binary), edge inside (z_e <= each end)
    rows = np.repeat(np.arange(2 * m), 2)
    cols = np.stack([np.arange(m) + n, edges[:, 0], np.arange(m) + n, edges[:, 1]], 1).ravel()
    link = coo_matrix((np.tile([1.0, -1.0], 2 * m), (rows, cols)), shape=(2 * m, n + m))
    size = coo_matrix((np.ones(n), (np.zeros(n, int), np.arange(n))), shape=(1, n + m))
    lower = np.zeros(n + m)
    lower[list(must)] = 1
    options = {"mip_rel_gap": 0.0} if seconds is None else {"mip_rel_gap": 1e-6,
                                                              "time_limit": seconds}
    return milp(np.concatenate([np.asarray(price, float), -np.ones(m)]),
                constraints=[LinearConstraint(link, -np.inf, 0), LinearConstraint(size, k, k)],
                bounds=Bounds(lower, np.ones(n + m)),
                integrality=np.concatenate([np.ones(n), np.zeros(m)]),
                options=options)
