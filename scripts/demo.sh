#!/usr/bin/env bash
# A profiled demo: the stencil mini-app (examples/stencil) on 4 ranks where
# rank 2 does 3x the work, profiled by mpiscope, then reported.
set -euo pipefail
source "$(dirname "$0")/mpi-env.sh"
# The mpiscope scripts/setup.sh installed, unless the caller's PATH already has one.
venv_bin=$(cd "$(dirname "$0")/.." && pwd)/.venv/bin
if [ -x "$venv_bin/mpiscope" ]; then PATH=$venv_bin:$PATH; fi

out=$(mktemp -d "${TMPDIR:-/tmp}/mpiscope-demo.XXXXXX")
app=$(mpiscope path --mpi openmpi examples/stencil)

set -x
mpiscope run --dir "$out" -- mpirun.openmpi --oversubscribe --bind-to none -n 4 \
    "$app" --grid 512x512 --steps 200 --hot-rank 2 --hot-factor 3
mpiscope report "$out"/*.mpiscope
