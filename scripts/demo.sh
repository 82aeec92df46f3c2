#!/usr/bin/env bash
# A profiled demo: the stencil mini-app (examples/stencil) on 4 ranks where
# rank 2 does 3x the work, profiled by mpiscope, then reported.
# The profile is kept in build/demo/ of this checkout (ignored by git; the
# next demo replaces it, `rm -r build/demo` removes it): nothing in /tmp.
set -euo pipefail
source "$(dirname "$0")/mpi-env.sh"
repo=$(cd "$(dirname "$0")/.." && pwd)
# The mpiscope scripts/setup.sh installed, unless the caller's PATH already has one.
venv_bin=$repo/.venv/bin
if [ -x "$venv_bin/mpiscope" ]; then PATH=$venv_bin:$PATH; fi

out=$repo/build/demo
mkdir -p "$out"
rm -f "$out"/*.mpiscope
app=$(mpiscope path --mpi openmpi examples/stencil)

set -x
mpiscope run --dir "$out" -- mpirun.openmpi --oversubscribe --bind-to none -n 4 \
    "$app" --grid 512x512 --steps 200 --hot-rank 2 --hot-factor 3
mpiscope report "$out"/*.mpiscope
{ set +x; } 2>/dev/null
echo "demo: the profile is kept in $out (the next demo replaces it; rm -r $out removes it)"
