"""mpi4py's own test suite with and without the mpiscope runtime preloaded.

    python3 perf/reliability/mpi4py_matrix.py [--work DIR] [--impl openmpi,mpich]
        [--include REGEX ...] [--exclude REGEX ...] [--timeout S] [--out results.jsonl]
    python3 perf/reliability/mpi4py_matrix.py --fetch   # only fetch the suite

For each MPI (Open MPI at 1, 2, 3, 4 ranks; MPICH at 1, 2 ranks) the suite
runs once without the runtime (the baseline) and three times under
``mpiscope run``: default settings, ``--sync`` (MPISCOPE_SYNC=1) and
``--mode summary``. A configuration holds when every test has the same
outcome (pass, fail, error, skip, ...) on every rank as in the baseline, the
launcher's exit code is the baseline's, and the run's directory holds exactly
one profile of the job (spawned child jobs may add their own, each readable)
that ``mpiscope report --json`` reads with the right number of ranks.

The suite comes from mpi4py's source distribution, the version installed
here, fetched once into ``build/mpi4py-tests/`` (``scripts/setup.sh`` does it,
or this script: ``fetch_command``); nothing of it is kept in the tree.
Open MPI runs use the installed mpi4py; MPICH runs use mpi4py built from
that sdist against MPICH (``MPICC=mpicc.mpich``) in a venv under --work.
Each finished run appends one JSON line to --out, so an interrupted matrix
keeps what it measured; ``--table`` prints the markdown table of a results
file (docs/reliability.md). It takes hours on 2 shared cores: --include
limits the suite to test modules matching a regex (mpi4py's ``-i``).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "tests"))
from mpitest import launcher, mpi_env, mpiscope_cmd  # noqa: E402
from profile_expect import HUNG, run_killable  # noqa: E402

RANKS = {"openmpi": (1, 2, 3, 4), "mpich": (1, 2)}
CONFIGS = {"none": None, "default": [], "sync": ["--sync"], "summary": ["--mode", "summary"]}
RUNNER = Path(__file__).resolve().parent / "mpi4py_rank.py"


SUITE_CACHE = REPO / "build" / "mpi4py-tests"


def fetch_command(version: str, cache: Path = SUITE_CACHE) -> str:
    """The shell command that puts mpi4py ``version``'s sdist, unpacked, in ``cache``
    (scripts/setup.sh runs the same). ``--no-binary mpi4py``: the sdist, while
    pip may still take its build requirements as wheels to read its metadata."""
    return (f"{shlex.quote(sys.executable)} -m pip download --no-binary mpi4py --no-deps "
            f"mpi4py=={version} -d {shlex.quote(str(cache))} && tar -xzf "
            f"{shlex.quote(str(cache / f'mpi4py-{version}.tar.gz'))} -C {shlex.quote(str(cache))}")


def suite_source(cache: Path = SUITE_CACHE) -> Path:
    """Where the unpacked sdist of the installed mpi4py is (its test/ inside)."""
    return cache / f"mpi4py-{importlib.metadata.version('mpi4py')}"


def fetch_suite(cache: Path = SUITE_CACHE) -> Path:
    """The unpacked sdist of the installed mpi4py version, fetched if absent."""
    src = suite_source(cache)
    if not (src / "test" / "main.py").exists():
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run(fetch_command(importlib.metadata.version("mpi4py"), cache), shell=True,
                       check=True)
    return src


def python_for(impl: str, work: Path, src: Path) -> str:
    """The interpreter whose mpi4py uses impl (a venv with an MPICH build for mpich)."""
    if impl == "openmpi":
        return sys.executable
    venv = work / f"venv-{impl}"
    py = venv / "bin" / "python3"
    probe = [str(py), "-c", "from mpi4py import MPI; print(MPI.Get_library_version())"]
    if py.exists() and subprocess.run(probe, capture_output=True).returncode == 0:
        return str(py)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-binary", "mpi4py", "--no-deps",
                    str(src.parent / f"{src.name}.tar.gz")],
                   env={**os.environ, "MPICC": f"mpicc.{impl}"}, check=True)
    return str(py)


def profiles_ok(rundir: Path, n: int) -> tuple[bool, str]:
    """Exactly one profile of the suite's own job, of n ranks; every profile in
    the directory (spawned child jobs write their own) reads and reports."""
    from mpiscope import read
    from mpiscope.errors import UserError
    from mpiscope.report import build_report

    files = sorted(rundir.glob("*.mpiscope"))
    suite = []
    for f in files:
        try:
            rep = build_report(read(f), ppn=None, top=3)
        except UserError as err:
            return False, f"{f.name}: {err}"
        if any(RUNNER.name in str(a) for a in rep["profile"]["argv"] or ()):
            suite.append(rep["profile"]["nranks"])
    if suite != [n]:
        return False, f"{len(suite)} profile(s) of the suite's job (ranks {suite}), want one of {n}"
    return True, f"1 profile of {n} rank(s) + {len(files) - 1} of spawned jobs"


def run_one(impl: str, n: int, config: str, py: str, src: Path, work: Path,
            select: list[str], timeout: float, tries: int = 2) -> dict:
    """One launch; a launch that hangs (Open MPI 4.1's spawn sometimes never
    finishes a child's MPI_Init on a loaded machine, with or without the
    runtime) is killed after ``timeout`` s and tried again, up to ``tries``
    times; the row records every attempt's exit code. ``select``: mpi4py's
    main.py options that choose modules (``-i REGEX``, ``-e REGEX``)."""
    attempts = []
    for attempt in range(tries):
        row = _launch(impl, n, config, py, src, work, select, timeout, attempt)
        attempts.append(row["rc"])
        if row["rc"] != "hung":
            break
    row["attempts"] = attempts
    return row


def _launch(impl: str, n: int, config: str, py: str, src: Path, work: Path,
            select: list[str], timeout: float, attempt: int = 0) -> dict:
    # A directory per attempt: the ranks of a killed attempt may still be
    # finishing (and writing their profile) when the next one starts.
    rundir = work / "runs" / f"{impl}-{n}-{config}" / f"try{attempt}"
    shutil.rmtree(rundir, ignore_errors=True)   # a killed run may have left a snapshot spool
    rundir.mkdir(parents=True)
    prefix = rundir / "outcome"
    cmd = [*launcher(impl, n), py, str(RUNNER), str(src / "test"), str(prefix), *select]
    if CONFIGS[config] is not None:
        cmd = mpiscope_cmd("run", "--mpi", impl, "--dir", str(rundir), *CONFIGS[config],
                           "--", *cmd)
    t0 = time.time()
    env = mpi_env({"MPISCOPE_DIR": str(rundir)})
    # The workers mpi4py.futures spawns (test_futures, test_util_pool) unpickle
    # the tests' functions: they import the test modules from this path.
    env["PYTHONPATH"] = os.pathsep.join([str(src / "test"), env["PYTHONPATH"]])
    rc, _, err = run_killable(cmd, rundir, env, timeout)
    rc, tail = ("hung" if rc == HUNG else rc), err[-3000:]
    outcomes: dict[str, list[str]] = {}
    for rank in range(n):
        path = Path(f"{prefix}.{rank}.json")
        per_rank = json.loads(path.read_text()) if path.exists() else {}
        for test, outcome in per_rank.items():
            outcomes.setdefault(test, ["missing"] * n)[rank] = outcome
    row = {"impl": impl, "ranks": n, "config": config, "rc": rc,
           "seconds": round(time.time() - t0, 1), "outcomes": outcomes}
    if config != "none":
        row["profile_ok"], row["profile_note"] = profiles_ok(rundir, n)
    if rc != 0:
        row["stderr_tail"] = tail
    return row


def tally(outcomes: dict) -> dict:
    count: dict[str, int] = {}
    for per_rank in outcomes.values():
        key = per_rank[0] if len(set(per_rank)) == 1 else "mixed"
        count[key] = count.get(key, 0) + 1
    return count


def compare(base: dict, row: dict) -> list[str]:
    """Tests whose outcome differs from the baseline, and other differences."""
    diffs = [f"{t}: {base['outcomes'].get(t)} -> {row['outcomes'].get(t)}"
             for t in sorted(set(base["outcomes"]) | set(row["outcomes"]))
             if base["outcomes"].get(t) != row["outcomes"].get(t)]
    if base["rc"] != row["rc"]:
        diffs.append(f"exit code {base['rc']} -> {row['rc']}")
    return diffs


def table(rows: list[dict]) -> str:
    base = {(r["impl"], r["ranks"]): r for r in rows if r["config"] == "none"}
    lines = ["| MPI | ranks | settings | tests | pass | skip | fail+error | exit | same as without | one readable profile | s |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        c = tally(r["outcomes"])
        bad = c.get("fail", 0) + c.get("error", 0) + c.get("mixed", 0) + c.get("missing", 0)
        b = base.get((r["impl"], r["ranks"]))
        same = "baseline" if r["config"] == "none" else (
            "no baseline" if b is None else ("yes" if not compare(b, r) else
                                             f"NO ({len(compare(b, r))} differ)"))
        prof = "" if r["config"] == "none" else ("yes" if r["profile_ok"] else
                                                 f"NO: {r['profile_note']}")
        lines.append(f"| {r['impl']} | {r['ranks']} | {r['config']} | {len(r['outcomes'])} | "
                     f"{c.get('pass', 0)} | {c.get('skip', 0)} | {bad} | {r['rc']} | {same} | "
                     f"{prof} | {r['seconds']:.0f} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", default="/tmp/mpiscope-mpi4py")
    ap.add_argument("--impl", default="openmpi,mpich")
    ap.add_argument("--ranks", default=None, help="comma list, overrides the defaults")
    ap.add_argument("--configs", default="none,default,sync,summary")
    ap.add_argument("--include", action="append", default=[],
                    help="only test modules matching REGEX (mpi4py's -i)")
    ap.add_argument("--exclude", action="append", default=[],
                    help="leave out test modules matching REGEX (mpi4py's -e)")
    ap.add_argument("--fetch", action="store_true",
                    help="only fetch the suite into build/mpi4py-tests/ and exit")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per launch")
    ap.add_argument("--out", default=None, help="results file (default WORK/results.jsonl)")
    ap.add_argument("--table", metavar="RESULTS", help="print the table of a results file")
    args = ap.parse_args()
    if args.table:
        rows = [json.loads(line) for line in Path(args.table).read_text().splitlines() if line]
        print(table(rows))
        return 0
    work = Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    out = Path(args.out or work / "results.jsonl")
    src = fetch_suite()
    if args.fetch:
        print(src / "test")
        return 0
    select = [a for p in args.include for a in ("-i", p)] + \
             [a for p in args.exclude for a in ("-e", p)]
    failed = 0
    impls = args.impl.split(",")
    pythons = {impl: python_for(impl, work, src) for impl in impls}
    # Small jobs of every MPI first: an interrupted matrix still covers both.
    shapes = sorted(((impl, n) for impl in impls for n in
                     ([int(x) for x in args.ranks.split(",")] if args.ranks else RANKS[impl])),
                    key=lambda s: (s[1], impls.index(s[0])))
    for impl, n in shapes:
        py = pythons[impl]
        base = None
        for config in args.configs.split(","):
            row = run_one(impl, n, config, py, src, work, select, args.timeout)
            if config == "none":
                base = row
            else:
                row["diffs"] = compare(base, row) if base else ["no baseline"]
                failed += bool(row["diffs"]) or not row["profile_ok"]
            with out.open("a") as f:
                f.write(json.dumps(row) + "\n")
            print(f"{impl} n={n} {config}: rc {row['rc']} {tally(row['outcomes'])} "
                  f"{row.get('profile_note', '')} diffs {len(row.get('diffs', []))} "
                  f"({row['seconds']} s)", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
