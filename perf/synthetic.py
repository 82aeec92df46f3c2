#!/usr/bin/env python3
"""Write a synthetic mpiscope profile (format v1) without MPI.

A 2-D 5-point stencil on N ranks: Isend/Irecv/Waitall to up to 4 neighbours in
region "halo" (nested in "solve"), an 8-byte Allreduce per step, one Bcast and
one Barrier; 64 ranks per node; one hot rank that computes 3x longer. The
arrays come from mpiscope.testing.synthetic (vectorized numpy, also used by the
tests).

    python3 perf/synthetic.py --ranks 1048576 --mode full /tmp/big.mpiscope
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from mpiscope.testing import write_synthetic  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("output", help="profile file to write (overwritten)")
    ap.add_argument("--ranks", type=int, default=1 << 20, help="number of ranks (default 2^20)")
    ap.add_argument("--mode", choices=("full", "summary"), default="full")
    ap.add_argument("--ppn", type=int, default=64, help="ranks per node (default 64)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--env", action="store_true",
                    help="also write ENV records (each rank bound to its own core)")
    ap.add_argument("--timeline-bins", type=int, default=0, metavar="N",
                    help="also write a timeline of N bins (each rank's times spread evenly)")
    ap.add_argument("--sites", action="store_true",
                    help="also write call sites (CALLSITES, MODULES, META callsites: 9 sites)")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    path = write_synthetic(args.output, args.ranks, mode=args.mode, ppn=args.ppn, seed=args.seed,
                           with_env=args.env, timeline_bins=args.timeline_bins,
                           with_sites=args.sites)
    size = path.stat().st_size
    print(f"{path}: {args.mode} mode, {args.ranks} ranks, {size:,} bytes "
          f"({size / args.ranks:.1f} B/rank), written in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
