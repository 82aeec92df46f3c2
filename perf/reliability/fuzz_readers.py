"""Thousands of mutated profiles through every command that reads one.

    python3 perf/reliability/fuzz_readers.py [--cases 1100] [--seed 1] [--workers 2]
        [--cli-every 50] [--no-real] [--keep DIR]

The table of commands and the mutators are tests/fuzz_profiles.py (CI runs a
slice of it in tests/reliability/test_reader_fuzz.py). The intact profiles mutated are
synthetic ones (full and summary mode) and, unless --no-real, two real ones:
the stencil mini-app at 4 Open MPI ranks under ``mpiscope run`` (full and
summary mode; regions, a Cartesian communicator, MPI-IO, ENV and, with
MPISCOPE_MPIT=1, MPIT sections). Every case runs
every command in-process (``mpiscope.cli.main``) in one of --workers forked
processes and must end in a result or a one-line ``mpiscope: error:``,
within 10 s of CPU, allocating at most 4x what the intact file needs plus 200
bytes per byte of the file; every --cli-every-th case also runs each command
as a real ``mpiscope`` process, which must give the same exit code and error
line. Stops at the first failure and keeps that file (--keep-going: lists
every failure, keeps the files and goes on); else prints the outcome
counts, the most CPU one command took and the largest allocation measured per
command (docs/reliability.md).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO / "src"), str(REPO / "tests")]
import fuzz_profiles  # noqa: E402
import mpitest  # noqa: E402


def real_profiles(work: Path) -> list[Path]:
    """The stencil mini-app at 4 Open MPI ranks, full and summary mode, MPI_T on."""
    from mpiscope import native

    out = []
    for mode in ("full", "summary"):
        d = work / f"real-{mode}"
        d.mkdir(parents=True, exist_ok=True)
        app = str(native.program("openmpi", "examples/stencil"))
        mpitest.run(mpitest.mpiscope_cmd("run", "--mpi", "openmpi", "--dir", str(d), "--mode", mode,
                                         "--", *mpitest.launcher("openmpi", 4), app, "--grid",
                                         "40x24", "--steps", "4", "--io", "mpiio", "--io-every",
                                         "2", "--io-file", str(d / "field.dat")), cwd=d,
                   env={"MPISCOPE_MPIT": "1"})
        out += sorted(d.glob("*.mpiscope"))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=1100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--cli-every", type=int, default=50,
                    help="every Nth case also as real processes (0: never)")
    ap.add_argument("--keep-going", action="store_true",
                    help="list failures (their files kept) and go on instead of stopping")
    ap.add_argument("--no-real", action="store_true", help="synthetic profiles only (no MPI run)")
    ap.add_argument("--keep", default=None, help="directory for the files (default: temporary)")
    args = ap.parse_args()
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(args.keep or tmp)
        work.mkdir(parents=True, exist_ok=True)
        bases = fuzz_profiles.base_profiles(work) + ([] if args.no_real else real_profiles(work))
        sizes = {b.name: b.stat().st_size for b in bases}
        try:
            stats = fuzz_profiles.fuzz(work, args.cases, args.seed, workers=args.workers,
                                       bases=bases, cli_every=args.cli_every,
                                       keep_going=args.keep_going,
                                       on_case=lambda i: (i + 1) % 100 == 0 and print(
                                           f"{i + 1} cases, {time.monotonic() - start:.0f} s",
                                           flush=True))
        except Exception as err:
            import traceback
            traceback.print_exc()
            print(f"FAILED: {err!r}; the file is kept in {work}" if args.keep else f"FAILED: {err!r}")
            return 1
    wall = time.monotonic() - start
    rss = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
              resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    print(json.dumps({"bases": sizes, "stats": stats}, indent=1))
    if stats["failures"]:
        print(f"FAILED: {len(stats['failures'])} command runs (above, files kept in {work})")
        return 1
    print(f"{args.cases} mutated files x {len(fuzz_profiles.READERS)} commands "
          f"({args.cases * len(fuzz_profiles.READERS)} runs, seed {args.seed}, {args.workers} "
          f"workers): no traceback, no hang, memory bounded; {wall:.0f} s, largest process "
          f"{rss / 1024:.0f} MiB resident")
    return 0


if __name__ == "__main__":
    sys.exit(main())
