#!/usr/bin/env bash
# Reproduce docs/performance.md "Fortran wrappers": for each MPI mpiscope was
# built for, build perf/fortran/fortran_overhead.f90 and run it
# with libmpiscope.so preloaded (one rank); it times each operation through its MPI_ name
# and its PMPI_ name in one run. Then checks from the profile which calls were
# counted (only the MPI_ ones must be).
#
#   perf/fortran/run_fortran_overhead.sh [native-root]   (default: $MPISCOPE_NATIVE or build/stage)
set -euo pipefail
cd "$(dirname "$0")/../.."
root="${1:-${MPISCOPE_NATIVE:-build/stage}}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
source scripts/mpi-env.sh
export MPISCOPE_QUIET=1 MPISCOPE_DIR="$work"
for impl in openmpi mpich; do
  lib="$root/$impl/lib/libmpiscope.so"
  [ -f "$lib" ] || { echo "skipping $impl: $lib not built" >&2; continue; }
  "mpif90.$impl" -O2 -J "$work" perf/fortran/fortran_overhead.f90 -o "$work/fo.$impl"
  if [ "$impl" = openmpi ]; then
    cmd=(mpirun.openmpi -n 1 --bind-to core -x LD_PRELOAD="$lib" -x MPISCOPE_QUIET -x MPISCOPE_DIR)
  else
    cmd=(mpirun.mpich -n 1 -bind-to core -env LD_PRELOAD "$lib")
  fi
  timeout 600 "${cmd[@]}" "$work/fo.$impl" | sed "s/^{/{\"impl\": \"$impl\", /"
  PYTHONPATH=src python3 - "$work"/fo."$impl".*.mpiscope <<'PY'
import sys
import numpy as np
from mpiscope import read
p = read(sys.argv[1])
for name in ("MPI_Comm_rank", "MPI_Iprobe", "MPI_Allreduce"):
    rows = p.funcs[p.funcs["func"] == p.func_id(name)]
    print(f"  counted {name}: {int(rows['calls'].sum()) // p.nranks} calls per rank")
PY
done
