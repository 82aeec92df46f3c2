#!/usr/bin/env bash
# Re-create the run shown in docs/bench.md: results in docs/bench/, plots in docs/img/.
#   bench/docs_run.sh            (after scripts/setup.sh; or with PYTHONPATH=src MPISCOPE_NATIVE=...)
# A 2-core machine: runs above 2 ranks are oversubscribed, which docs/bench.md says
# wherever it matters.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/mpi-env.sh
R=docs/bench; I=docs/img
mkdir -p "$R" "$I"
B="python3 -m mpiscope.cli bench"
OMPI2="mpirun.openmpi --bind-to none -n 2"
OMPI2CORE="mpirun.openmpi --bind-to core -n 2"   # as osu_latency is usually run
OMPI4="mpirun.openmpi --oversubscribe --bind-to none -n 4"
MPICH2="mpirun.mpich -n 2"
F=--force

# p2p and collectives: OSU's iteration counts (the kernels' defaults); the 4-rank
# pairs run uses a tenth of them (4 ranks share 2 cores).
$B p2p --max-size 4M --batches 10 -o $R/p2p-openmpi.json $F -- $OMPI2CORE
$B p2p --max-size 4M --batches 10 -o $R/p2p-mpich.json $F -- $MPICH2
$B p2p --max-size 1M --pairs 2 --iters 1000 --iters-large 100 -o $R/p2p-pairs-openmpi.json $F -- $OMPI4
$B collectives --max-size 1M --batches 10 -o $R/collectives-openmpi.json $F -- $OMPI4
$B collectives --max-size 1M --batches 10 -o $R/collectives-mpich.json $F -- $MPICH2
$B jitter --iters 3000 -o $R/jitter-openmpi.json $F -- $OMPI4
$B halo --max-size 256K --compute-us 50 -o $R/halo-openmpi.json $F -- $OMPI4
$B triad -o $R/triad-openmpi.json $F -- $OMPI2
$B mpimem --ranks 1,2,4,8,16 -o $R/mpimem-openmpi.json $F -- $OMPI4
$B mpimem --ranks 1,2 -o $R/mpimem-mpich.json $F -- $MPICH2
$B io --min-size 64K --max-size 16M -o $R/io-openmpi.json $F -- $OMPI4
$B startup --ranks 1,2,4,8,16 -o $R/startup-openmpi.json $F -- $OMPI4
$B startup --ranks 1,2 -o $R/startup-mpich.json $F -- $MPICH2

$B plot $R/p2p-openmpi.json $R/p2p-mpich.json -o $I/bench-p2p.png $F
$B plot $R/p2p-pairs-openmpi.json -o $I/bench-p2p-pairs.png $F
$B plot $R/collectives-openmpi.json $R/collectives-mpich.json -o $I/bench-collectives.png $F
$B plot $R/jitter-openmpi.json -o $I/bench-jitter.png $F
$B plot $R/halo-openmpi.json -o $I/bench-halo.png $F
$B plot $R/triad-openmpi.json -o $I/bench-triad.png $F
$B plot $R/mpimem-openmpi.json $R/mpimem-mpich.json -o $I/bench-mpimem.png $F
$B plot $R/io-openmpi.json -o $I/bench-io.png $F
$B plot $R/startup-openmpi.json $R/startup-mpich.json -o $I/bench-startup.png $F

python3 bench/crosscheck_mpi4py.py --np 2 --max-size 1048576 --iters 1000 --skip 100 --repeats 3 > $R/crosscheck.md
