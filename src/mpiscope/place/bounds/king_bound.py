"""Most edges inside k points of the king's lattice (9-point stencil in 2-D,
27-point in 3-D): the per-node maximum behind the off-node lower bound.

Both results rest on Steiner symmetrisation (docs/placement.md, steps 7-8):
replacing every line of a set along an axis by the nested centred interval of
its size ({0}, {0,1}, {-1,0,1}, {-1,0,1,2}, ...) never lowers the number of
pairs at l-infinity distance <= 1. Symmetrising along every axis gives a
*ranked down-set*: in ranked coordinates (0, 1, -1, 2, -2, ... numbered
0, 1, 2, 3, 4, ...) its line lengths along the last axis form a partition
(2-D) or a plane partition (3-D) of k. So maxima over all k-sets are maxima
over those.

* ``king_optimum``: the exact maximum, enumerating every (plane) partition;
  the count grows like the number of plane partitions (3-D, k = 20: ~1 s).
* ``king3_ring_bound``: an upper bound for 3-D that needs only 2-D
  enumeration. The z-planes P_0 ⊇ P_1 ⊇ ... of a ranked down-set are nested
  2-D ranked down-sets; P_0 touches P_1 and P_2, and P_r touches P_{r+2}
  (ranked positions 0, 1, -1, 2, -2, ...), so the planes form two chains
  hanging from P_0. Between a plane A and the next plane B ⊆ A of its chain
  the king edges are

      X(A, B) = sum over q in A of m_B(q),   m_B(q) = |closed 3x3 nbhd(q) ∩ B|
              = |B| + 2 e(B) + sum over q in A \\ B of m_B(q)
             <= |B| + 2 e(B) + (sum of the |A| - |B| largest m_B outside B).

  The right side depends on B's shape and only the size of A, so every
  non-root plane contributes at most |B| + psi(|B|, |A| - |B|), where
  psi(b, t) = max over 2-D ranked down-sets B of size b of
  3 e(B) + (t largest outside multiplicities), found by enumerating the
  partitions of b. A dynamic programme over the two chains' plane sizes
  (dropping the constraint that ties the chains together, which only
  enlarges the maximum) then bounds e(S). It equals the exact maximum for
  every k <= 32 checked by enumeration, and is within a few edges of the best
  sets local search finds at 64 and 128 (docs/placement.md).
"""

from __future__ import annotations

import itertools
from functools import lru_cache

import numpy as np

# Stored results of the two computations below, so that a bound costs nothing
# at run time; regenerate (and check) with perf/placement/king_exact.py.
# EXACT_3D[k]: the exact maximum for k points (king_optimum(3, k)).
EXACT_3D = (0, 0, 1, 3, 6, 10, 15, 21, 28, 32, 37, 43, 50, 56, 63, 70, 78, 85, 93, 102, 109,
    116, 123, 131, 139, 146, 154, 162, 171, 178, 187, 197, 208)
# RING_3D[k]: king3_ring_bound(k, exact 2-D maxima) with PSI_PLANES.
RING_3D = (0, 0, 1, 3, 6, 10, 15, 21, 28, 32, 37, 43, 50, 56, 63, 70, 78, 85, 93, 102, 109,
    116, 123, 131, 139, 147, 155, 163, 172, 180, 189, 197, 208, 215, 224, 232, 241, 249, 257,
    266, 274, 282, 291, 300, 310, 319, 328, 337, 347, 355, 363, 372, 382, 391, 401, 410, 419,
    427, 436, 445, 455, 464, 473, 483, 492, 502, 511, 520, 530, 540, 550, 560, 569, 579, 588,
    597, 606, 615, 626, 635, 645, 656, 665, 674, 684, 693, 703, 712, 722, 731, 741, 751, 761,
    770, 780, 790, 799, 810, 820, 830, 839, 849, 860, 869, 880, 889, 900, 910, 919, 930, 939,
    950, 960, 970, 980, 991, 1002, 1011, 1021, 1031, 1042, 1051, 1060, 1070, 1080, 1090, 1100,
    1110, 1120, 1130, 1140, 1150, 1160, 1170, 1180, 1190, 1200, 1210, 1221, 1231, 1242, 1251,
    1261, 1271, 1282, 1292, 1302, 1313, 1324, 1334, 1345, 1355, 1365, 1375, 1386, 1396, 1406,
    1416, 1427, 1436, 1447, 1457, 1469, 1481, 1494, 1506, 1518, 1530, 1543, 1555, 1567, 1579,
    1591, 1603, 1615, 1626, 1637, 1648, 1659, 1670, 1681, 1692, 1703, 1713, 1724, 1736, 1747,
    1758, 1769, 1780, 1791, 1802, 1813, 1823, 1834, 1845, 1857, 1868, 1879, 1890, 1901, 1912,
    1923, 1933, 1944, 1954, 1965, 1976, 1986, 1997, 2008, 2019, 2029, 2040, 2051, 2061, 2073,
    2083, 2094, 2105, 2115, 2126, 2137, 2148, 2158, 2169, 2180, 2191, 2202, 2213, 2223, 2234,
    2245, 2255, 2266, 2278, 2289, 2300, 2311, 2322, 2333, 2344, 2355, 2366, 2377, 2388, 2400,
    2411, 2422, 2433, 2444, 2456, 2467, 2478, 2489, 2500, 2510)

