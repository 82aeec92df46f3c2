#!/usr/bin/env python3
"""Regenerate the 27-point per-node maxima stored in place/bounds/king_bound.py.

EXACT_3D[k]: the exact maximum of edges inside k points of the 3-D king's
lattice, by enumerating plane partitions (king_optimum; k = 32 takes a few
minutes). RING_3D[k]: the ring bound (king3_ring_bound, psi enumerated for
planes of up to PSI_PLANES points; ~1 min for k up to 256). Prints a table
(k, exact, ring bound, the plane-DP bound they replace, best box) and the two
tuple literals to paste into king_bound.py; checks that the ring bound is never
below the exact maximum.

    python3 perf/placement/king_exact.py [--exact-max 32] [--ring-max 256]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))

import numpy as np  # noqa: E402

from mpiscope.place.bounds import stencil_bound, king_bound  # noqa: E402
from mpiscope.place.patterns import make_stencil  # noqa: E402
from mpiscope.place.patterns import cell_internal_messages  # noqa: E402
from mpiscope.place.orders.search import candidate_cells  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--exact-max", type=int, default=32, help="enumerate k = 0..N exactly")
    ap.add_argument("--ring-max", type=int, default=256, help="ring bound for k = 0..N")
    args = ap.parse_args(argv)
    planar = np.asarray(stencil_bound._max_internal_table(9, args.ring_max), np.int64)
    ring = [king_bound.king3_ring_bound(k, planar) for k in range(args.ring_max + 1)]
    exact = []
    print("| k | exact | ring bound | plane DP | best box | s |")
    print("|---:|---:|---:|---:|---:|---:|")
    for k in range(max(args.exact_max, args.ring_max) + 1):
        t0 = time.perf_counter()
        if k <= args.exact_max:
            exact.append(king_bound.king_edges_exact(3, k))
            if k < len(ring) and ring[k] < exact[k]:
                raise SystemExit(f"ring bound {ring[k]} below the exact maximum {exact[k]} at k={k}")
        st = make_stencil((k or 1,) * 3, 27)
        box = max(cell_internal_messages(st, c) for c in candidate_cells(st, k, 100)) // 2 if k else 0
        dp = stencil_bound._max_internal_table(27, k)[k] if 0 < k <= 64 else ""
        print(f"| {k} | {exact[k] if k < len(exact) else ''} | {ring[k] if k < len(ring) else ''} | "
              f"{dp} | {box} | {time.perf_counter() - t0:.1f} |", flush=True)
    print(f"\nEXACT_3D = ({', '.join(map(str, exact))})")
    print(f"RING_3D = ({', '.join(map(str, ring))})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
