#!/usr/bin/env python3
"""Placement quality: off-node messages of orders vs the proven lower bound.

For 5/9-point stencils on 2-D grids and 7/27-point stencils on 3-D grids,
non-periodic and periodic, and ppn 16/32/64/128: the best order `place auto`
finds, grid_order's own choice for `-c PPN`, SMP (method 1) and round-robin
(method 0), each as off-node messages per step and as % above the bound.

    python3 perf/placement/quality.py [--quick] [--stencil P] [--grid G] [--ppn N]
                                      [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))

from mpiscope.place.patterns import make_stencil  # noqa: E402
from mpiscope.place.orders.search import baselines, search  # noqa: E402

GRIDS_2D = [(16, 16), (64, 64), (256, 256), (1024, 1024)]
GRIDS_3D = [(16, 16, 16), (32, 32, 32), (64, 64, 64), (128, 128, 128)]
PPNS = [16, 32, 64, 128]


def cases(quick: bool, only_points=None, only_grid=None, only_ppn=None):
    grids2, grids3 = (GRIDS_2D[:3], GRIDS_3D[:2]) if quick else (GRIDS_2D, GRIDS_3D)
    for points, grids in ((5, grids2), (9, grids2), (7, grids3), (27, grids3)):
        if only_points and points != only_points:
            continue
        for grid in grids:
            if only_grid and grid != only_grid:
                continue
            for periodic in (False, True):
                for ppn in PPNS:
                    if only_ppn and ppn != only_ppn:
                        continue
                    if ppn < grid[0] * grid[1] * (grid[2] if len(grid) > 2 else 1):
                        yield points, grid, periodic, ppn


def pct(value: int, bound: int) -> float:
    return (value / bound - 1) * 100 if bound else 0.0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller grids only")
    ap.add_argument("--stencil", type=int, choices=(5, 9, 7, 27), help="only this stencil")
    ap.add_argument("--grid", help="only this grid, e.g. 1024,1024 (one of the table's)")
    ap.add_argument("--ppn", type=int, choices=PPNS, help="only this ppn")
    ap.add_argument("--json", help="also write the rows as JSON here")
    args = ap.parse_args(argv)
    rows = []
    print("| stencil | grid | periodic | ppn | bound | best (cell, curve) | best % | "
          "grid_order -c ppn % | SMP % | round-robin % | s |")
    print("|---|---|---|---:|---:|---|---:|---:|---:|---:|---:|")
    grid = tuple(int(g) for g in args.grid.split(",")) if args.grid else None
    for points, grid, periodic, ppn in cases(args.quick and not grid, args.stencil, grid, args.ppn):
        t0 = time.perf_counter()
        st = make_stencil(grid, points, periodic)
        big = st.nranks > 300_000
        best, _, bound = search(st, ppn, keep=3 if big else 6,
                                curves=("Z", "P") if big and len(grid) == 3 else ("Z", "P", "H"))
        base = {c.name.split(" (")[0].split(" -c")[0]: c.traffic.off_msgs for c in baselines(st, ppn)}
        row = dict(points=points, grid="x".join(map(str, grid)), periodic=periodic, ppn=ppn,
                   bound=bound, best=best.traffic.off_msgs, best_name=best.name,
                   best_pct=pct(best.traffic.off_msgs, bound),
                   grid_order_pct=pct(base["grid_order"], bound) if "grid_order" in base else None,
                   smp_pct=pct(base["SMP"], bound), rr_pct=pct(base["round-robin"], bound),
                   seconds=time.perf_counter() - t0)
        rows.append(row)
        go = f"{row['grid_order_pct']:.1f}" if row["grid_order_pct"] is not None else "-"
        print(f"| {points} | {row['grid']} | {'yes' if periodic else 'no'} | {ppn} | {bound} | "
              f"{best.name} | {row['best_pct']:.1f} | {go} | {row['smp_pct']:.1f} | "
              f"{row['rr_pct']:.1f} | {row['seconds']:.1f} |", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    # exact: best <= 1.05 * bound (126 vs 120 is within, however 5.0 rounds)
    within = sum(1 for r in rows if 100 * r["best"] <= 105 * r["bound"])
    print(f"\nbest order within 5% of the bound in {within} of {len(rows)} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
