#!/usr/bin/env python3
"""How much can any price-based (LP) bound prove at a wall? The half-plane LP.

The per-node bound (docs/placement.md, steps 1-8) lets every node keep
E*(k) edges. On a non-periodic grid the nodes along a wall cannot all be
octagons, and a bound that sees this must charge the wall. The strongest
bounds of that kind are Lagrangian (LP) ones: put a price y_v on every grid
point; for every partition into k-sets S,

    sum_S e(S) <= sum_v y_v + nodes * max_{|S| = k} [e(S) - y(S)],

which is the dual of the set-partitioning LP, so no choice of prices proves
more than the *fractional* relaxation loses. This script computes that
relaxation for a straight wall of the 9-point stencil (a half-plane, prices
depending on the distance d from the wall, rows d >= depth free):

    lambda(k) = max -sum_d y_d  s.t.  e(S) - sum_d y_d s_d(S) <= E*(k) for every k-set S,

the edges per unit of wall length that any such bound can charge. Pricing is
exact: Steiner symmetrisation along the wall keeps each row's size (so the
prices) and never loses an edge, so the maximum over sets is a dynamic
programme over row sizes (centred intervals, the counts of steps 1-2). The LP
is solved by cutting planes (scipy's HiGHS); its dual weights are the
fractional packing of the wall that attains it. `--check` compares the
pricing programme with brute force over every k-subset of a small window.

Then, for every non-periodic 9-point row of docs/perf/placement-quality.json
that misses 5 %, it prints the edges per unit of wall the bound would have
to charge for the best order to be within 5 %: where that is above lambda,
no price-based bound can get there (docs/performance.md, "Why the 14 stay open").

    python3 perf/placement/wall_lp.py [--k 16 32 64 128] [--depth 8 16 24] [--check]
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))

from mpiscope.place.bounds import stencil_bound  # noqa: E402

NEG = -1e18


def row_tables(k: int) -> tuple[np.ndarray, np.ndarray]:
    """(intra, cross) of the 9-point stencil for rows of up to k points (exact
    for nested centred intervals; an upper bound for any two rows)."""
    intra, cross = stencil_bound._row_tables(k, True)
    return intra.astype(float), cross.astype(float)


def free_tail(k: int, intra: np.ndarray, cross: np.ndarray) -> np.ndarray:
    """tail[r, p]: most edges of r more points in the rows after a row of p
    points (p = 0: an empty row), no prices."""
    tail = np.full((k + 1, k + 1), NEG)
    tail[0, :] = 0
    for r in range(1, k + 1):
        s = np.arange(1, r + 1)
        tail[r, :] = (cross[:, s] + intra[s] + tail[r - s, s]).max(axis=1)
        tail[r, :] = np.maximum(tail[r, :], tail[r, 0])  # an empty row first
    return tail


def price(k: int, y: np.ndarray, intra: np.ndarray, cross: np.ndarray,
          tail: np.ndarray | None) -> tuple[float, np.ndarray]:
    """max over k-sets of e(S) - sum_d y[d] s_d(S), and the row sizes of one
    maximiser. Rows d < len(y) carry prices; below them the set continues
    freely (``tail``), or not at all (tail None: a window of len(y) rows)."""
    if tail is None:
        tail = np.full((k + 1, k + 1), NEG)
        tail[0, :] = 0
    value, choices = tail, []
    for d in range(len(y) - 1, -1, -1):
        nxt = np.full((k + 1, k + 1), NEG)
        pick = np.zeros((k + 1, k + 1), int)
        nxt[0, :] = 0
        for r in range(1, k + 1):
            s = np.arange(0, r + 1)
            cand = cross[:, s] + intra[s] - y[d] * s + value[r - s, s]
            best = cand.argmax(axis=1)
            nxt[r, :] = cand[np.arange(k + 1), best]
            pick[r, :] = s[best]
        value = nxt
        choices.append(pick)
    rows, left, prev = [], k, 0
    for pick in reversed(choices):
        s = int(pick[left, prev])
        rows.append(s)
        left, prev = left - s, s
    return float(value[k, 0]), np.array(rows, float)


def wall_lp(k: int, depth: int) -> tuple[float, np.ndarray, list[tuple[float, list[int], int]]]:
    """(lambda, prices y_0..y_depth-1, the fractional packing: (weight, row
    sizes, edges) of each wall set it uses)."""
    from scipy.optimize import linprog

    intra, cross = row_tables(k)
    tail = free_tail(k, intra, cross)
    best = stencil_bound.max_internal_edges(9, k)
    cuts: list[tuple[np.ndarray, float]] = []
    y = np.full(depth, -50.0)
    while True:
        value, rows = price(k, y, intra, cross, tail)
        if value <= best + 1e-7:
            break
        cuts.append((rows, value + y @ rows))
        # e(S) - y.s(S) <= E*  for every set found so far
        res = linprog(np.ones(depth), A_ub=-np.array([c[0] for c in cuts]),
                      b_ub=np.array([best - c[1] for c in cuts]),
                      bounds=[(-50, 50)] * depth, method="highs")
        y = res.x
    weights = -res.ineqlin.marginals
    packing = [(float(w), [int(s) for s in rows[:int(np.max(np.nonzero(rows)[0])) + 1]], int(round(e)))
               for w, (rows, e) in zip(weights, cuts) if w > 1e-9]
    return -float(y.sum()), y, packing


def brute_force(k: int, y: np.ndarray) -> float:
    """max of e(S) - y(S) over every k-subset of a k-wide, len(y)-tall window."""
    cells = [(x, d) for d in range(len(y)) for x in range(k)]
    best = NEG
    for subset in itertools.combinations(range(len(cells)), k):
        pts = [cells[i] for i in subset]
        inside = set(pts)
        edges = sum((x + dx, d + dd) in inside for x, d in pts
                    for dx, dd in ((1, 0), (0, 1), (1, 1), (1, -1)))
        best = max(best, edges - sum(y[d] for _, d in pts))
    return best


def check(trials: int = 4) -> None:
    """The pricing programme against brute force (no free rows below)."""
    rng = np.random.default_rng(1)
    for k, height in ((4, 4), (5, 3), (6, 3)):
        intra, cross = row_tables(k)
        for _ in range(trials):
            y = np.round(rng.uniform(-1.5, 1.5, height), 2)
            dp, _ = price(k, y, intra, cross, None)
            bf = brute_force(k, y)
            assert abs(dp - bf) < 1e-9, (k, y, dp, bf)
    print("pricing programme = brute force on every window tried")


def misses() -> list[tuple[int, str, int, float, float, float]]:
    """(stencil, grid, ppn, % above the bound, edges per node and per unit of
    wall (length in 2-D, area in 3-D) the bound must still charge for 5 %)
    for the rows of docs/perf/placement-quality.json above 5 %."""
    rows = json.loads((ROOT / "docs/perf/placement-quality.json").read_text())
    out = []
    for row in rows:
        if row["best"] <= 1.05 * row["bound"]:
            continue
        grid = tuple(int(g) for g in row["grid"].split("x"))
        nodes = math.prod(grid) // row["ppn"]
        need_edges = (row["best"] / 1.05 - row["bound"]) / 2
        wall = sum(2 * math.prod(grid) // n for n in grid) if not row["periodic"] else 0
        out.append((row["points"], row["grid"] + (" periodic" if row["periodic"] else ""),
                    row["ppn"], row["best_pct"], need_edges / nodes,
                    need_edges / wall if wall else math.nan))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", type=int, nargs="+", default=[16, 32, 64, 128], help="ranks per node")
    ap.add_argument("--depth", type=int, nargs="+", default=[8, 16, 24],
                    help="rows from the wall that carry a price")
    ap.add_argument("--check", action="store_true", help="check pricing against brute force first")
    args = ap.parse_args(argv)
    if args.check:
        check()
    lam = {}
    print("| k | E*(k) | " + " | ".join(f"lambda, {d} rows" for d in args.depth) + " |")
    print("|---:|---:|" + "---:|" * len(args.depth))
    packings = {}
    for k in args.k:
        vals = []
        for depth in args.depth:
            value, _, packing = wall_lp(k, depth)
            vals.append(value)
            packings[k] = packing
        lam[k] = vals[-1]
        print(f"| {k} | {stencil_bound.max_internal_edges(9, k)} | "
              + " | ".join(f"{v:.3f}" for v in vals) + " |", flush=True)
    print("\nthe fractional packing at the deepest prices: its sets that lose edges "
          "(weight per unit of wall x row sizes from the wall, edges); the rest are E*(k)-sets")
    for k, packing in packings.items():
        lossy = [(w, rows, e) for w, rows, e in packing if e < stencil_bound.max_internal_edges(9, k)]
        print(f"  k={k}: " + "; ".join(f"{w:.3f} x {rows} ({e})" for w, rows, e in lossy))
    print("\nWhat the bound must still charge for the best order to be within 5 % "
          "(lambda: the most any price-based bound charges a straight 9-point wall):")
    print("| stencil | grid | ppn | best order | edges per node | edges per unit of wall | lambda(ppn) |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    for points, grid, ppn, gap, per_node, per_wall in misses():
        have = f"{lam[ppn]:.3f}" if points == 9 and ppn in lam else "-"
        print(f"| {points} | {grid} | {ppn} | +{gap:.1f} % | {per_node:.2f} | {per_wall:.3f} | {have} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