# psi(b, t) is enumerated for planes of up to this many points (p(40) = 37,338
# partitions; the table takes ~10 s); larger planes use a weaker closed form
# (an outside point of a ranked down-set touches at most 5 of its points).
PSI_PLANES = 40


def ranked_position(rank: int) -> int:
    """Coordinate of the rank-th cell of the nested centred intervals
    {0}, {0,1}, {-1,0,1}, {-1,0,1,2}, ...: 0, 1, -1, 2, -2, ..."""
    return (rank + 1) // 2 if rank % 2 else -(rank // 2)


def pairs_1d(a: int, b: int) -> int:
    """Pairs (x, y), x in I_a, y in I_b (nested centred intervals of sizes a, b)
    with |x - y| <= 1: the most any a-set and b-set of integers have."""
    if a == 0 or b == 0:
        return 0
    lo, hi = min(a, b), max(a, b)
    return 3 * lo - max(0, 2 - (hi - lo))


def king_edges_exact(ndim: int, k: int) -> int:
    """Most edges inside k points of the ndim-D king's lattice; see king_optimum."""
    return king_optimum(ndim, k)[0]


def king_optimum(ndim: int, k: int) -> tuple[int, np.ndarray]:
    """Most edges inside k points of the ndim-D king's lattice: exact, by
    enumerating ranked down-sets (module docstring).

    A ranked down-set's lines along the last axis are centred intervals with
    heights h(p) forming a (plane) partition; its ordered pairs at distance
    <= 1 are the sum over p, q (q = p or a king neighbour of p in ranked
    positions) of pairs_1d(h(p), h(q)).

    Returns:
        (edges, points): the maximum and one set of k lattice points (rows of
        coordinates) that has it.
    """
    if k <= 1:
        return 0, np.zeros((k, ndim), np.int64)
    nbr = [[r2 for r2 in range(k + 2) if abs(ranked_position(r) - ranked_position(r2)) <= 1]
           for r in range(k + 1)]
    heights: dict[tuple[int, ...], int] = {}
    best = (-1, {})

    def grow(cell: tuple[int, ...], left: int, pairs: int) -> None:
        nonlocal best
        if left == 0:
            if (pairs - k) // 2 > best[0]:
                best = ((pairs - k) // 2, dict(heights))
            return
        cap = left
        for axis in range(ndim - 1):
            if cell[axis] > 0:
                prev = list(cell)
                prev[axis] -= 1
                cap = min(cap, heights.get(tuple(prev), 0))
        last = ndim - 2  # the fastest-varying axis of the height array
        if cell[last] > 0:
            # closing this row (height 0 here) moves on to the next row
            nxt = _next_row(cell)
            if nxt is not None:
                grow(nxt, left, pairs)
        for h in range(cap, 0, -1):
            gained = pairs_1d(h, h)
            for near in _king_cells(cell, nbr):
                other = heights.get(near, 0)
                if other:
                    gained += 2 * pairs_1d(h, other)
            heights[cell] = h
            step = list(cell)
            step[last] += 1
            grow(tuple(step), left - h, pairs + gained)
            del heights[cell]

    grow((0,) * (ndim - 1), k, 0)
    points = [[*(ranked_position(c) for c in cell), ranked_position(z)]
              for cell, h in best[1].items() for z in range(h)]
    return best[0], np.asarray(points, np.int64)


def _next_row(cell: tuple[int, ...]) -> tuple[int, ...] | None:
    """First cell of the next row of the height array (None in 2-D: one row)."""
    if len(cell) == 1:
        return None
    return (cell[0] + 1, 0)


def _king_cells(cell: tuple[int, ...], nbr: list[list[int]]):
    """Cells of the height array whose ranked positions are king neighbours of
    cell's (cell itself excluded)."""
    for near in itertools.product(*(nbr[c] for c in cell)):
        if near != cell:
            yield near


def partitions(n: int, largest: int | None = None):
    """Every partition of n as a non-increasing tuple of parts."""
    if n == 0:
        yield ()
        return
    for first in range(min(n, largest or n), 0, -1):
        for rest in partitions(n - first, first):
            yield (first, *rest)


def _plane_masks(rows_list: list[tuple[int, ...]], b: int) -> np.ndarray:
    """(len(rows_list), w, w) boolean masks of 2-D ranked down-sets of b points
    (rows: centred intervals of the partition's part sizes, at ranked rows),
    with a margin of 2 so every outside neighbour is inside the array."""
    w = b + 4
    centre = w // 2
    masks = np.zeros((len(rows_list), w, w), np.bool_)
    for i, rows in enumerate(rows_list):
        for r, length in enumerate(rows):
            y = centre + ranked_position(r)
            masks[i, y, centre - (length - 1) // 2:centre + length // 2 + 1] = True
    return masks


def _neighbourhood_counts(masks: np.ndarray) -> np.ndarray:
    """m(q) = points of the set in q's closed 3x3 neighbourhood, per mask."""
    padded = np.pad(masks.astype(np.int8), ((0, 0), (1, 1), (1, 1)))
    w = masks.shape[1]
    return sum(padded[:, 1 + dy:1 + dy + w, 1 + dx:1 + dx + w]
               for dy in (-1, 0, 1) for dx in (-1, 0, 1))


_CHUNK = 4096  # partitions per batch: bounds the masks' memory (~10 MB)


@lru_cache(maxsize=None)
def psi_table(planes: int) -> np.ndarray:
    """psi[b, t] for 1 <= b <= planes and 0 <= t <= tmax (module docstring);
    psi[b, t] for larger t equals psi[b, tmax] (no more outside neighbours)."""
    tmax = 9 * planes  # more than the outside neighbours of any b-set
    t = np.arange(tmax + 1)
    psi = np.zeros((planes + 1, tmax + 1), np.int64)
    for b in range(1, planes + 1):
        parts = partitions(b)
        while chunk := list(itertools.islice(parts, _CHUNK)):
            masks = _plane_masks(chunk, b)
            counts = _neighbourhood_counts(masks).reshape(len(chunk), -1)
            inside = masks.reshape(len(chunk), -1)
            edges = (np.where(inside, counts, 0).sum(axis=1) - b) // 2
            outside = np.where(inside, 0, counts)
            # the t largest outside multiplicities sum to
            # sum over v >= 1 of min(t, #outside points with m >= v)
            top = sum(np.minimum(t[None, :], np.count_nonzero(outside >= v, axis=1)[:, None])
                      for v in range(1, 10))
            np.maximum(psi[b], (3 * edges[:, None] + top).max(axis=0), out=psi[b])
    return psi


def king3_ring_bound(k: int, planar: np.ndarray, planes: int = PSI_PLANES) -> int:
    """Upper bound on the edges inside any k points of the 3-D king's lattice.

    Arguments:
        k: the number of points.
        planar: planar[n] = the most edges inside n points of the 2-D king's
            lattice (n = 0..k; exact values, e.g. the 2-D slice DP).
        planes: psi is enumerated for planes of up to this many points.
    """
    if k <= 1:
        return 0
    planar = np.asarray(planar[:k + 1], np.int64)
    planes = min(planes, k)
    psi = np.zeros((k + 1, k + 1), np.int64)
    enumerated = psi_table(planes)
    psi[:planes + 1] = enumerated[:, np.minimum(np.arange(k + 1), enumerated.shape[1] - 1)]
    for b in range(planes + 1, k + 1):
        # an outside point touches at most 5 points of a ranked down-set
        # (docs/placement.md), and all outside multiplicities sum to 8b - 2e
        t = np.arange(k + 1)
        psi[b] = 3 * planar[b] + np.minimum(5 * t, 8 * b - 2 * planar[b])
    # gain[a, b] = b + psi(b, a - b): what a plane of b points under a plane of
    # a points can add (b <= a)
    a_idx, b_idx = np.meshgrid(np.arange(k + 1), np.arange(k + 1), indexing="ij")
    neg = np.iinfo(np.int64).min // 4
    gain = np.where((b_idx >= 1) & (b_idx <= a_idx),
                    b_idx + psi[b_idx, np.clip(a_idx - b_idx, 0, k)], neg)
    # chain[a, m]: most a chain of planes holding m points adds under a plane of a
    chain = np.full((k + 1, k + 1), neg, np.int64)
    chain[:, 0] = 0
    for m in range(1, k + 1):
        b = np.arange(1, m + 1)
        chain[:, m] = (gain[:, 1:m + 1] + chain[b, m - b][None, :]).max(axis=1)
    best = 0
    for root in range(1, k + 1):
        rest = k - root
        m1 = np.arange(rest + 1)
        both = chain[root, m1] + chain[root, rest - m1]
        best = max(best, int(planar[root] + both.max()))
    return best


def king3_max_edges(k: int, planar) -> int:
    """Best proven upper bound on the edges inside any k points of the 3-D
    king's lattice: the stored exact maximum or ring bound, else the ring
    bound computed now (k beyond the tables).

    Arguments:
        planar: callable n -> sequence of the exact 2-D maxima for 0..n points.
    """
    candidates = [v[k] for v in (EXACT_3D, RING_3D) if k < len(v)]
    if not candidates:
        candidates.append(king3_ring_bound(k, np.asarray(planar(k), np.int64)))
    return min(candidates)
