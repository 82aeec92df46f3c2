"""MPI_THREAD_MULTIPLE with four threads per rank, many runs in a row under the runtime.

    python3 perf/reliability/threads_repeat.py [--impl openmpi] [--ranks 4] [--runs 100]
        [--level multiple]

Each run is tests/programs/threads_levels.c under ``mpiscope run``: point-to-
point, collectives, RMA (accumulates into a window: a lost update fails the
program's own check) and nonblocking point-to-point, each on its own thread
and communicator. A run holds when the job exits 0, every rank prints "ok",
and the profile's calls, bytes and messages are exactly the expectation of
tests/reliability/test_reliability_threads.py. Prints one line per failure and a total;
exits 1 if any run failed (docs/reliability.md).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO / "src"), str(REPO / "tests"), str(REPO / "tests" / "reliability")]
from profile_expect import Runner, assert_profile, mismatches  # noqa: E402,F401
from test_reliability_threads import LEVELS, threads_levels  # noqa: E402
import mpitest  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--impl", default="openmpi")
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--level", default="multiple", choices=sorted(LEVELS))
    args = ap.parse_args()
    mpitest.NRANKS[args.impl] = args.ranks
    failed = 0
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        runner = Runner(Path(tmp))
        for i in range(args.runs):
            out = Path(tmp) / f"run{i}"
            out.mkdir()
            run = runner.run(args.impl, "threads_levels", args.level, outdir=str(out))
            try:
                run.assert_ok()
                prof = run.profile
                bad = mismatches(prof, threads_levels(prof.nranks, {}))
                assert not bad, bad[:5]
                assert list(prof.ranks["threads"]) == [LEVELS[args.level]] * prof.nranks
            except AssertionError as err:
                failed += 1
                print(f"run {i}: FAILED rc {run.rc}: {str(err)[:500]}", flush=True)
            for f in out.iterdir():
                f.unlink()
    print(f"{args.impl} {args.ranks} ranks, {args.level}: {args.runs - failed}/{args.runs} runs "
          f"exact ({time.monotonic() - start:.0f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
