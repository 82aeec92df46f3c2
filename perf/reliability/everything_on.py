"""The three mini-apps at N Open MPI ranks (oversubscribed; 64 by default)
with sync, regions and summary mode together: exact counts.

    python3 perf/reliability/everything_on.py [--ranks 64] [--impl openmpi]

The checks are tests/reliability/test_reliability_everything_on.py's (CI runs them at
64 Open MPI and 2 MPICH ranks; this script at any count): each app under
``mpiscope run --sync --mode summary`` prints the RESULT line of a run on one
rank without the runtime, and the summary's calls and bytes (min, max, sum,
minPE, maxPE over ranks) in the apps' MPI_Pcontrol regions are the ones the
apps' parameters give. Prints the seconds each app took (docs/reliability.md).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO / "src"), str(REPO / "tests"), str(REPO / "tests" / "reliability")]
import exampleapps  # noqa: E402
import test_reliability_everything_on as everything_on  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ranks", type=int, default=64)
    ap.add_argument("--impl", default="openmpi")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per launch")
    args = ap.parse_args()
    exampleapps.TIMEOUT = args.timeout
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        seconds = everything_on.check_all(args.impl, args.ranks, Path(tmp))
    print(f"{args.impl}, {args.ranks} ranks, --sync --mode summary, regions: every app exact "
          f"({', '.join(f'{k} {v} s' for k, v in seconds.items())}; "
          f"{time.monotonic() - start:.0f} s in all, load {os.getloadavg()[0]:.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
