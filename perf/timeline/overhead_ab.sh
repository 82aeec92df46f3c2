#!/usr/bin/env bash
# What the timeline adds to one MPI call (docs/performance.md "Timeline"): the
# overhead benchmark of perf/run_overhead.sh (perf/overhead/overhead.c: MPI_X
# against PMPI_X in one run of one binary, thread CPU time), run ROUNDS times
# with this tree's runtime and ROUNDS times with a runtime built without the
# timeline, alternating A/B so a loaded machine's changes fall on both.
#
#   perf/timeline/overhead_ab.sh BASELINE_ROOT [NATIVE_ROOT] [ROUNDS]
#
# BASELINE_ROOT: a stage directory (<root>/<impl>/lib/libmpiscope.so) built
# from the commit before the timeline (e3a36bc), e.g.
#   git archive e3a36bc | tar -x -C /tmp/base && cd /tmp/base &&
#   cmake -S . -B build -G Ninja -DMPISCOPE_PARTS=runtime && cmake --build build
# and then BASELINE_ROOT=/tmp/base/build/stage. NATIVE_ROOT defaults to
# $MPISCOPE_NATIVE or build/stage; ROUNDS to 4. Prints each run's ns added
# per call and a markdown table of the medians. 2 ranks per MPI, bound to cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
baseline="${1:?usage: perf/timeline/overhead_ab.sh BASELINE_ROOT [NATIVE_ROOT] [ROUNDS]}"
root="${2:-${MPISCOPE_NATIVE:-build/stage}}"
rounds="${3:-4}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
source scripts/mpi-env.sh
export MPISCOPE_QUIET=1 MPISCOPE_DIR="$work" MPISCOPE_MPIT=0
results="$work/results.jsonl"
for impl in openmpi mpich; do
  for r in "$root" "$baseline"; do
    [ -f "$r/$impl/lib/libmpiscope.so" ] || { echo "$r/$impl/lib/libmpiscope.so: not built" >&2; exit 2; }
  done
  "mpicc.$impl" -O2 perf/overhead/overhead.c -o "$work/overhead.$impl"
  for ((i = 0; i < rounds; i++)); do
    order="timeline baseline"
    [ $((i % 2)) = 1 ] && order="baseline timeline"
    for tool in $order; do
      lib="$root/$impl/lib/libmpiscope.so"
      [ "$tool" = baseline ] && lib="$baseline/$impl/lib/libmpiscope.so"
      if [ "$impl" = openmpi ]; then
        cmd=(mpirun.openmpi -n 2 --bind-to core -x LD_PRELOAD="$lib" -x MPISCOPE_QUIET -x MPISCOPE_DIR
             -x MPISCOPE_MPIT)
      else
        cmd=(mpirun.mpich -n 2 -bind-to core -env LD_PRELOAD "$lib")
      fi
      timeout 600 "${cmd[@]}" "$work/overhead.$impl" |
        sed "s/^{/{\"tool\": \"$tool\", \"impl\": \"$impl\", \"round\": $i, /" | tee -a "$results"
    done
  done
done
python3 - "$results" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("\n| MPI | operation | no tool (ns/call) | without the timeline: added (ns), each run | "
      "with the timeline: added (ns), each run | median with - without (ns) |")
print("|---|---|---:|---|---|---:|")
for impl in ("openmpi", "mpich"):
    for op in dict.fromkeys(r["op"] for r in rows if r["impl"] == impl):
        get = {t: [r for r in rows if r["impl"] == impl and r["op"] == op and r["tool"] == t]
               for t in ("baseline", "timeline")}
        pmpi = statistics.median(r["ns_per_call_pmpi"] for r in get["timeline"] + get["baseline"])
        med = {t: statistics.median(r["added_ns"] for r in v) for t, v in get.items()}
        each = {t: ", ".join(f"{r['added_ns']:.0f}" for r in v) for t, v in get.items()}
        print(f"| {impl} | {op} | {pmpi:.1f} | {med['baseline']:.1f} ({each['baseline']}) | "
              f"{med['timeline']:.1f} ({each['timeline']}) | {med['timeline'] - med['baseline']:+.1f} |")
PY
