#!/usr/bin/env python3
"""Placement speed and memory, each command run as its own process.

* `place auto` on a 1024x1024 5-point grid (1,048,576 ranks), ppn 64;
  also `place grid` for the same grid and `place evaluate` of that order;
* `place auto` on a 128^3 7-point grid (2,097,152 ranks), and with lattice
  tiles on 1,048,576 ranks: 1024x1024 9-point ppn 128, 128x128x64 27-point
  ppn 64;
* `place from-profile` on a 100,000-rank synthetic profile (a 250x400
  5-point stencil with the rank numbering scrambled, 4 KiB per message).

Peak memory is the child's ru_maxrss.

    python3 perf/placement/speed.py [--workdir DIR]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))

from mpiscope import format as fmt  # noqa: E402
from mpiscope.place import patterns  # noqa: E402
from mpiscope.testing import write_profile  # noqa: E402


def timed(cmd: list[str]) -> tuple[float, float]:
    """(seconds, peak RSS MiB) of one child process (os.wait4: that child only)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    secs = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr.read().decode()[-500:]}")
    return secs, usage.ru_maxrss / 1024


def scrambled_profile(path: Path, grid=(250, 400), seed=11) -> None:
    st = patterns.make_stencil(grid, 5, False)
    src, dst = patterns.edge_list(st)
    perm = np.random.default_rng(seed).permutation(st.nranks)
    peers = np.zeros(len(src), fmt.PEER)
    peers["rank"], peers["peer"] = perm[src], perm[dst]
    peers["msgs"], peers["bytes"] = 100, 100 * 4096
    write_profile(path, nranks=st.nranks, peers=peers)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workdir", default=None)
    args = ap.parse_args(argv)
    work = Path(args.workdir or tempfile.mkdtemp(prefix="mpiscope-place-perf-"))
    mpiscope = [sys.executable, "-m", "mpiscope.cli", "place"]
    rows = []
    order = work / "order-1M.txt"
    if order.exists():
        order.unlink()
    secs, rss = timed(mpiscope + ["auto", "--grid", "1024,1024", "--stencil", "5", "-n", "64",
                                  "-o", str(order)])
    rows.append(("place auto --grid 1024,1024 --stencil 5 -n 64 (1,048,576 ranks)", secs, rss))
    secs, rss = timed(mpiscope + ["grid", "-R", "-c", "8,8", "-g", "1024,1024"])
    rows.append(("place grid -R -c 8,8 -g 1024,1024", secs, rss))
    secs, rss = timed(mpiscope + ["evaluate", "-n", "64", "--grid", "1024,1024", "--stencil", "9",
                                  "--order", str(order)])
    rows.append(("place evaluate -n 64 --grid 1024,1024 --stencil 9 --order (auto's)", secs, rss))
    secs, rss = timed(mpiscope + ["auto", "--grid", "128,128,128", "--stencil", "7", "-n", "64"])
    rows.append(("place auto --grid 128,128,128 --stencil 7 -n 64 (2,097,152 ranks)", secs, rss))
    # the lattice-tile paths: 2-D and 3-D king stencils at 1,048,576 ranks
    secs, rss = timed(mpiscope + ["auto", "--grid", "1024,1024", "--stencil", "9", "-n", "128"])
    rows.append(("place auto --grid 1024,1024 --stencil 9 -n 128 (1,048,576 ranks)", secs, rss))
    secs, rss = timed(mpiscope + ["auto", "--grid", "128,128,64", "--stencil", "27", "-n", "64"])
    rows.append(("place auto --grid 128,128,64 --stencil 27 -n 64 (1,048,576 ranks)", secs, rss))
    prof = work / "scrambled-100k.mpiscope"
    if not prof.exists():
        scrambled_profile(prof)
    out = work / "order-100k.txt"
    if out.exists():
        out.unlink()
    secs, rss = timed(mpiscope + ["from-profile", str(prof), "-n", "32", "-o", str(out)])
    rows.append(("place from-profile (100,000 ranks, ppn 32)", secs, rss))
    print("| command | wall time (s) | peak RSS (MiB) |")
    print("|---|---:|---:|")
    for name, s, r in rows:
        print(f"| `{name}` | {s:.1f} | {r:,.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
