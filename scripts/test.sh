#!/usr/bin/env bash
# The whole test suite: installs what is missing (so a fresh machine works),
# then runs every test against every MPI mpiscope was built for.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --no-demo
exec python3 -m pytest -n 2 -q "$@"
