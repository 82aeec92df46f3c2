#!/usr/bin/env python3
"""`mpiscope report` of a 1,048,576-rank summary-mode profile with call sites (issue 30's
target: under 10 s), and the same for full mode, as child processes timed with their peak
memory (docs/performance.md "Call sites").

Writes perf/synthetic.py's stencil with --sites (9 call sites, one executable that is not
on disk: the sites print as module+offset, so the symbolizer's look-up of a missing file
is in the time) in summary and full mode, then runs `mpiscope report` (tables, --json,
--callsites all) on each. Exit status 1 if the summary report misses 10 s.

    python3 perf/callsites/bench_report_sites.py [--ranks 1048576] [--dir /tmp] [--no-full]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "perf" / "reader"))
from bench_reader import measure  # noqa: E402  (wall, CPU, peak RSS of a child process)

TARGET_S = 10.0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=1 << 20)
    ap.add_argument("--dir", default="/tmp")
    ap.add_argument("--no-full", action="store_true", help="only the summary-mode profile")
    args = ap.parse_args(argv)
    modes = ["summary"] + ([] if args.no_full else ["full"])
    paths = {}
    for mode in modes:
        paths[mode] = Path(args.dir) / f"synthetic-sites-{args.ranks}.{mode}.mpiscope"
        subprocess.run([sys.executable, str(REPO / "perf" / "synthetic.py"), "--ranks",
                        str(args.ranks), "--mode", mode, "--sites", str(paths[mode])], check=True)
    print(f"\nranks: {args.ranks:,}; load average before: {os.getloadavg()[0]:.1f}\n")
    print("| profile | command | wall time (s) | CPU time (s) | peak RSS (MiB) |")
    print("|---|---|---:|---:|---:|")
    ok = True
    base = [sys.executable, "-m", "mpiscope.cli", "report"]
    for mode in modes:
        size = paths[mode].stat().st_size
        for label, extra in (("report", []), ("report --json", ["--json"]),
                             ("report --callsites all", ["--callsites", "all"])):
            secs, cpu, rss, rc = measure(base + extra + [str(paths[mode])])
            if mode == "summary":
                ok &= rc == 0 and secs < TARGET_S
            print(f"| {mode} ({size / 2**20:,.1f} MiB) | `{label}` | {secs:.1f} | {cpu:.1f} | "
                  f"{rss / 2**20:,.0f} |" + ("" if rc == 0 else f" exit {rc}"))
    print(f"\ntarget (summary mode): < {TARGET_S:.0f} s: {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
