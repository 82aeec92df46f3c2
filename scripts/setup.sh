#!/usr/bin/env bash
# Install everything mpiscope needs on Debian 12 / Ubuntu, build it against
# every MPI found (Open MPI and MPICH here), and run a profiled demo.
#   scripts/setup.sh            install + demo
#   scripts/setup.sh --no-demo  install only (used by scripts/test.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

apt_pkgs=(build-essential cmake gfortran libopenmpi-dev openmpi-bin libmpich-dev mpich)
missing=()
for p in "${apt_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi

# scipy: its MIP solver (HiGHS) checks the corner bound's table in the tests
# and regenerates it (perf/placement/corner_table.py); mpiscope itself does not import it.
python3 -m pip install -q --disable-pip-version-check \
  "scikit-build-core>=0.10" numpy typer rich matplotlib pymetis pytest pytest-xdist scipy
# mpi4py, built against Open MPI, for bench/crosscheck_mpi4py.py (the independent
# timing loop docs/bench.md compares `mpiscope bench` with).
MPICC=mpicc.openmpi python3 -m pip install -q --disable-pip-version-check mpi4py
# --no-build-isolation: use the scikit-build-core installed above; the build
# directory is kept so a second install only rebuilds what changed.
python3 -m pip install -q --disable-pip-version-check --no-build-isolation -Cbuild-dir=build .

if [ "${1:-}" != "--no-demo" ]; then
  scripts/demo.sh
fi
