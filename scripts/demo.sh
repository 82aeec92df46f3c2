#!/usr/bin/env bash
# A profiled demo: the stencil mini-app (examples/stencil) on 4 ranks where
# rank 2 does 3x the work, profiled by mpiscope, then reported.
set -euo pipefail
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Containers often forbid Open MPI's CMA single-copy mechanism.
export OMPI_MCA_btl_vader_single_copy_mechanism=none

out=$(mktemp -d "${TMPDIR:-/tmp}/mpiscope-demo.XXXXXX")
app=$(mpiscope path --mpi openmpi examples/stencil)

set -x
mpiscope run --dir "$out" -- mpirun.openmpi --oversubscribe --bind-to none -n 4 \
    "$app" --grid 512x512 --steps 200 --hot-rank 2 --hot-factor 3
mpiscope report "$out"/*.mpiscope
