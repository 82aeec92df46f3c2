#!/usr/bin/env python3
"""What sampling costs (docs/performance.md "Sampling"): a compute-bound MPI program
(tests/runtime/sampling/programs/cost.c on one rank, an Allreduce per step) under the
runtime with MPISCOPE_SAMPLE=0 and =HZ, alternating A/B runs so that the machine's load falls
on both alike; prints each pair's CPU time (the profile's ENV cpu_time: user + system of
every thread, MPI_Init to MPI_Finalize, which the handler's work adds to and other
processes do not) and wall time, and the median ratios with their range.

    .venv/bin/python perf/sampling/overhead_ab.py [--mpi openmpi|mpich] [--pairs 10] [--hz 100]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

from mpiscope import native, read

REPO = Path(__file__).resolve().parents[2]
PROGRAM = REPO / "tests" / "runtime" / "sampling" / "programs" / "cost.c"


def run(impl: str, exe: Path, out: Path, hz: int, args: list[str]) -> tuple[float, float]:
    env = dict(os.environ, LD_PRELOAD=str(native.runtime_library(impl)), MPISCOPE_DIR=str(out),
               MPISCOPE_QUIET="1", MPISCOPE_SAMPLE=str(hz), OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    names = ["LD_PRELOAD", "MPISCOPE_DIR", "MPISCOPE_QUIET", "MPISCOPE_SAMPLE"]
    if impl == "openmpi":
        cmd = ["mpirun.openmpi", "--oversubscribe", "--bind-to", "none",
               *[a for k in names for a in ("-x", k)], "-n", "1"]
    else:
        cmd = ["mpirun.mpich", "-n", "1"]
    before = set(out.glob("*.mpiscope"))
    subprocess.run([*cmd, str(exe), *args], env=env, check=True, capture_output=True, cwd=out)
    [path] = set(out.glob("*.mpiscope")) - before
    prof = read(path)
    assert (prof.sample_hz is not None) == (hz > 0)
    return float(prof.env["cpu_time"][0]), float(prof.ranks["wall"][0])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mpi", default="openmpi")
    ap.add_argument("--pairs", type=int, default=10)
    ap.add_argument("--hz", type=int, default=100)
    ap.add_argument("--n", default="5000000", help="loop trips per step (cost.c's N)")
    ap.add_argument("--steps", default="40")
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="mpiscope-sampling-perf-"))
    try:
        exe = tmp / "cost"
        subprocess.run([f"mpicc.{a.mpi}", "-g", "-O1", "-o", str(exe), str(PROGRAM)], check=True)
        args = [a.n, a.steps, "-1", "1"]
        run(a.mpi, exe, tmp, 0, args)          # warm-up: page cache, launcher
        ratios, walls = [], []
        print(f"load: {os.getloadavg()[0]:.1f} (1 min) at the start")
        for i in range(a.pairs):
            order = (0, a.hz) if i % 2 == 0 else (a.hz, 0)
            t = {hz: run(a.mpi, exe, tmp, hz, args) for hz in order}
            ratios.append(t[a.hz][0] / t[0][0])
            walls.append(t[a.hz][1] / t[0][1])
            print(f"pair {i + 1}: CPU off {t[0][0]:.3f} s, {a.hz} Hz {t[a.hz][0]:.3f} s, ratio "
                  f"{ratios[-1]:.4f}; wall ratio {walls[-1]:.4f}")
        med, wmed = statistics.median(ratios), statistics.median(walls)
        print(f"{a.mpi}, {a.hz} Hz: CPU time median ratio {med:.4f} ({100 * (med - 1):+.2f} %), "
              f"range {min(ratios):.4f}..{max(ratios):.4f}; wall median ratio {wmed:.4f}, range "
              f"{min(walls):.4f}..{max(walls):.4f}; {a.pairs} alternating pairs; load "
              f"{os.getloadavg()[0]:.1f} (1 min) at the end")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
