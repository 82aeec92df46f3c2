#!/usr/bin/env python3
"""Exact maxima of edges inside k points of the 3-D king's lattice (27-point stencil).

Prints, for each k, king_edges_exact(3, k) (enumeration of ranked down-sets,
see docs/placement.md), the plane-DP bound it replaces and the best box, and
the dict literal stored as bounds._KING3_EXACT. k = 32 takes a few minutes.

    python3 perf/placement/king_exact.py [KMIN [KMAX]]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))

from mpiscope.place import bounds  # noqa: E402
from mpiscope.place.patterns import make_stencil  # noqa: E402
from mpiscope.place.search import candidate_cells, cell_internal_messages  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kmin", type=int, nargs="?", default=bounds._KING3_LIVE + 1)
    ap.add_argument("kmax", type=int, nargs="?", default=32)
    args = ap.parse_args(argv)
    table = {}
    print("| k | exact | plane DP | best box | s |")
    print("|---:|---:|---:|---:|---:|")
    for k in range(args.kmin, args.kmax + 1):
        t0 = time.perf_counter()
        exact = bounds.king_edges_exact(3, k)
        table[k] = exact
        st = make_stencil((k, k, k), 27)
        box = max(cell_internal_messages(st, c) for c in candidate_cells(st, k, 100)) // 2
        print(f"| {k} | {exact} | {bounds._max_internal_table(27, k)[k]} | {box} | "
              f"{time.perf_counter() - t0:.1f} |", flush=True)
    print("\n_KING3_EXACT = {" + ", ".join(f"{k}: {v}" for k, v in table.items()) + "}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
