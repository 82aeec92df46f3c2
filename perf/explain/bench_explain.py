#!/usr/bin/env python3
"""Time and peak memory of `mpiscope diagnose` and `mpiscope compare` at 1,048,576 ranks.

Writes two full-mode synthetic profiles (perf/synthetic.py's 2-D stencil,
64 ranks per node, seeds 1 and 2) and a summary-mode one, then runs each
command as a child process (read + report + rules or comparison + output),
measuring its wall time, CPU time and peak resident set size (os.wait4's
ru_maxrss, which includes the mapped profile's pages). Reuses
perf/reader/bench_reader.py's measurement. Targets (issue 15): < 20 s and
< 2 GiB each. Exit status 1 if a target is missed.

    python3 perf/explain/bench_explain.py [--ranks 1048576] [--dir /tmp] [--env]

--env writes the synthetic profiles with ENV records (every rank bound to its own core,
one variable set), so the report's environment section and the environment rules run on
a million ranks' records too.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "perf" / "reader"))

from bench_reader import RSS_TARGET_B, TIME_TARGET_S, measure  # noqa: E402


def generate(path: Path, nranks: int, mode: str, seed: int, env: bool = False) -> None:
    # In a child process, so this process stays small (ru_maxrss of a child starts at the
    # parent's size at fork).
    subprocess.run([sys.executable, str(REPO / "perf" / "synthetic.py"), "--ranks", str(nranks),
                    "--mode", mode, "--seed", str(seed), *(("--env",) if env else ()), str(path)],
                   check=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=1 << 20)
    ap.add_argument("--dir", default="/tmp", help="where to write the synthetic profiles")
    ap.add_argument("--env", action="store_true", help="profiles with ENV records")
    args = ap.parse_args(argv)
    if not Path(args.dir).is_dir():
        ap.error(f"--dir {args.dir}: not a directory")
    a = Path(args.dir) / f"explain-{args.ranks}.a.mpiscope"
    b = Path(args.dir) / f"explain-{args.ranks}.b.mpiscope"
    s = Path(args.dir) / f"explain-{args.ranks}.summary.mpiscope"
    generate(a, args.ranks, "full", 1, args.env)
    generate(b, args.ranks, "full", 2, args.env)
    generate(s, args.ranks, "summary", 1, args.env)
    cli = [sys.executable, "-m", "mpiscope.cli"]
    runs = [("diagnose", ["diagnose", str(a)]), ("diagnose --json", ["diagnose", "--json", str(a)]),
            ("diagnose --json (summary file)", ["diagnose", "--json", str(s)]),
            ("compare A B", ["compare", str(a), str(b)]),
            ("compare --json A B", ["compare", "--json", str(a), str(b)]),
            ("compare --json A (full) B (summary)", ["compare", "--json", str(a), str(s)])]
    if args.env:
        runs.append(("report --json", ["report", "--json", str(a)]))
    print(f"\nranks: {args.ranks:,}{' with ENV records' if args.env else ''}; load average before: {os.getloadavg()[0]:.1f} "
          "(wall time suffers on a busy machine; CPU time much less)\n")
    print("| command | wall time (s) | CPU time (s) | peak RSS (MiB) |")
    print("|---|---:|---:|---:|")
    ok = True
    for label, cmd in runs:
        secs, cpu, rss, rc = measure(cli + cmd)
        ok &= rc == 0 and secs < TIME_TARGET_S and rss < RSS_TARGET_B
        print(f"| `{label}` | {secs:.1f} | {cpu:.1f} | {rss / 2**20:,.0f} |"
              + ("" if rc == 0 else f" exit {rc}"))
    print(f"\ntargets: < {TIME_TARGET_S:.0f} s and < {RSS_TARGET_B / 2**30:.0f} GiB: "
          f"{'met' if ok else 'MISSED'}")
    for p in (a, b, s):
        p.unlink()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
