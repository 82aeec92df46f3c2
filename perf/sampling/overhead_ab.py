#!/usr/bin/env python3
"""What sampling costs (docs/performance.md "Sampling"): an MPI program under the runtime with
MPISCOPE_SAMPLE=0 and =HZ, alternating A/B runs so that the machine's load falls on both
alike; prints each pair's CPU time (the profiles' ENV cpu_time summed over ranks: user +
system of every thread, MPI_Init to MPI_Finalize, which the handler's work adds to and other
processes do not) and wall time (the longest rank's), and the median ratios with their range.

Programs (--app):
  cost        tests/runtime/sampling/programs/cost.c, one rank, compute-bound (an
              Allreduce per step)
  stencil, pcg, zonal
              the mini-apps (examples/), --ranks ranks (default 2)
  mandelbrot  hold-out: mpi4py's demo/mandelbrot/mandelbrot.py (numpy and pure-Python
              compute, Bcast/Gather/Gatherv), --ranks ranks, Open MPI only (mpi4py is built for it)
  mpi4py-cco  hold-out: mpi4py's own test module test_cco_obj (64 tests of collectives on
              pickled objects), --ranks ranks, Open MPI only
The hold-outs are code nobody on this project wrote or tuned sampling for: mpi4py's sdist,
unpacked by scripts/setup.sh in build/mpi4py-tests.

    .venv/bin/python perf/sampling/overhead_ab.py [--app cost] [--mpi openmpi|mpich] [--ranks 2] [--pairs 10] [--hz 100]
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from mpiscope import native, read

REPO = Path(__file__).resolve().parents[2]
PROGRAM = REPO / "tests" / "runtime" / "sampling" / "programs" / "cost.c"
MPI4PY_SRC = REPO / "build" / "mpi4py-tests" / f"mpi4py-{importlib.metadata.version('mpi4py')}"
MINIAPPS = {"stencil": ["--grid", "512x512", "--steps", "400"],
            "pcg": ["--grid", "64x64", "--maxiter", "4000", "--tol", "0"],
            "zonal": ["--steps", "20"]}
HOLDOUTS = ("mandelbrot", "mpi4py-cco")
# mandelbrot.py draws its picture with matplotlib and pauses 2 s when it can import it:
# run it with matplotlib hidden, so both runs of a pair time the computation alone.
NO_PLOT = ("import runpy, sys; sys.modules['matplotlib'] = None; "
           "runpy.run_path(sys.argv[1], run_name='__main__')")


def run(impl: str, argv: list[str], out: Path, hz: int, n: int, cwd: Path) -> tuple[float, float]:
    """(CPU seconds over ranks, longest rank's wall) of one profiled run."""
    env = dict(os.environ, LD_PRELOAD=str(native.runtime_library(impl)), MPISCOPE_DIR=str(out),
               MPISCOPE_QUIET="1", MPISCOPE_SAMPLE=str(hz), OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    names = ["LD_PRELOAD", "MPISCOPE_DIR", "MPISCOPE_QUIET", "MPISCOPE_SAMPLE"]
    # A core per rank: unbound, two busy-polling ranks that the kernel stacks on one core
    # spin in MPI for each other, and the CPU time measures the scheduler, not the program
    # (0.47x to 3.3x within one set of 2-rank pairs here).
    if impl == "openmpi":
        cmd = ["mpirun.openmpi", "--bind-to", "core",
               *[a for k in names for a in ("-x", k)], "-n", str(n)]
    else:
        cmd = ["mpirun.mpich", "-bind-to", "core", "-n", str(n)]
    before = set(out.glob("*.mpiscope"))
    subprocess.run([*cmd, *argv], env=env, check=True, capture_output=True, cwd=cwd)
    [path] = set(out.glob("*.mpiscope")) - before
    prof = read(path)
    assert (prof.sample_hz is not None) == (hz > 0)
    return float(prof.env["cpu_time"].sum()), float(prof.ranks["wall"].max())


def command(app: str, impl: str, tmp: Path, a) -> tuple[list[str], int, Path]:
    """(argv, ranks, working directory) of --app."""
    if app == "cost":
        exe = tmp / "cost"
        subprocess.run([f"mpicc.{impl}", "-g", "-O1", "-o", str(exe), str(PROGRAM)], check=True)
        return [str(exe), a.n, a.steps, "-1", "1"], 1, tmp
    if app in MINIAPPS:
        return [str(native.program(impl, f"examples/{app}")), *MINIAPPS[app]], a.ranks, tmp
    if impl != "openmpi":
        sys.exit(f"--app {app}: Open MPI only (mpi4py is built for it)")
    if not (MPI4PY_SRC / "test" / "main.py").exists():
        sys.exit(f"--app {app}: mpi4py's sdist is not in {MPI4PY_SRC} (scripts/setup.sh puts it there)")
    if app == "mandelbrot":
        demo = MPI4PY_SRC / "demo" / "mandelbrot" / "mandelbrot.py"
        return [sys.executable, "-c", NO_PLOT, str(demo)], a.ranks, tmp
    return [sys.executable, "test/main.py", "-q", "-i", "test_cco_obj"], a.ranks, MPI4PY_SRC


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--app", default="cost", choices=["cost", *MINIAPPS, *HOLDOUTS])
    ap.add_argument("--mpi", default="openmpi")
    ap.add_argument("--pairs", type=int, default=10)
    ap.add_argument("--hz", type=int, default=100)
    ap.add_argument("--n", default="5000000", help="loop trips per step (cost.c's N)")
    ap.add_argument("--steps", default="40", help="cost.c's steps")
    ap.add_argument("--ranks", type=int, default=2,
                    help="ranks of the mini-apps and hold-outs (1: no rank waits for another, "
                    "so the CPU time is the program's work, not the scheduler's timing)")
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="mpiscope-sampling-perf-"))
    try:
        argv, n, cwd = command(a.app, a.mpi, tmp, a)
        run(a.mpi, argv, tmp, 0, n, cwd)          # warm-up: page cache, launcher
        ratios, walls = [], []
        print(f"{a.app} on {n} rank(s), {a.mpi}; load {os.getloadavg()[0]:.1f} (1 min) at the start")
        for i in range(a.pairs):
            order = (0, a.hz) if i % 2 == 0 else (a.hz, 0)
            t = {hz: run(a.mpi, argv, tmp, hz, n, cwd) for hz in order}
            ratios.append(t[a.hz][0] / t[0][0])
            walls.append(t[a.hz][1] / t[0][1])
            print(f"pair {i + 1}: CPU off {t[0][0]:.3f} s, {a.hz} Hz {t[a.hz][0]:.3f} s, ratio "
                  f"{ratios[-1]:.4f}; wall ratio {walls[-1]:.4f}")
        med, wmed = statistics.median(ratios), statistics.median(walls)
        print(f"{a.app}, {a.mpi}, {a.hz} Hz: CPU time median ratio {med:.4f} "
              f"({100 * (med - 1):+.2f} %), range {min(ratios):.4f}..{max(ratios):.4f}; wall "
              f"median ratio {wmed:.4f}, range {min(walls):.4f}..{max(walls):.4f}; {a.pairs} "
              f"alternating pairs; load {os.getloadavg()[0]:.1f} (1 min) at the end")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
