#!/usr/bin/env bash
# The whole test suite: installs what is missing (so a fresh machine works),
# then runs every test against every MPI mpiscope was built for, with the
# Python of the virtual environment setup.sh made (.venv), which holds only
# mpiscope's declared dependencies and test extras. Arguments go to pytest
# (both phases: e.g. -m "not privileged", -k NAME, a test file).
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --no-demo || exit $?
py=.venv/bin/python
# Phase 1: the tests that share the machine, one worker more than the CPUs (the
# tests wait on launchers, files and daemons part of the time: on the 2-core CI
# machine 3 workers took 22:34 where 2 took 25:40, every test passing).
# --dist loadgroup: the tests on the virtual cluster (tests/vcluster.py) share one worker.
SUITE_PHASE=shared "$py" -m pytest -n $(( $(nproc) + 1 )) --dist loadgroup -q "$@"
shared=$?
# Phase 2: the tests that judge timings (marked alone, tests/conftest.py), one
# at a time, with nothing else of the suite running. (Beside phase 1, each
# waited for the other worker's running test while that worker idled.)
SUITE_PHASE=alone "$py" -m pytest -q "$@"
alone=$?
# 5: no test selected in that phase (a selection that holds only the other kind).
if [ "$shared" = 5 ] && [ "$alone" != 5 ]; then shared=0; fi
if [ "$alone" = 5 ] && [ "$shared" != 5 ]; then alone=0; fi
[ "$shared" != 0 ] && exit "$shared"
exit "$alone"
