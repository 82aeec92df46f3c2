#!/usr/bin/env python3
"""Measure `mpiscope html` at scale: write time, peak memory, file size, browser load time.

Writes the synthetic profile (perf/synthetic.py's stencil, 64 ranks per node),
runs `mpiscope html` on it in a child process (wall time and peak RSS of that
process), then opens the page in the system Chromium through playwright and
times navigation until every plotly figure has drawn (fresh page each time).

    python3 perf/html/bench_html.py --ranks 1048576 --dir /tmp
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "tests"))

from mpiscope.testing import write_synthetic  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=1 << 20)
    ap.add_argument("--dir", default="/tmp")
    ap.add_argument("--loads", type=int, default=3, help="browser loads to time")
    ap.add_argument("--keep", action="store_true", help="keep the profile and the page")
    args = ap.parse_args(argv)
    if not Path(args.dir).is_dir():
        ap.error(f"--dir {args.dir}: not a directory")
    d = Path(args.dir)
    prof = d / f"html-bench-{args.ranks}.mpiscope"
    page = d / f"html-bench-{args.ranks}.html"
    write_synthetic(prof, args.ranks, ppn=64)
    page.unlink(missing_ok=True)
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "mpiscope.cli", "html", str(prof), "-o", str(page)],
                   env=env, check=True, stdout=subprocess.DEVNULL)
    write_s = time.perf_counter() - t0
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    peak_kib = ru.ru_maxrss
    # CPU seconds of the child: what the write costs on an idle machine (it is
    # single-threaded), whatever else this shared machine is running.
    write_cpu = ru.ru_utime + ru.ru_stime
    size = page.stat().st_size
    if not args.keep:
        prof.unlink()

    import browser  # tests/browser.py: the test suite's own playwright helper

    loads = []
    with browser.browser() as b:
        for _ in range(args.loads):
            loaded = browser.open_page(b, page)
            assert not loaded.console_errors and not loaded.requests, loaded
            loads.append(loaded.load_seconds)
            nplots = len(loaded.plots())
            loaded.close()
    if not args.keep:
        page.unlink()
    out = {"ranks": args.ranks, "write_s": round(write_s, 2), "write_cpu_s": round(write_cpu, 2),
           "peak_rss_gib": round(peak_kib / 2**20, 2), "file_mb": round(size / 1e6, 2),
           "figures": nplots, "browser_load_s": [round(x, 2) for x in loads],
           "load_average": round(os.getloadavg()[0], 1)}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
