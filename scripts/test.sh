#!/usr/bin/env bash
# The whole test suite: installs what is missing (so a fresh machine works),
# then runs every test against every MPI mpiscope was built for, with the
# Python of the virtual environment setup.sh made (.venv), which holds only
# mpiscope's declared dependencies and test extras.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --no-demo
# --dist loadgroup: the tests on the virtual cluster (tests/vcluster.py) share one worker.
exec .venv/bin/python -m pytest -n 2 --dist loadgroup -q "$@"
