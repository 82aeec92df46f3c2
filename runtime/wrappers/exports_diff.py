#!/usr/bin/env python3
"""Compare the wrapped functions (runtime/wrappers/functions.py) with every MPI_ function
an installed MPI library exports.

    exports_diff.py [LIB ...]

LIB is an MPI library (libmpi.so.40, libmpich.so.12) or a libmpiscope.so, whose
MPI library is found with ldd; default: every build/stage/<impl>/lib/libmpiscope.so
of this source tree (scripts/setup.sh builds there), else the runtimes of the
mpiscope package the running Python imports. For each library it prints the exported MPI_ functions
(nm -D, defined text symbols) that are wrapped, those left out by a category of
runtime/wrappers/unwrapped.py (with the first category that matches), and the UNEXPLAINED ones:
neither wrapped nor in a category. Exit status 1 if any function is
unexplained; listed functions the library does not export are
reported (an MPI may lack MPI-4 functions) but are not an error.
Only the standard library and binutils' nm are used.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOP = HERE.parents[1]   # the source tree: runtime/wrappers/ -> top
sys.path.insert(0, str(HERE))
import unwrapped  # noqa: E402  (runtime/ is not a package)
from gen_wrappers import load_list  # noqa: E402


def mpi_library(path: Path) -> Path:
    """The MPI library itself: path, or the libmpi a libmpiscope.so links to."""
    if "mpiscope" not in path.name:
        return path
    out = subprocess.run(["ldd", str(path)], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if parts and (parts[0].startswith("libmpi.so") or parts[0].startswith("libmpich.so")):
            return Path(parts[2])
    raise SystemExit(f"exports_diff: {path} links to no libmpi / libmpich")


def exported(lib: Path) -> set[str]:
    out = subprocess.run(["nm", "-D", "--defined-only", str(lib)], capture_output=True,
                         text=True, check=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TWi" and parts[2].startswith("MPI_"):
            names.add(parts[2].split("@")[0])
    return names


def compare(lib: Path, wrapped: set[str]) -> dict:
    """{"wrapped": [...], "left_out": {category: [...]}, "unexplained": [...],
    "not_exported": [...]} for one library."""
    names = exported(lib)
    out = {"wrapped": sorted(names & wrapped), "left_out": defaultdict(list),
           "unexplained": [], "not_exported": sorted(wrapped - names)}
    for name in sorted(names - wrapped):
        cat = unwrapped.category(name)
        if cat is None:
            out["unexplained"].append(name)
        else:
            out["left_out"][cat].append(name)
    return out


def default_libraries() -> list[Path]:
    """The source tree's build, else the installed package's runtimes."""
    libs = sorted((TOP / "build" / "stage").glob("*/lib/libmpiscope.so"))
    if libs:
        return libs
    try:
        from mpiscope import native
    except ImportError:
        return []
    return [native.runtime_library(impl) for impl in native.available_impls()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("libs", nargs="*", type=Path)
    ap.add_argument("--brief", action="store_true", help="only the counts and the problems")
    args = ap.parse_args(argv)
    libs = args.libs or default_libraries()
    if not libs:
        raise SystemExit(f"exports_diff: no library given, no {TOP}/build/stage/*/lib/libmpiscope.so "
                         "and no installed mpiscope runtime (run scripts/setup.sh)")
    wrapped = {f.name for f in load_list(HERE / "functions.py").load()}
    bad = 0
    for given in libs:
        lib = mpi_library(given)
        r = compare(lib, wrapped)
        print(f"{lib}: {len(r['wrapped'])} wrapped, "
              f"{sum(map(len, r['left_out'].values()))} left out, "
              f"{len(r['unexplained'])} unexplained")
        for name in r["unexplained"]:
            print(f"  UNEXPLAINED {name}")
        if r["not_exported"]:
            print(f"  listed but not exported: {' '.join(r['not_exported'])}")
        if not args.brief:
            for cat, names in r["left_out"].items():
                print(f"  left out ({cat}): {' '.join(names)}")
        bad += len(r["unexplained"])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
