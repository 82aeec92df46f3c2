#!/usr/bin/env python3
"""What the timeline adds to `mpiscope report` and `mpiscope html` on a 1,048,576-rank
summary-mode profile (issue 32's target: within the 1M-rank times of docs/performance.md
plus 20 %).

Writes the synthetic summary-mode profile (perf/synthetic.py: the 2-D stencil) twice, the
same but for a timeline of --bins bins, then times each command on both files in
alternating order, --rounds times, each as a child process (wall time, CPU time, peak
RSS). Prints the medians and the ratio with / without. Exit status 1 if the median CPU
time with the timeline exceeds 1.2 x the one without.

    python3 perf/timeline/bench_timeline.py [--ranks 1048576] [--bins 256] [--dir /tmp] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "perf" / "reader"))
from bench_reader import measure  # noqa: E402  (wall s, CPU s, peak RSS, exit code of a child)

TARGET_RATIO = 1.2


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=1 << 20)
    ap.add_argument("--bins", type=int, default=256)
    ap.add_argument("--dir", default="/tmp", help="where to write the synthetic profiles")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    files = {}
    for label, bins in (("without", 0), ("with", args.bins)):
        path = Path(args.dir) / f"synthetic-{args.ranks}.summary.tl{bins}.mpiscope"
        subprocess.run([sys.executable, str(REPO / "perf" / "synthetic.py"), "--ranks",
                        str(args.ranks), "--mode", "summary", "--timeline-bins", str(bins),
                        str(path)], check=True)
        files[label] = path
    out = Path(tempfile.mkdtemp(prefix="bench-timeline-"))
    base = [sys.executable, "-m", "mpiscope.cli"]
    commands = {"report --json": lambda f, k: base + ["report", "--json", str(f)],
                "report (tables)": lambda f, k: base + ["report", str(f)],
                "html": lambda f, k: base + ["html", str(f), "-o", str(out / f"{k}.html"),
                                             "--force"]}
    got = {(c, k): [] for c in commands for k in files}
    print(f"ranks {args.ranks:,}, timeline {args.bins} bins; files: " + ", ".join(
        f"{k} {p.stat().st_size:,} B" for k, p in files.items()))
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    for r in range(args.rounds):
        order = list(files) if r % 2 == 0 else list(files)[::-1]   # alternate A/B
        for c, make in commands.items():
            for k in order:
                res = measure(make(files[k], k))
                if res[3] != 0:
                    print(f"{c} on {files[k]} exited {res[3]}")
                    return 1
                got[(c, k)].append(res)
    print(f"load average after: {os.getloadavg()[0]:.1f}\n")
    print("| command | without: wall / CPU (s) | with timeline: wall / CPU (s) | CPU ratio | "
          "peak RSS without / with (MiB) |")
    print("|---|---:|---:|---:|---:|")
    ok = True
    for c in commands:
        med = {k: [statistics.median(x[i] for x in got[(c, k)]) for i in range(3)] for k in files}
        ratio = med["with"][1] / med["without"][1]
        ok &= ratio <= TARGET_RATIO
        print(f"| `{c}` | {med['without'][0]:.2f} / {med['without'][1]:.2f} | "
              f"{med['with'][0]:.2f} / {med['with'][1]:.2f} | {ratio:.2f} | "
              f"{med['without'][2] / 2**20:.0f} / {med['with'][2] / 2**20:.0f} |")
    print(f"\ntarget: CPU time with the timeline <= {TARGET_RATIO} x without: "
          f"{'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
