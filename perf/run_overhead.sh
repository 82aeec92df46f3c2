#!/usr/bin/env bash
# Reproduce the runtime's overhead numbers (docs/performance.md, "Runtime
# overhead"): for each MPI mpiscope was built for, build perf/overhead/
# overhead.c and the pass-through tool, and run the benchmark on 2 ranks six
# times: without any tool, with the pass-through tool, with libmpiscope.so
# (call sites on, depth 1: the default), with MPISCOPE_MPIT=1 (MPI_T variables
# sampled), with MPISCOPE_CALLSITES=0, with MPISCOPE_CALLSITE_DEPTH=4; and,
# given a second native root, with that build's libmpiscope.so, so a change is
# measured against its baseline in the same run.
#
#   perf/run_overhead.sh [native-root [baseline-root]]   (default: $MPISCOPE_NATIVE or build/stage)
#
# Prints JSON lines (one per operation and configuration) and a markdown table.
set -euo pipefail
cd "$(dirname "$0")/.."
root="${1:-${MPISCOPE_NATIVE:-build/stage}}"
baseline="${2:-}"
tools="none passthrough mpiscope mpit nosites depth4${baseline:+ baseline}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
source scripts/mpi-env.sh
export MPISCOPE_QUIET=1 MPISCOPE_DIR="$work" MPISCOPE_MPIT=0 MPISCOPE_CALLSITES=1 MPISCOPE_CALLSITE_DEPTH=1
results="$work/results.jsonl"
for impl in openmpi mpich; do
  lib="$root/$impl/lib/libmpiscope.so"
  [ -f "$lib" ] || { echo "skipping $impl: $lib not built" >&2; continue; }
  mpicc="mpicc.$impl"
  "$mpicc" -O2 perf/overhead/overhead.c -o "$work/overhead.$impl"
  "$mpicc" -O2 -shared -fPIC perf/overhead/passthrough.c -o "$work/passthrough.$impl.so"
  for tool in $tools; do
    case $tool in
      none) pre="" ;;
      passthrough) pre="$work/passthrough.$impl.so" ;;
      mpiscope) pre="$lib" ;;
      mpit|nosites|depth4) pre="$lib" ;;
      baseline) pre="$baseline/$impl/lib/libmpiscope.so" ;;
    esac
    mpit=$([ "$tool" = mpit ] && echo 1 || echo 0)
    sites=$([ "$tool" = nosites ] && echo 0 || echo 1)
    depth=$([ "$tool" = depth4 ] && echo 4 || echo 1)
    if [ "$impl" = openmpi ]; then
      cmd=(mpirun.openmpi -n 2 --bind-to core -x LD_PRELOAD="$pre" -x MPISCOPE_QUIET -x MPISCOPE_DIR
           -x MPISCOPE_MPIT="$mpit" -x MPISCOPE_CALLSITES="$sites" -x MPISCOPE_CALLSITE_DEPTH="$depth")
    else
      cmd=(mpirun.mpich -n 2 -bind-to core -env LD_PRELOAD "$pre" -env MPISCOPE_MPIT "$mpit"
           -env MPISCOPE_CALLSITES "$sites" -env MPISCOPE_CALLSITE_DEPTH "$depth")
    fi
    timeout 600 "${cmd[@]}" "$work/overhead.$impl" | sed "s/^{/{\"tool\": \"$tool\", \"impl\": \"$impl\", /" | tee -a "$results"
  done
done
python3 - "$results" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
base = any(r["tool"] == "baseline" for r in rows)
print("\n| MPI | operation | no tool (ns/call) | pass-through added (ns) | mpiscope added (ns) |"
      " mpiscope MPISCOPE_MPIT=1 added (ns) | MPISCOPE_CALLSITES=0 added (ns) |"
      " MPISCOPE_CALLSITE_DEPTH=4 added (ns) |" + (" baseline added (ns) |" if base else ""))
print("|-----|-----------|------------------:|-----------------------:|--------------------:|"
      "--------------------:|--------------------:|--------------------:|"
      + ("--------------------:|" if base else ""))
for impl in ("openmpi", "mpich"):
    for op in dict.fromkeys(r["op"] for r in rows if r["impl"] == impl):
        get = {r["tool"]: r for r in rows if r["impl"] == impl and r["op"] == op}
        if len(get) < 6 + base:
            continue
        print(f"| {impl} | {op} | {get['none']['ns_per_call_pmpi']:.1f} | "
              f"{get['passthrough']['added_ns']:.1f} | {get['mpiscope']['added_ns']:.1f} | "
              f"{get['mpit']['added_ns']:.1f} | {get['nosites']['added_ns']:.1f} | "
              f"{get['depth4']['added_ns']:.1f} |"
              + (f" {get['baseline']['added_ns']:.1f} |" if base else ""))
PY
