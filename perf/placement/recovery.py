#!/usr/bin/env python3
"""from-profile recovery: a stencil with its rank numbering scrambled.

The communication graph of a 5-point (or 9/7-point) stencil is written as a
profile whose rank numbers are a random permutation of the grid positions
(what a code that numbers its ranks arbitrarily would measure). `place
from-profile` sees only the profile; its order's off-node messages are
compared with the best grid-aware order (`place auto`, which knows the grid)
and with the scrambled run's own SMP placement.

With --app, the stencil mini-app itself runs scrambled (its --rank-order)
under `mpiscope run` on Open MPI (64 oversubscribed ranks, 8x8 grid) and the
measured profile is used instead.

    python3 perf/placement/recovery.py [--app]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))

from mpiscope.place import evaluate, patterns  # noqa: E402
from mpiscope.place.orders import search  # noqa: E402
from mpiscope.place.orders.partition import partition_order  # noqa: E402

CASES = [((64, 64), 5, 16), ((128, 128), 5, 64), ((250, 400), 5, 32), ((64, 64), 9, 16),
         ((16, 16, 16), 7, 64), ((32, 32, 32), 7, 32)]


def synthetic(grid, points, ppn, seed=1):
    st = patterns.make_stencil(grid, points, False)
    src, dst = patterns.edge_list(st)
    perm = np.random.default_rng(seed).permutation(st.nranks)
    s, d = perm[src], perm[dst]
    ones = np.ones(len(s), np.int64)
    t0 = time.perf_counter()
    order = partition_order(st.nranks, s, d, ones, ppn)
    secs = time.perf_counter() - t0
    found = evaluate.traffic_of_pairs(evaluate.node_of_rank(order, ppn), s, d, ones, ones).off_msgs
    scrambled_smp = evaluate.traffic_of_pairs(np.arange(st.nranks) // ppn, s, d, ones, ones).off_msgs
    best, _, bound = search.search(st, ppn)
    return found, best.traffic.off_msgs, bound, scrambled_smp, secs


def app_run(tmp: Path, ppn: int = 8) -> tuple[int, int, int]:
    sys.path.insert(0, str(ROOT / "tests"))
    import mpitest
    from mpiscope import native, read
    prog = native.program("openmpi", "examples/stencil")
    perm = np.random.default_rng(5).permutation(64)
    (tmp / "scramble").write_text(",".join(map(str, perm)) + "\n")
    mpitest.run(mpitest.mpiscope_cmd("run", "--", *mpitest.launcher("openmpi", 64), str(prog),
                                     "--grid", "256x256", "--procs", "8x8", "--steps", "10",
                                     "--rank-order", "scramble"), cwd=tmp, timeout=600)
    prof = read(next(tmp.glob("*.mpiscope")))
    s, d = prof.peers["rank"].astype(np.int64), prof.peers["peer"].astype(np.int64)
    m, b = prof.peers["msgs"].astype(np.int64), prof.peers["bytes"].astype(np.int64)
    order = partition_order(prof.nranks, s, d, b, ppn)
    found = evaluate.traffic_of_pairs(evaluate.node_of_rank(order, ppn), s, d, m, b).off_msgs
    smp = evaluate.traffic_of_pairs(np.arange(prof.nranks) // ppn, s, d, m, b).off_msgs
    # Grid-aware best for the 8x8 grid, in the app's messages per neighbour pair.
    st = patterns.make_stencil((8, 8), 5, False)
    best, _, _ = search.search(st, ppn)
    per_pair = int(m.max())
    return found, best.traffic.off_msgs * per_pair, smp


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--app", action="store_true", help="also run the stencil mini-app")
    args = ap.parse_args(argv)
    print("| stencil | grid | ppn | from-profile off-node | grid-aware best | bound | "
          "from-profile vs best | scrambled SMP | s |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for grid, points, ppn in CASES:
        found, best, bound, smp, secs = synthetic(grid, points, ppn)
        print(f"| {points} | {'x'.join(map(str, grid))} | {ppn} | {found} | {best} | {bound} | "
              f"+{(found / best - 1) * 100:.1f}% | {smp} | {secs:.1f} |", flush=True)
    if args.app:
        with tempfile.TemporaryDirectory() as tmp:
            found, best, smp = app_run(Path(tmp))
        print(f"\nstencil mini-app, 8x8 ranks scrambled, ppn 8: from-profile {found} off-node "
              f"msgs, grid-aware best {best} (+{(found / best - 1) * 100:.1f}%), "
              f"scrambled SMP {smp}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
