#!/usr/bin/env bash
# Reproduce "Profile writing" in docs/performance.md: the time writing the
# profile adds to MPI_Finalize at N ranks (default 64, Open MPI,
# oversubscribed), and the profile's size per rank, full and summary mode.
#
#   perf/run_finalize.sh [ranks] [repeats] [native-root]
#
# For each configuration (no runtime, full, summary) the job runs `repeats`
# times; a run's Finalize time is the slowest rank's; the median over runs is
# printed. Added time = median(with runtime) - median(without).
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-64}"; reps="${2:-5}"; root="${3:-${MPISCOPE_NATIVE:-build/stage}}"
lib="$root/openmpi/lib/libmpiscope.so"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
source scripts/mpi-env.sh
export MPISCOPE_QUIET=1 MPISCOPE_DIR="$work"
mpicc.openmpi -O2 perf/finalize/finalize.c -o "$work/finalize"
mpicc.openmpi -O2 perf/finalize/mpiio_floor.c -o "$work/mpiio_floor"
for mode in none full summary; do
  for r in $(seq "$reps"); do
    rm -f "$work"/*.mpiscope
    if [ "$mode" = none ]; then pre=""; else pre="$lib"; fi
    t=$(timeout 900 mpirun.openmpi --oversubscribe --bind-to none -n "$n" -x LD_PRELOAD="$pre" \
          -x MPISCOPE_MODE="${mode/none/full}" -x MPISCOPE_QUIET -x MPISCOPE_DIR "$work/finalize" \
        | awk '$1 == "finalize" && $3 > m { m = $3 } END { print m }')
    size=$(stat -c %s "$work"/*.mpiscope 2>/dev/null || echo 0)
    echo "$mode $r $t $size"
  done
  # The same job shape writing a file of the same size with plain MPI-IO, no runtime.
  if [ "$mode" = full ]; then
    for r in $(seq "$reps"); do
      rm -f "$work"/floor.dat
      t=$(timeout 900 mpirun.openmpi --oversubscribe --bind-to none -n "$n" "$work/mpiio_floor" \
            "$work/floor.dat" 1284 | awk '$1 == "floor" { print $2 }')
      echo "floor $r $t 0"
    done
  fi
done | python3 -c "
import sys, statistics as st
rows = [l.split() for l in sys.stdin]
med = {m: st.median(float(r[2]) for r in rows if r[0] == m) for m in ('none', 'full', 'summary')}
size = {m: int(next(r[3] for r in rows if r[0] == m)) for m in ('full', 'summary')}
print(f'ranks: $n, repeats: $reps (median of the slowest rank per run)')
print(f'MPI_Finalize without runtime: {med[\"none\"]:.3f} s')
print(f'plain MPI-IO open + write_at_all (1284 B/rank) + close, no runtime: '
      f'{st.median(float(r[2]) for r in rows if r[0] == \"floor\"):.3f} s')
for m in ('full', 'summary'):
    print(f'{m:8s}: finalize {med[m]:.3f} s, added {med[m] - med[\"none\"]:.3f} s, '
          f'file {size[m]} B = {size[m] / $n:.0f} B per rank')
"
