#!/usr/bin/env python3
"""Regenerate CORNER_9 in place/bounds/corner_bound.py: the most 9-point edges of k
points in a quadrant that hold its apex (corner_bound.corner_edges_upper:
a MIP over a box at the apex, plus the bound on sets leaving it).

Prints a table (k, quadrant maximum, plane maximum, loss per corner, box
side, seconds) and the tuple literal to paste into corner_bound.py. Needs
scipy (HiGHS); k = 64 takes ~10 s, k = 128 about a minute, all of it about
45 minutes here.

    python3 perf/placement/corner_table.py [--max 128]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))

from mpiscope.place.bounds import stencil_bound, corner_bound  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max", type=int, default=128, help="tabulate k = 0..N")
    args = ap.parse_args(argv)
    table = [0, 0]
    print("| k | quadrant | plane | loss | window | s |")
    print("|---:|---:|---:|---:|---:|---:|")
    for k in range(2, args.max + 1):
        t0 = time.perf_counter()
        value, window = corner_bound.corner_edges_upper(k)
        plane = stencil_bound.max_internal_edges(9, k)
        table.append(value)
        print(f"| {k} | {value} | {plane} | {plane - value} | {window} | "
              f"{time.perf_counter() - t0:.1f} |", flush=True)
    print(f"\nCORNER_9 = ({', '.join(map(str, table))})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
