"""Thousands of mutated profiles through every command that reads one.

    python3 perf/reliability/fuzz_readers.py [--cases 1100] [--seed 1]

The table of commands and the mutators are tests/fuzz_profiles.py (CI runs a
slice of it in tests/test_reader_fuzz.py). Every case must end in a result or
a one-line ``mpiscope: error:``, within 20 s, allocating at most what the
intact file needs plus 200 bytes per byte of the file. Stops at the first
failure and keeps that file; else prints the outcome counts per command and
per mutator (docs/reliability.md).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO / "src"), str(REPO / "tests")]
import fuzz_profiles  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=1100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", default=None, help="directory for the files (default: temporary)")
    args = ap.parse_args()
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(args.keep or tmp)
        work.mkdir(parents=True, exist_ok=True)
        try:
            counts = fuzz_profiles.fuzz(work, args.cases, args.seed, on_case=lambda i: (
                print(f"{i + 1} cases, {time.monotonic() - start:.0f} s", flush=True)
                if (i + 1) % 100 == 0 else None))
        except Exception as err:
            import traceback
            traceback.print_exc()
            print(f"FAILED: {err!r}; the file is kept in {work}" if args.keep else f"FAILED: {err!r}")
            return 1
    print(json.dumps(counts, indent=1))
    print(f"{args.cases} mutated files x {len(fuzz_profiles.READERS)} commands: no traceback, "
          f"no hang, memory bounded ({time.monotonic() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
